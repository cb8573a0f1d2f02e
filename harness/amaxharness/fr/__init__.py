"""PyTorch Flight Recorder import: dumps -> collective agreement report + amaxcheck scenario.

safe_pickle.py loads untrusted pickles without running anything; dump.py validates a dump into
records; align.py trims the ring buffers to a common window; agreement.py matches collectives
per process group and finds the first divergence of each; scenario.py writes the dumps as an
explicit amaxcheck scenario; render.py prints the report; command.py wires the CLI.
"""
