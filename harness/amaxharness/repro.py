"""`amaxcheck repro TRACE`: one command from a failing trace to a minimal, viewable reproducer.

1. replay the trace (it must reproduce: the program checks every step against the recording);
2. shrink it to a smaller trace that still shows the same hazard kind;
3. export the shrunk trace as a Perfetto timeline.
Prints a summary and the three paths: the replayed trace, the shrunk trace, the Perfetto file.
"""

from __future__ import annotations

import argparse
import json
import pathlib

from . import program
from .errors import EXIT_CLEAN, EXIT_HAZARD, EXIT_INCONCLUSIVE, InputError, ProgramError

HELP = __doc__.split("\n", 1)[1]
SHOWN_HAZARDS = 5


def add_parser(subparsers):
    p = subparsers.add_parser("repro", help="replay, shrink and export a failing trace",
                              description=HELP,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace", type=pathlib.Path, metavar="TRACE")
    p.add_argument("--out", type=pathlib.Path,
                   help="output folder (default: out/repro/<trace name>)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per step")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(run=run)


def count_steps(trace: pathlib.Path) -> int:
    """Recorded actions in a JSON Lines trace: its "type": "step" lines (traces/FORMAT.md)."""
    steps = 0
    with open(trace, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if isinstance(doc, dict) and doc.get("type", "step") == "step" and "step" in doc:
                steps += 1
    return steps


def shrink_header(trace: pathlib.Path) -> tuple[str | None, list[int] | None]:
    """What `amaxcheck shrink` wrote in the shrunk trace's header: the hazard identity it kept
    and the original rank of each shrunk rank (traces/FORMAT.md, "A shrunk trace's mapping");
    (None, None) when the header has neither."""
    try:
        with open(trace, encoding="utf-8") as f:
            header = json.loads(f.readline())
    except (OSError, ValueError):
        return None, None
    parameters = header.get("parameters") if isinstance(header, dict) else None
    if not isinstance(parameters, dict):
        return None, None
    mapping = parameters.get("mapping")
    ranks = None
    if isinstance(mapping, dict) and isinstance(mapping.get("ranks"), list):
        ranks = [r.get("original_rank") for r in mapping["ranks"] if isinstance(r, dict)]
    hazard = parameters.get("hazard")
    return (hazard if isinstance(hazard, str) else None), ranks


def _replay(binary, trace, timeout) -> program.ReplayReport:
    done = program.run([binary, "replay", trace, "--json"], timeout_s=timeout)
    if done.returncode == 2:
        tail = done.stderr.strip().splitlines()[-1:] or ["(no message)"]
        raise InputError(f"{trace}: the replay rejected the trace: {tail[0]}")
    return program.read_replay_report(done)


def run(args) -> int:
    trace: pathlib.Path = args.trace
    if not trace.is_file():
        raise InputError(f"{trace}: no such trace file")
    binary = program.program_path()
    stem = trace.name.removesuffix(".jsonl")
    out = args.out or pathlib.Path("out") / "repro" / stem
    out.mkdir(parents=True, exist_ok=True)
    shrunk = out / f"{stem}.shrunk.jsonl"
    perfetto = out / f"{stem}.shrunk.perfetto.json"

    replayed = _replay(binary, trace, args.timeout)
    summary = {"trace": str(trace), "verdict": replayed.verdict,
               "hazard_kinds": replayed.hazard_kinds,
               "hazards": [h.summary for h in replayed.hazards],
               "steps": count_steps(trace), "shrunk": None, "shrunk_steps": None,
               "perfetto": None}
    if replayed.verdict == "hazard":
        done = program.run([binary, "shrink", trace, "-o", shrunk], timeout_s=args.timeout)
        if done.returncode not in (0, 1) or not shrunk.is_file():
            raise ProgramError(f"shrink failed: {program.describe_failure(done)}")
        check = _replay(binary, shrunk, args.timeout)
        if check.verdict != "hazard":
            raise ProgramError(f"the shrunk trace {shrunk} no longer shows the hazard")
        same_bug, ranks = shrink_header(shrunk)
        summary.update(shrunk=str(shrunk), shrunk_steps=count_steps(shrunk),
                       shrunk_hazard_kinds=check.hazard_kinds, same_bug=same_bug,
                       shrunk_rank_origins=ranks)
        source = shrunk
    else:
        source = trace  # nothing to shrink; still make it viewable
        perfetto = out / f"{stem}.perfetto.json"
    done = program.run([binary, "export", source, "--perfetto", perfetto], timeout_s=args.timeout)
    if done.returncode != 0 or not perfetto.is_file():
        raise ProgramError(f"export failed: {program.describe_failure(done)}")
    summary["perfetto"] = str(perfetto)

    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        kinds = ", ".join(summary["hazard_kinds"]) or "no hazard"
        print(f"repro: {trace} replays: {replayed.verdict} ({kinds})")
        shown = summary["hazards"][:SHOWN_HAZARDS]
        for line in shown:
            print(f"  {line}")
        if len(summary["hazards"]) > len(shown):
            print(f"  ... and {len(summary['hazards']) - len(shown)} more (--json lists them all)")
        print(f"  replayed trace: {trace} ({summary['steps']} steps)")
        if summary["shrunk"]:
            before, after = summary["steps"], summary["shrunk_steps"]
            print(f"  shrunk trace:   {shrunk} ({after} steps, was {before}; "
                  f"replay: amaxcheck replay {shrunk})")
            if summary.get("same_bug"):
                print(f"  same bug:       {summary['same_bug']}")
            if summary.get("shrunk_rank_origins"):
                ranks = ", ".join(f"{i} = original {r}" for i, r in enumerate(summary["shrunk_rank_origins"]))
                print(f"  shrunk ranks:   {ranks} (`amaxcheck shrink` prints every op's origin)")
        else:
            print("  shrunk trace:   (none: the trace shows no hazard)")
        print(f"  perfetto:       {perfetto} (open in ui.perfetto.dev or chrome://tracing)")
    if replayed.verdict == "hazard":
        return EXIT_HAZARD
    return EXIT_INCONCLUSIVE if replayed.verdict == "inconclusive" else EXIT_CLEAN
