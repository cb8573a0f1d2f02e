"""PyTorch Flight Recorder import: dumps -> collective agreement report + amaxcheck scenario.

safe_pickle.py loads untrusted pickles without running anything; dump.py validates a dump into
bounded records; align.py aligns each process group's records by collective_seq_id;
agreement.py matches collectives per group, finds the first divergence of each and the
cross-group order inversions (by the backend's rule), and what is undecidable; scenario.py
writes the last few collectives of each group as an explicit amaxcheck scenario; render.py
prints the report, root cause first; command.py wires the CLI.
"""
