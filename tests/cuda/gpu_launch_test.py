"""`check --backend gpu` in a multi-process launch (launch mode 2), on a machine without a GPU.

usage: gpu_launch_test.py AMAXCHECK [AMAXCHECK_MPI]

- plain amaxcheck with an OpenMPI or Slurm rank in its environment exits 2 and points at
  amaxcheck-mpi, before it looks for a device (so this holds with or without a GPU);
- amaxcheck-mpi under a real `mpirun -np 2` initializes MPI, shares the device check over it,
  and every process exits 2 with the driver's reason and its own process number.

The mpirun part is skipped when mpirun or amaxcheck-mpi is missing, or when a CUDA device is
usable here (then the processes would really run). Exit 0 pass, 1 fail.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

LAUNCHER_VARS = ("OMPI_", "SLURM_", "PMI_", "MPI_LOCAL")
CHECK = ["check", "te-sync", "--dp", "2", "--backend", "gpu"]
failures = []


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_VARS)}
    env.update(extra)
    return env


def expect(what, condition, detail):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        print("     " + detail.replace("\n", "\n     "))
        failures.append(what)


def plain_amaxcheck_under_a_launcher_points_at_amaxcheck_mpi(amaxcheck):
    for name, env in (("openmpi", {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"}),
                      ("slurm", {"SLURM_PROCID": "0", "SLURM_NTASKS": "4"})):
        done = subprocess.run([amaxcheck] + CHECK, env=clean_env(**env), capture_output=True,
                              text=True, timeout=120)
        who = "process 1 of 2 by openmpi" if name == "openmpi" else "process 0 of 4 by slurm"
        expect(f"plain amaxcheck as {who} exits 2 and names sim/amaxcheck-mpi",
               done.returncode == 2 and who in done.stderr and "sim/amaxcheck-mpi" in done.stderr,
               f"exit {done.returncode}\n{done.stderr}")


def usable_device_reason(amaxcheck):
    """The driver's reason when no CUDA device is usable here; None when one is."""
    done = subprocess.run([amaxcheck] + CHECK + ["--json"], env=clean_env(), capture_output=True,
                          text=True, timeout=300)
    if done.returncode == 2 and "no usable CUDA device" in done.stderr:
        return done.stderr.strip()
    return None


def every_process_of_an_mpirun_launch_exits_2_without_a_device(amaxcheck_mpi):
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "ranks"
        # Each process reports its own exit status, since mpirun returns only one of them.
        argv = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2",
                "--mca", "orte_abort_on_non_zero_status", "0", "--output-filename", str(out),
                "sh", "-c", '"$@"; echo "exit status $?" >&2', "sh", amaxcheck_mpi] + CHECK + ["--json"]
        env = clean_env(OMPI_MCA_btl="self,tcp", ASAN_OPTIONS="detect_leaks=0")
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        for rank in range(2):
            files = list(out.glob(f"*/rank.{rank}/stderr"))
            stderr = files[0].read_text() if files else "(no stderr file)"
            expect(f"amaxcheck-mpi process {rank} of 2 exits 2 with the driver's reason",
                   f"process {rank} of 2 (openmpi): no usable CUDA device" in stderr
                   and "exit status 2" in stderr,
                   f"mpirun exit {done.returncode}\n{stderr}\n{done.stderr[-2000:]}")


def main():
    amaxcheck = sys.argv[1]
    amaxcheck_mpi = sys.argv[2] if len(sys.argv) > 2 else ""
    plain_amaxcheck_under_a_launcher_points_at_amaxcheck_mpi(amaxcheck)
    if not amaxcheck_mpi or not pathlib.Path(amaxcheck_mpi).is_file():
        print("SKIP mpirun part: amaxcheck-mpi is not built (OpenMPI not found)")
    elif shutil.which("mpirun") is None:
        print("SKIP mpirun part: mpirun is not on PATH")
    elif usable_device_reason(amaxcheck) is None:
        print("SKIP mpirun part: a CUDA device is usable here, so the processes would really run")
    else:
        every_process_of_an_mpirun_launch_exits_2_without_a_device(amaxcheck_mpi)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
