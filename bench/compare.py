#!/usr/bin/env python3
"""Old build against new build on Google Benchmark binaries, interleaved.

Runs each binary's benchmarks alternately (old, new, old, new, ...) for --rounds rounds, so
both see the same machine load, and prints per benchmark the median CPU time of each build and
the ratio new/old (below 1: the new build is faster). Counters named ".../s" (rates) are
compared too, as new/old (above 1: faster).

  bench/compare.py --old OLD_BUILD --new build --bench bench_scheduler --bench bench_engine \
      --filter 'ExhaustiveLitmus|RandomSchedules' --rounds 5
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path


def run(binary: Path, filter_: str, min_time: float) -> dict:
    out = subprocess.run(
        [str(binary), f"--benchmark_filter={filter_}", f"--benchmark_min_time={min_time}", "--benchmark_format=json"],
        check=True, capture_output=True, text=True).stdout
    results = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        rates = {k: v for k, v in b.items() if k.endswith("/s") and isinstance(v, (int, float))}
        results[b["name"]] = {"cpu": b["cpu_time"], "unit": b["time_unit"], **rates}
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True, type=Path, help="the old build directory")
    ap.add_argument("--new", required=True, type=Path, help="the new build directory")
    ap.add_argument("--bench", action="append", required=True, help="benchmark binary under bench/ (repeatable)")
    ap.add_argument("--filter", default=".", help="--benchmark_filter for every binary")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--json", type=Path, help="also write every sample here")
    args = ap.parse_args()

    samples: dict = {"old": {}, "new": {}}
    for _ in range(args.rounds):
        for bench in args.bench:
            for side in ("old", "new"):
                build = args.old if side == "old" else args.new
                for name, r in run(build / "bench" / bench, args.filter, args.min_time).items():
                    samples[side].setdefault(name, []).append(r)

    print(f"{'benchmark':<44} {'old cpu':>12} {'new cpu':>12} {'new/old':>8}   rates new/old")
    for name, olds in samples["old"].items():
        news = samples["new"].get(name)
        if not news:
            continue
        o = statistics.median(r["cpu"] for r in olds)
        n = statistics.median(r["cpu"] for r in news)
        rates = []
        for key in olds[0]:
            if key.endswith("/s") and key in news[0]:
                ro = statistics.median(r[key] for r in olds)
                rn = statistics.median(r[key] for r in news)
                rates.append(f"{key} {ro:.4g} -> {rn:.4g} ({rn / ro:.2f})")
        unit = olds[0]["unit"]
        print(f"{name:<44} {o:>9.4g} {unit:<2} {n:>9.4g} {unit:<2} {n / o:>8.2f}   {'; '.join(rates)}")
    if args.json:
        args.json.write_text(json.dumps(samples, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
