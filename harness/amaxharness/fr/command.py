"""`amaxcheck import-fr DUMP...`: check Flight Recorder dumps for collective agreement, and
convert them into a scenario the simulator checks, replays and exports."""

from __future__ import annotations

import argparse
import gc
import json
import os
import pathlib
import sys
import time

from .. import atomic, program
from ..errors import InputError, ProgramError
from . import agreement, dump, render, scenario

HELP = """\
Reads PyTorch Flight Recorder dumps (one per rank; pickle, PyTorch's default, or JSON; version
2.x), aligns each process group's records by collective_seq_id, and reports the first
divergence of each group (operation, size or dtype mismatch, ranks that never joined, state
mismatch), the root cause (the earliest) first, with its ranks' records and call stacks.
Pickles are loaded with a loader that refuses every global, so a dump cannot run code.

It writes OUT/scenario.json (the last --window collectives of each group up to its first
divergence, as an explicit amaxcheck scenario) and, when the program is built, checks it with
the simulator: when it finds a hazard, OUT/trace.jsonl and OUT/timeline.perfetto.json (a
clean check writes no trace). A run first removes these files of an earlier run from OUT.
Point-to-point records (send/recv) are not matched: a job that has any is at best inconclusive.
Exit 0: consistent; 1: a divergence, or a hazard the simulator finds in the converted scenario
(verdict HAZARD); 2: a bad dump or an unwritable --out; 3: an internal error; 4: inconclusive
(a rank has no dump, a group's part is undecidable, the job has point-to-point records, or the
simulation was cut short, and nothing was found).
"""


