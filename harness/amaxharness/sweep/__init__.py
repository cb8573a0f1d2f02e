"""Design-space sweeps: a grid of protocol knobs, run in parallel, cached, reported and plotted.

grid.py parses the grid (file and command line); plan.py turns points into program runs;
cache.py keeps finished runs; execute.py runs the rest with a progress bar; results.py joins
runs back into points; report.py and plots.py write the outputs; command.py wires the CLI.
"""
