#!/usr/bin/env python3
"""Instructions per sampled run, counted by callgrind: the steady per-run cost of one build.

Runs `amaxcheck check te-sync --dp 2 --modules 2 --iters 1 --microbatches 1 --jobs 1` (the
scenario of bench_scheduler's BM_RandomSchedules / BM_PctSchedules) under
`valgrind --tool=callgrind` with 1 run and with N runs of each strategy, and prints
(count at N - count at 1) / (N - 1): set-up, the first run and the exit cancel out. Instruction
counts do not depend on the machine's load, so two builds compare in any order.

  bench/instructions_per_run.py --bin build/sim/amaxcheck --bin OLD/sim/amaxcheck --runs 2000
"""

import argparse
import re
import subprocess
import sys


def instructions(binary: str, strategy: str, runs: int) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", binary, "check", "te-sync", "--dp", "2",
           "--modules", "2", "--iters", "1", "--microbatches", "1", "--strategy", strategy, "--runs", str(runs),
           "--jobs", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if not found:
        sys.exit(f"instructions_per_run: no callgrind count from {' '.join(cmd)}:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", required=True, help="an amaxcheck binary (repeatable)")
    ap.add_argument("--strategy", action="append", help="random, pct, ... (repeatable; default random and pct)")
    ap.add_argument("--runs", type=int, default=2000, help="the larger run count (default 2000)")
    args = ap.parse_args()
    if args.runs < 2:
        ap.error("--runs: expected at least 2")
    for strategy in args.strategy or ["random", "pct"]:
        for binary in args.bin:
            one, many = instructions(binary, strategy, 1), instructions(binary, strategy, args.runs)
            print(f"{strategy:8} {(many - one) / (args.runs - 1) / 1000:8.1f}k instructions/run  {binary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
