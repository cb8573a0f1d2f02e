"""amaxharness: the Python orchestration around the `amaxcheck` C++ program.

Four commands, one subpackage or module each:
  sweep      design-space exploration over a grid of protocol knobs (amaxharness.sweep)
  import-fr  PyTorch Flight Recorder dumps -> agreement report + amaxcheck scenario (amaxharness.fr)
  repro      replay, shrink and export a failing trace (amaxharness.repro)
  launch     the GPU backend under mpirun/srun, per-rank reports merged (amaxharness.launch)

The heavy work (simulation, detection, scheduling) stays in the C++ program, reached through
amaxharness.program; its --json reports are read by the amaxcheck package (amaxcheck.report), the
same readers its Python API uses. Exit codes follow the program's: 0 clean, 1 hazard, 2 bad input, 3 internal.
"""
