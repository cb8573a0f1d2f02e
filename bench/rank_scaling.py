#!/usr/bin/env python3
"""Rank scaling: one iteration of a protocol point at growing world sizes, one random run each.

For every binary given (an old and a new build, say) and every DP size, runs

    amaxcheck check PROTOCOL --dp DP --tp TP --iters 1 --strategy random --runs 1 --json

under /usr/bin/time -v, interleaving the binaries size by size and repeat by repeat (the machine
is shared: alternating keeps both builds under the same load), and prints per point the wall
time, the CPU time (user + sys, less sensitive to the load than wall time), the peak resident
memory, the exploration's steps and its `seconds`; then per binary and protocol the growth
exponent of CPU time and of peak memory, fitted by least squares on log-log over the sizes.
Each figure is the median of --repeat runs. The verdict and steps of the binaries must agree
(the script says so when they do not).

  bench/rank_scaling.py --bin build/sim/amaxcheck
  bench/rank_scaling.py --bin old=/tmp/base/sim/amaxcheck --bin new=build/sim/amaxcheck \
      --protocol te-sync --protocol te-async --dp 256 --dp 1024 --tp 4 --repeat 1
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys


def run_point(binary: str, protocol: str, dp: int, tp: int, max_memory: str) -> dict:
    cmd = ["/usr/bin/time", "-v", binary, "check", protocol, "--dp", str(dp), "--tp", str(tp), "--iters", "1",
           "--strategy", "random", "--runs", "1", "--json", "--max-memory", max_memory]
    proc = subprocess.run(["nice", *cmd], text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")

    def field(name: str) -> str:
        m = re.search(rf"^\s*{re.escape(name)}: (.*)$", proc.stderr, re.M)
        if not m:
            sys.exit(f"/usr/bin/time -v printed no '{name}'")
        return m.group(1).strip()

    wall = 0.0
    for part in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"):
        wall = wall * 60 + float(part)
    report = json.loads(proc.stdout)
    return {
        "wall_s": wall,
        "cpu_s": float(field("User time (seconds)")) + float(field("System time (seconds)")),
        "rss_mib": int(field("Maximum resident set size (kbytes)")) / 1024,
        "explore_s": report["seconds"],
        "steps": report["steps"],
        "verdict": report["verdict"],
    }


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log y over log x: the growth exponent."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-9)) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den else float("nan")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", action="append", required=True, help="[NAME=]path of an amaxcheck binary (repeatable)")
    p.add_argument("--protocol", action="append", help="protocol (repeatable; default te-sync and te-async)")
    p.add_argument("--dp", action="append", type=int, help="DP sizes (repeatable; default 64 256 1024)")
    p.add_argument("--tp", type=int, default=4)
    p.add_argument("--repeat", type=int, default=1, help="runs per point; the median is kept")
    p.add_argument("--max-memory", default="0", help="passed to check (default 0: no limit)")
    args = p.parse_args()
    bins = [(b.split("=", 1) if "=" in b else (b, b)) for b in args.bin]
    protocols = args.protocol or ["te-sync", "te-async"]
    dps = args.dp or [64, 256, 1024]

    results: dict[tuple[str, str, int], list[dict]] = {}
    for protocol in protocols:
        for dp in dps:
            for _ in range(args.repeat):
                for name, path in bins:
                    results.setdefault((name, protocol, dp), []).append(
                        run_point(path, protocol, dp, args.tp, args.max_memory))

    print(f"{'binary':>10} {'protocol':>9} {'ranks':>6} {'wall s':>8} {'cpu s':>8} {'explore s':>9} "
          f"{'peak MiB':>9} {'steps':>8} verdict")
    medians: dict[tuple[str, str, int], dict] = {}
    for (name, protocol, dp), runs in results.items():
        m = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "cpu_s", "rss_mib", "explore_s")}
        m["steps"], m["verdict"] = runs[0]["steps"], runs[0]["verdict"]
        medians[(name, protocol, dp)] = m
        print(f"{name:>10} {protocol:>9} {dp * args.tp:>6} {m['wall_s']:>8.2f} {m['cpu_s']:>8.2f} "
              f"{m['explore_s']:>9.2f} {m['rss_mib']:>9.0f} {m['steps']:>8} {m['verdict']}")
    status = 0
    for protocol in protocols:
        for dp in dps:
            seen = {(medians[(n, protocol, dp)]["steps"], medians[(n, protocol, dp)]["verdict"]) for n, _ in bins}
            if len(seen) > 1:
                print(f"MISMATCH: {protocol} dp {dp}: the binaries disagree on steps or verdict: {seen}")
                status = 1
    if len(dps) > 1:
        print("\ngrowth exponents (fit over ranks):")
        for name, _ in bins:
            for protocol in protocols:
                ranks = [dp * args.tp for dp in dps]
                cpu = [medians[(name, protocol, dp)]["cpu_s"] for dp in dps]
                rss = [medians[(name, protocol, dp)]["rss_mib"] for dp in dps]
                print(f"{name:>10} {protocol:>9}: cpu ~ R^{slope(ranks, cpu):.2f}, peak memory ~ R^{slope(ranks, rss):.2f}")
    return status


if __name__ == "__main__":
    sys.exit(main())
