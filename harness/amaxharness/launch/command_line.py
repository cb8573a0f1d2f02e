"""The launcher command for the GPU backend: mpirun (OpenMPI) or, inside a Slurm allocation,
srun. One process per GPU; each runs `amaxcheck-mpi check --backend gpu ... --json`, finds its
rank in OMPI_COMM_WORLD_RANK / SLURM_PROCID, reaches the other processes over MPI, and prints
its report into a per-rank file, which the harness merges (collect.py).

amaxcheck-mpi is amaxcheck plus MPI, built next to it when meson finds OpenMPI. Plain amaxcheck
never links libmpi (the GPU machines may have none) and refuses a multi-process launch.

A rank that exits non-zero (1 = hazard) must not make the launcher kill the others before they
write their reports, so OpenMPI's abort-on-non-zero-status is off and srun's kill-on-bad-exit
is 0. Run as root (CI, containers), OpenMPI needs --allow-run-as-root; --oversubscribe lets a
single machine start more ranks than it has slots, as nccl-tests setups do.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import shlex

from ..errors import InputError

MPI_PROGRAM = "amaxcheck-mpi"
FORWARDED_PREFIXES = ("NCCL_", "AMAXCHECK_", "CUDA_")
FORWARDED_NAMES = ("LD_LIBRARY_PATH", "PATH")


@dataclasses.dataclass
class LaunchPlan:
    mode: str  # "mpirun" | "srun"
    argv: list
    report_dir: pathlib.Path

    def shell(self) -> str:
        return shlex.join(str(a) for a in self.argv)


def parse_hosts(text: str | None, gpus: int) -> list[str]:
    """`h1,h2` or `h1:4,h2:4` -> ['h1:S', 'h2:S'] (S = slots; split evenly when not given)."""
    if not text:
        return []
    hosts = [h.strip() for h in text.split(",") if h.strip()]
    if not hosts:
        raise InputError("--hosts: expected host[:slots][,host[:slots]...]")
    out = []
    even = math.ceil(gpus / len(hosts))
    for h in hosts:
        name, sep, slots = h.partition(":")
        if not name or (sep and (not slots.isdigit() or int(slots) < 1)):
            raise InputError(f"--hosts: bad entry {h!r}; expected host or host:slots (slots >= 1)")
        out.append(f"{name}:{slots if sep else even}")
    total = sum(int(h.rpartition(":")[2]) for h in out)
    if total < gpus:
        raise InputError(f"--hosts: {total} slot(s) for {gpus} GPUs; give more hosts or slots")
    return out


def check_arguments(args: list[str]) -> list[str]:
    """The program's arguments: `check ...` with the GPU backend and JSON output ensured."""
    args = list(args)
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        raise InputError("launch: give the check arguments after --, e.g. "
                         "`launch --gpus 8 -- te-async --comm separate --dp 8`")
    if args[0] != "check":
        args = ["check"] + args
    if "--backend" not in args:
        args += ["--backend", "gpu"]
    if "--json" not in args:
        args.append("--json")
    return args


def mpi_program(binary) -> pathlib.Path:
    """The program a launch runs: amaxcheck-mpi in the folder of `binary` (amaxcheck)."""
    return pathlib.Path(binary).with_name(MPI_PROGRAM)


def require_mpi_program(binary) -> pathlib.Path:
    """mpi_program(binary), or InputError saying why it is missing and how to get it."""
    path = mpi_program(binary)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise InputError(f"{path} is not built: GPU launches through mpirun/srun run {MPI_PROGRAM}, "
                         f"which meson builds next to {pathlib.Path(binary).name} only when it "
                         "finds MPI (install OpenMPI, e.g. libopenmpi-dev, and rebuild); plain "
                         "amaxcheck runs every rank of a single machine from one process")
    return path


def forwarded_env(environ) -> list[str]:
    """Variables the ranks need from here (NCCL from a wheel needs LD_LIBRARY_PATH), sorted."""
    return sorted(k for k in environ if k in FORWARDED_NAMES or k.startswith(FORWARDED_PREFIXES))


def in_slurm(environ) -> bool:
    return bool(environ.get("SLURM_JOB_ID"))


def build(binary, gpus: int, hosts: str | None, args: list[str], report_dir: pathlib.Path,
          environ=None, is_root: bool | None = None, launcher: str = "auto",
          extra: list[str] | None = None) -> LaunchPlan:
    """The launch of `gpus` processes of amaxcheck-mpi (`binary` is amaxcheck, next to it)."""
    environ = os.environ if environ is None else environ
    if gpus < 1:
        raise InputError("--gpus must be at least 1")
    is_root = (os.geteuid() == 0) if is_root is None else is_root
    program_args = check_arguments(args)
    mode = launcher if launcher != "auto" else ("srun" if in_slurm(environ) else "mpirun")
    host_list = parse_hosts(hosts, gpus)
    extra = list(extra or [])
    if mode == "srun":
        argv = ["srun", f"--ntasks={gpus}", "--gpus-per-task=1", "--kill-on-bad-exit=0",
                f"--output={report_dir}/rank-%t.out", f"--error={report_dir}/rank-%t.err"]
        if host_list:
            argv.append("--nodelist=" + ",".join(h.rpartition(":")[0] for h in host_list))
        argv += extra + [str(mpi_program(binary))] + program_args
    elif mode == "mpirun":
        argv = ["mpirun", "-np", str(gpus)]
        if is_root:
            argv += ["--allow-run-as-root", "--oversubscribe"]
        if host_list:
            argv += ["--host", ",".join(host_list)]
        argv += ["--mca", "orte_abort_on_non_zero_status", "0",
                 "--output-filename", str(report_dir)]
        for name in forwarded_env(environ):
            argv += ["-x", name]
        argv += extra + [str(mpi_program(binary))] + program_args
    else:
        raise InputError(f"--launcher: expected auto, mpirun or srun, got {launcher!r}")
    return LaunchPlan(mode=mode, argv=argv, report_dir=report_dir)
