"""`amaxcheck sweep`: the command-line entry of design-space exploration."""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys

from .. import atomic, program
from ..errors import (EXIT_BAD_INPUT, EXIT_CLEAN, EXIT_INCONCLUSIVE, EXIT_INTERNAL,
                      EXIT_INTERRUPTED, InputError)
from . import execute, plan, plots, report, results
from .cache import Cache
from .grid import load_grid

SWEEPS = pathlib.Path(__file__).resolve().parents[2] / "sweeps"
DEFAULT_GRID = SWEEPS / "seed_question.json"

HELP = """\
Design-space sweep: runs `amaxcheck check` over a grid of protocol knobs, in parallel, with a
safety run (hazards) and a timed run (cost figures) per point. Results are cached per run in
OUT/cache, so a rerun (or a resumed, interrupted sweep) only runs new points. Writes
OUT/results.csv, OUT/report.md and the plots OUT/exposed_latency.{png,svg} and
OUT/safety_map.{png,svg}.

Without --grid, the command-line key=values are the whole grid (protocol=NAME required); with
neither, the shipped seed question (harness/sweeps/seed_question.json) runs.
"""

EPILOG = """\
examples:
  ./amaxcheck sweep                                   the seed question
  ./amaxcheck sweep --grid my.toml dp=2..64*2         a grid file, DP axis replaced
  ./amaxcheck sweep protocol=te-async comm=shared,separate dp=2,8 runs=50 timed=off

key=values: any program knob (comm, wait, amax-order, dp, tp, pp, modules, microbatches, iters,
kernels, ...) as v1,v2,... or lo..hi (step 1), lo..hi+k, lo..hi*k; cost.NAME=... for cost-model
knobs (timed runs only); strategy=, runs=, seed= override the safety runs; timed=off skips the
timed runs.

exit codes: 0 every point has its verdict (hazards are the sweep's findings, not its failure:
gate CI with `suite`), 4 a point is inconclusive (a cap, the time budget or --point-timeout cut
a run short; stderr and the report name the cause and the option that raises it), 3 a point
failed (2 when every failure is bad input), 130 interrupted.
"""


def add_parser(subparsers):
    p = subparsers.add_parser("sweep", help="design-space sweep over a grid of protocol knobs",
                              description=HELP, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grid", type=pathlib.Path, help="grid file (.json or .toml)")
    p.add_argument("--out", type=pathlib.Path,
                   help="output folder (default: out/sweeps/<grid name>)")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                   help="parallel runs (default: the machine's cores)")
    p.add_argument("--fresh", action="store_true", help="ignore cached results (still saves)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--point-timeout", type=float, metavar="S",
                   help="deadline per run, seconds (default: the grid's point_timeout_s, 600)")
    p.add_argument("assignments", nargs="*", metavar="key=values")
    p.set_defaults(run=run)


class _NoCacheReads(Cache):
    def get(self, job):
        return None


def _summary_lines(grid, rows) -> list[str]:
    lines = []
    groups: dict = {}
    for r in rows:
        groups.setdefault(r.design, []).append(r)
    for design, group in groups.items():
        if grid.x:
            group = sorted(group, key=lambda r: grid.axes[grid.x].index(r.point[grid.x]))
        safety = re.sub(r"\*\*", "", report.safety_summary(grid, group))
        latency = report.span(group, "exposed_amax_latency_us", report.num, grid.x,
                              grid.axes[grid.x] if grid.x else None)
        lines.append(f"  {design}: {safety}; modelled exposed amax latency (µs) {latency}")
    return lines


SHOWN_INCONCLUSIVE = 10


def _inconclusive_lines(grid, rows) -> list[str]:
    """Which points were cut short and by what, so a rerun can raise the right limit."""
    cut = [r for r in rows if r.inconclusive]
    if not cut:
        return []
    lines = [f"sweep: {len(cut)} point(s) inconclusive: a run was cut short (its verdict or its "
             f"cost figures are missing); raise the limit named and rerun:"]
    lines += [f"  {report.point_label(grid, r)}: "
              f"{'; '.join(map(str, r.cut_short)) or 'cause not reported'}"
              for r in cut[:SHOWN_INCONCLUSIVE]]
    if len(cut) > SHOWN_INCONCLUSIVE:
        lines.append(f"  ... and {len(cut) - SHOWN_INCONCLUSIVE} more: see the cut_short column "
                     f"of results.csv")
    return lines


def exit_code(rows) -> int:
    """3 if a point failed (2 when every failure is bad input), else 4 if a point is
    inconclusive, else 0. Hazards are the map's content, not a failure of the sweep: CI gates
    on them with `suite`."""
    failed = [r for r in rows if r.errors]
    if failed:
        bad_input = all("bad input" in e for r in failed for e in r.errors)
        return EXIT_BAD_INPUT if bad_input else EXIT_INTERNAL
    if any(r.inconclusive for r in rows):
        return EXIT_INCONCLUSIVE
    return EXIT_CLEAN


def run(args) -> int:
    if args.jobs < 1:
        raise InputError("--jobs must be at least 1")
    grid_path = args.grid
    if grid_path is None and not args.assignments:
        grid_path = DEFAULT_GRID
    grid = load_grid(grid_path, args.assignments)
    out = args.out or pathlib.Path("out") / "sweeps" / grid.name
    binary = program.program_path()
    fp = program.fingerprint(binary)
    planned = plan.plan(grid)
    jobs = plan.distinct_jobs(planned)
    cache_cls = _NoCacheReads if args.fresh else Cache
    cache = cache_cls(out / "cache", fp)
    timeout = args.point_timeout or grid.point_timeout_s
    print(f"sweep '{grid.name}': {len(planned)} points from {grid.source}; output in {out}",
          file=sys.stderr)
    try:
        outcomes = execute.execute(binary, jobs, cache, args.jobs, timeout,
                                   progress=not args.no_progress)
    except execute.Interrupted as stop:
        print(f"sweep: interrupted; {stop.finished} of {stop.total} runs finished and are cached "
              f"in {out / 'cache'}. Rerun the same command to continue.", file=sys.stderr)
        return EXIT_INTERRUPTED
    rows = results.build_rows(grid, planned, outcomes)
    atomic.write_text(out / "results.csv", report.to_csv(grid, rows))
    plot_names = plots.write_plots(grid, rows, out)
    shown = [n for n in plot_names if n.endswith(".svg")]
    note = f"`amaxcheck` build {fp}"
    atomic.write_text(out / "report.md", report.to_markdown(grid, rows, shown, note))
    print("\n".join([f"sweep '{grid.name}': {len(rows)} points"] + _summary_lines(grid, rows)))
    print(f"wrote {out / 'results.csv'}, {out / 'report.md'}, "
          + ", ".join(str(out / n) for n in plot_names))
    for line in _inconclusive_lines(grid, rows):
        print(line, file=sys.stderr)
    failed = [r for r in rows if r.errors]
    if failed:
        print(f"sweep: {len(failed)} point(s) failed; see the report's 'Failed runs'",
              file=sys.stderr)
    return exit_code(rows)
