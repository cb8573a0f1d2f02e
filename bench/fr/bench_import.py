#!/usr/bin/env python3
"""Times `import-fr` on synthetic hung-job dumps (bench/fr/make_dumps.py): wall time, CPU time
and peak memory of the import, and its phases (import-fr --timings), per job size.

    python3 bench/fr/bench_import.py [--ranks 64 256 1024] [--records 2000] [--simulate]
                                     [--work out/fr-bench]

The dumps are generated once into WORK/<ranks>/ and reused. Issue 17's goals: 1024 ranks under
10 s and 2 GB, 64 ranks under 1 s. It is a measurement, never a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "fr"))
import make_dumps  # noqa: E402  (needs the path above)


def measure(paths: list, out: pathlib.Path, simulate: bool) -> dict:
    """One import in a child process: its exit code, wall and CPU seconds, peak RSS, phases."""
    argv = [sys.executable, str(ROOT / "harness" / "cli.py"), "import-fr", *map(str, paths),
            "--out", str(out), "--timings"] + ([] if simulate else ["--no-simulate"])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    phases = {}
    for line in done.stderr.splitlines():
        if line.startswith("import-fr: ") and line.endswith(" s"):
            name, _, secs = line[len("import-fr: "):].rpartition(": ")
            phases[name] = float(secs[:-2])
    root = next((line for line in done.stdout.splitlines() if line.startswith("root cause:")),
                "(no root cause)")
    return {"exit": done.returncode, "wall_s": wall,
            "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "peak_mb": after.ru_maxrss / 1024, "phases": phases, "root": root,
            "scenario_mb": (out / "scenario.json").stat().st_size / 2**20
            if (out / "scenario.json").exists() else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--format", choices=("pickle", "json"), default="pickle")
    parser.add_argument("--simulate", action="store_true",
                        help="also run the simulator on the windowed scenario (AMAXCHECK_BIN)")
    parser.add_argument("--work", type=pathlib.Path, default=ROOT / "out" / "fr-bench")
    args = parser.parse_args()
    print("| ranks | dumps (MB) | exit | wall s | cpu s | peak MB | scenario MB | phases (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for ranks in args.ranks:
        folder = args.work / f"{ranks}-{args.records}-{args.format}"
        if not (folder / ".complete").exists():
            make_dumps.write(folder, ranks, args.records, args.format)
            (folder / ".complete").write_text("")
        paths = sorted(p for p in folder.iterdir() if p.name.startswith("nccl_trace_rank_"))
        size = sum(p.stat().st_size for p in paths) / 2**20
        m = measure(paths, args.work / f"out-{ranks}", args.simulate)
        phases = ", ".join(f"{k} {v:.2f}" for k, v in m["phases"].items())
        print(f"| {ranks} | {size:.0f} | {m['exit']} | {m['wall_s']:.1f} | {m['cpu_s']:.1f} | "
              f"{m['peak_mb']:.0f} | {m['scenario_mb'] or 0:.2f} | {phases} |", flush=True)
        print(f"  {m['root']}", file=sys.stderr)
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", file=sys.stderr)


if __name__ == "__main__":
    main()
