#!/usr/bin/env python3
"""Where fresh random schedules lose time to the CPU's branch predictors, function by function.

BM_RandomSchedules draws a new random schedule every run; BM_SameRandomSchedule runs one
random schedule again and again, so the predictors learn it. Both take the same steps of the
same kinds, about as many instructions. This samples each with `perf record -e cpu-clock`
(this VM has no hardware counters, so mispredictions cannot be counted directly), turns each
function's share of the samples into microseconds per run (the share times the benchmark's
CPU time per run), and prints, per function, random minus same: the time a run spends there
because its choices cannot be predicted. The samples land where a mispredicted branch's right
path starts, so the largest rows name the branches to look at (perf annotate).

  bench/unpredictability.py --bench build/bench/bench_scheduler --seconds 5 --top 15

--by-instruction prints rows per instruction (function+offset) instead: the place itself, for
`perf annotate -s FUNCTION` or `objdump -d` (whose start address is the function's, from nm).
Where a mispredicted branch goes, the first instructions of its right path take the samples.
--no-detectors samples the same two benchmarks with no detector attached
(BM_RandomSchedulesNoDetectors, BM_SameRandomScheduleNoDetectors): the engine's part alone.

Needs `perf` (Debian: linux-perf) and a kernel that lets this user sample
(kernel.perf_event_paranoid <= 2, or root).
"""

import argparse
import collections
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BENCHMARKS = ("BM_RandomSchedules", "BM_SameRandomSchedule")


def sample(bench: Path, name: str, seconds: float, out: Path, by_instruction: bool) -> tuple[float, collections.Counter]:
    """CPU microseconds per run of benchmark `name`, and its samples per function (per function
    and offset, `by_instruction`)."""
    data = out / f"{name}.perf"
    report = out / f"{name}.json"
    run = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "10000", "-o", str(data), str(bench),
                          f"--benchmark_filter=^{name}$", f"--benchmark_min_time={seconds}",
                          f"--benchmark_out={report}", "--benchmark_out_format=json"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"unpredictability: perf record of {name} failed:\n{run.stderr[-2000:]}")
    result = [b for b in json.loads(report.read_text())["benchmarks"] if b["name"] == name]
    if not result or result[0]["time_unit"] != "ns":
        sys.exit(f"unpredictability: {bench} reported no {name} in ns")
    # perf prints a symbol only beside its address: each line is "ADDRESS SYMBOL" ("ADDRESS
    # SYMBOL+0xOFFSET" with symoff). Offsets, unlike addresses, are the same in both runs.
    fields = "ip,sym,symoff" if by_instruction else "ip,sym"
    script = subprocess.run(["perf", "script", "-i", str(data), "-F", fields], capture_output=True, text=True, check=True)
    samples = collections.Counter((line.split(None, 1)[1:] or ["[unknown]"])[0].strip()
                                  for line in script.stdout.splitlines() if line.strip())
    return result[0]["cpu_time"] / 1000.0, samples


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", type=Path, default=Path("build/bench/bench_scheduler"), help="the bench_scheduler binary")
    ap.add_argument("--seconds", type=float, default=5.0, help="--benchmark_min_time of each benchmark (default 5)")
    ap.add_argument("--top", type=int, default=15, help="rows to print (default 15)")
    ap.add_argument("--by-instruction", action="store_true", help="a row per instruction (function+offset), not per function")
    ap.add_argument("--no-detectors", action="store_true", help="the two benchmarks without detectors: the engine alone")
    args = ap.parse_args()
    benchmarks = tuple(name + "NoDetectors" for name in BENCHMARKS) if args.no_detectors else BENCHMARKS
    if shutil.which("perf") is None:
        sys.exit("unpredictability: `perf` not found (Debian: apt-get install linux-perf)")
    if not args.bench.is_file():
        sys.exit(f"unpredictability: --bench: no such file: {args.bench}")
    with tempfile.TemporaryDirectory() as tmp:
        per_run = {name: sample(args.bench, name, args.seconds, Path(tmp), args.by_instruction) for name in benchmarks}
    micros = {}
    for name, (run_us, samples) in per_run.items():
        total = sum(samples.values())
        micros[name] = {fn: run_us * count / total for fn, count in samples.items()}
    fresh, same = (micros[name] for name in benchmarks)
    print(f"{benchmarks[0]}: {per_run[benchmarks[0]][0]:.2f} us/run, {benchmarks[1]}: {per_run[benchmarks[1]][0]:.2f} us/run")
    print(f"{'extra us/run':>12} {'random':>8} {'same':>8}  {'instruction' if args.by_instruction else 'function'}")
    rows = sorted(((fresh.get(fn, 0.0) - same.get(fn, 0.0), fn) for fn in set(fresh) | set(same)), reverse=True)
    for extra, fn in rows[:args.top]:
        print(f"{extra:12.3f} {fresh.get(fn, 0.0):8.3f} {same.get(fn, 0.0):8.3f}  {fn[:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
