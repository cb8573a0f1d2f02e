"""GPU runs through MPI: build the mpirun/srun command, run it, merge the per-rank reports."""
