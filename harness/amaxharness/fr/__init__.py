"""PyTorch Flight Recorder import: dumps -> collective agreement report + amaxcheck scenario.

Reading the untrusted dumps (a restricted pickle reader, JSON, every bound) is the program's
C++ reader, `amaxcheck fr-scan` (src/fr/); dump.py turns its output into typed records;
align.py aligns each process group's records by collective_seq_id; agreement.py matches collectives per group, finds the first divergence of each and the
cross-group order inversions (by the backend's rule), and what is undecidable; scenario.py
writes the last few collectives of each group as an explicit amaxcheck scenario; render.py
prints the report, root cause first; command.py wires the CLI.
"""
