"""PyTorch Flight Recorder import: dumps -> collective agreement report + amaxcheck scenario.

Everything that scales with the job is the program's, `amaxcheck fr-scan` (src/fr/): reading
the untrusted dumps (a restricted pickle reader, JSON, every bound), aligning each process
group's records by collective_seq_id, matching collectives per group (the first divergence of
each, what is undecidable), the cross-group order inversions (by the backend's rule) and the
scenario's window. dump.py runs it and reads its findings and the few records they need;
agreement.py holds the findings as the report's values; scenario.py writes the window as an
explicit amaxcheck scenario; render.py prints the report, root cause first; command.py wires
the CLI.
"""
