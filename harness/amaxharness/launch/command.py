"""`amaxcheck launch --gpus N [--hosts ...] [--dry-run] -- <check args>`."""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import sys

from .. import atomic, program
from ..errors import EXIT_CLEAN, EXIT_HAZARD, EXIT_INTERNAL
from . import collect, command_line

HELP = """\
Runs the GPU backend on N GPUs, one process per GPU: through srun inside a Slurm allocation
(SLURM_JOB_ID set), else through OpenMPI's mpirun. Each process runs amaxcheck-mpi (built next
to amaxcheck when meson finds MPI). Prints the command before running it, then
merges the per-rank reports into OUT/launch-report.json. Exit 0 clean, 1 hazard, 3 when a rank
gave no report.
"""


def add_parser(subparsers):
    p = subparsers.add_parser("launch", help="run the GPU backend through mpirun/srun",
                              description=HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              usage="%(prog)s --gpus N [--hosts H[:S],...] [--dry-run] -- "
                                    "<check arguments>")
    p.add_argument("--gpus", type=int, required=True, help="number of GPUs = ranks")
    p.add_argument("--hosts", help="host[:slots],... (mpirun --host / srun --nodelist)")
    p.add_argument("--dry-run", action="store_true", help="print the command, run nothing")
    p.add_argument("--launcher", choices=("auto", "mpirun", "srun"), default="auto")
    p.add_argument("--launcher-arg", action="append", default=[], metavar="ARG",
                   help="extra argument for mpirun/srun (repeatable)")
    p.add_argument("--out", type=pathlib.Path, default=pathlib.Path("out") / "launch",
                   help="output folder for per-rank reports (default: out/launch)")
    p.add_argument("--timeout", type=float, default=3600, help="seconds for the whole run")
    p.add_argument("--json", action="store_true", help="print the merged report as JSON")
    p.add_argument("check_args", nargs=argparse.REMAINDER)
    p.set_defaults(run=run)


def run(args) -> int:
    binary = program.program_path() if not args.dry_run else \
        _binary_or_placeholder()
    if not args.dry_run:
        command_line.require_mpi_program(binary)
    report_dir = args.out / "ranks"
    plan = command_line.build(binary, args.gpus, args.hosts, args.check_args, report_dir,
                              launcher=args.launcher, extra=args.launcher_arg)
    print(f"launch: {plan.shell()}", file=sys.stderr)
    if args.dry_run:
        print(plan.shell())
        return EXIT_CLEAN
    if report_dir.exists():  # reports from an earlier launch must not be merged into this one
        shutil.rmtree(report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    done = program.run(plan.argv, timeout_s=args.timeout)
    merged = collect.merge(report_dir, args.gpus)
    merged["command"] = plan.shell()
    merged["launcher_exit"] = done.returncode
    atomic.write_text(args.out / "launch-report.json", json.dumps(merged, indent=1) + "\n")
    if args.json:
        print(json.dumps(merged, indent=1))
    else:
        print(f"launch: {merged['verdict']} over {args.gpus} rank(s); "
              f"{len(merged['reports'])} report(s) in {report_dir}")
        for h in merged["hazards"]:
            print(f"  {h.get('kind')}: {h.get('summary')} (ranks "
                  f"{', '.join(map(str, h['reported_by']))})")
        for m in merged["missing"]:
            print(f"  rank {m['rank']}: no report ({m['why']}) {m.get('stderr', '')}".rstrip())
        print(f"merged report: {args.out / 'launch-report.json'}")
    if merged["missing"]:
        if done.stderr.strip():
            print(done.stderr.strip()[-2000:], file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_HAZARD if merged["verdict"] == "hazard" else EXIT_CLEAN


def _binary_or_placeholder():
    try:
        return program.program_path()
    except Exception:  # noqa: BLE001 - a dry run only shows the command
        return pathlib.Path("build/sim/amaxcheck")