def add_parser(subparsers):
    p = subparsers.add_parser("import-fr", help="check PyTorch Flight Recorder dumps",
                              description=HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dumps", nargs="+", type=pathlib.Path, metavar="DUMP")
    p.add_argument("--format", choices=("auto", "pickle", "json"), default="auto",
                   help="dump format (default: JSON when the file starts with '{', else pickle)")
    p.add_argument("--kernels", choices=("auto", "serialized", "concurrent"), default="auto",
                   help="collective kernel concurrency: under 'serialized' (NCCL < 2.26) a "
                        "cross-group order inversion is a divergence; 'auto' (the default) "
                        "takes it from the dump's backend: serialized for NCCL groups, "
                        "concurrent for gloo")
    p.add_argument("--out", type=pathlib.Path, default=pathlib.Path("out") / "fr-import",
                   help="output folder (default: out/fr-import)")
    p.add_argument("--frames", type=int, default=8, help="call-stack frames shown per record")
    p.add_argument("--no-simulate", action="store_true",
                   help="only the agreement check; do not run the converted scenario")
    p.add_argument("--window", type=_positive, default=8, metavar="K",
                   help="collectives per group kept in the scenario, up to its first divergence "
                        "(default 8)")
    p.add_argument("--verbose", action="store_true",
                   help="list every group, divergence and record (the JSON always has them)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--timings", action="store_true",
                   help="print each phase's wall time to stderr (for bench/fr/bench_import.py)")
    p.set_defaults(run=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


OUTPUTS = ("scenario.json", "trace.jsonl", "timeline.perfetto.json")  # what a run writes


def prepare_out(out: pathlib.Path, dumps: list[pathlib.Path], simulating: bool):
    """Creates the output folder and removes what an earlier run wrote there of what this run
    writes (OUTPUTS; the trace and its timeline only when `simulating`), so that nothing in it,
    or named by the report, is stale: a clean check writes no trace, and a run that fails leaves
    none of an earlier run's files behind. InputError (exit 2) names the folder when it cannot be
    written, or a dump that is one of the files a run replaces."""
    targets = [out / name for name in (OUTPUTS if simulating else OUTPUTS[:1])]
    resolved = {t.resolve(): t for t in targets}
    for d in dumps:
        if d.resolve() in resolved:
            raise InputError(f"{d}: a dump cannot be one of the output files "
                             f"(--out {out} writes {resolved[d.resolve()].name}); "
                             "choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for t in targets:
            t.unlink(missing_ok=True)
    except OSError as err:
        raise InputError(f"--out {out}: cannot write the output folder there: "
                         f"{err.strerror or err}") from None


def simulate(scenario_path: pathlib.Path, out: pathlib.Path) -> dict:
    """Checks the converted scenario with the simulator; its verdict and the files it wrote.
    The trace is the one the check's report names (a clean check writes none), so a file of an
    earlier run is never presented as this one's."""
    binary = program.program_path()
    done = program.run([binary, "check", scenario_path, "--strategy", "random", "--runs", "1",
                        "--seed", "1", "--trace-out", out / "trace.jsonl", "--json"],
                       timeout_s=600)
    report = program.read_check_report(done)
    trace = report.trace if report.trace and pathlib.Path(report.trace).is_file() else None
    result = {"verdict": report.verdict, "hazard_kinds": report.hazard_kinds,
              "hazards": [h.summary for h in report.hazards], "trace": trace, "perfetto": None}
    if trace:
        perfetto = out / "timeline.perfetto.json"
        exported = program.run([binary, "export", trace, "--perfetto", perfetto],
                               timeout_s=600)
        if exported.returncode == 0 and perfetto.exists():
            result["perfetto"] = str(perfetto)
        else:
            result["export_error"] = program.describe_failure(exported)
    return result


class _Phases:
    """Wall time per phase, printed to stderr with --timings."""

    def __init__(self, enabled: bool):
        self.enabled, self.last = enabled, time.perf_counter()

    def done(self, name: str):
        now = time.perf_counter()
        if self.enabled:
            print(f"import-fr: {name}: {now - self.last:.3f} s", file=sys.stderr)
        self.last = now


def run(args) -> int:
    # The findings hold thousands of small containers and none of them cycles: the cyclic
    # collector would only walk them; reference counting frees everything the import drops.
    gc.disable()
    phases = _Phases(args.timings)
    simulating = not args.no_simulate and bool(os.environ.get("AMAXCHECK_BIN"))
    prepare_out(args.out, args.dumps, simulating)
    scan = dump.load_dumps(args.dumps, args.format, args.kernels, args.window)
    phases.done("read, align and match (fr-scan)")
    report = agreement.check(scan)
    phases.done("findings")
    doc = scenario.build(scan, report, args.kernels,
                         source="import-fr " + " ".join(str(p) for p in args.dumps))
    scenario_path = args.out / "scenario.json"
    try:
        atomic.write_text(scenario_path, json.dumps(doc, indent=1) + "\n")
    except OSError as err:
        raise InputError(f"--out {args.out}: cannot write {scenario_path}: "
                         f"{err.strerror or err}") from None
    phases.done("scenario")
    sim, sim_error = None, None
    if simulating:
        try:
            sim = simulate(scenario_path, args.out)
        except ProgramError as err:
            sim_error = str(err)
    if args.json:
        out = render.document(scan.dumps, report, sim, sim_error)
        out["scenario"] = str(scenario_path)
        out["scenario_window"] = {g: list(w) for g, w in scan.windows.items()}
        out["simulator"] = sim if sim else ({"error": sim_error} if sim_error else None)
        print(json.dumps(out, indent=1))
    else:
        print(render.text(scan.dumps, report, args.frames, args.verbose, scenario=scenario_path,
                          sim=sim, sim_error=sim_error))
    phases.done("simulate and report")
    if sim_error:
        print(f"import-fr: the simulator could not check the converted scenario: {sim_error}",
              file=sys.stderr)
    # The report's verdict and the exit code come from the same place: a hazard the simulator
    # finds is exit 1 and the verdict says so; missing dumps, undecidable groups, unchecked
    # point-to-point records or a simulation a cap cut short are never clean; a simulator that
    # failed is an internal error (3), and the verdict says that too.
    verdict, _ = agreement.outcome(report, sim, sim_error)
    return agreement.EXIT_CODES[verdict]
