"""Per-rank reports -> one report.

mpirun --output-filename DIR writes DIR/<job>/rank.<r>/stdout; srun --output DIR/rank-%t.out
writes DIR/rank-<r>.out. Each holds that rank's `check --json` object: every process of a
launch prints a full report (all processes run the same schedule and receive every replica's
values, so each compares the whole run), with "process" and "processes" from its launcher. The
merged report's verdict is a hazard when any rank saw one; hazards are deduplicated by kind and
summary and say which ranks reported them; a rank without a readable report, or whose report
names another process or process count, is listed as missing.
"""

from __future__ import annotations

import pathlib
import re

from ..program import extract_json_object, parse_check_report


def report_files(report_dir: pathlib.Path) -> dict[int, pathlib.Path]:
    found = {}
    for path in report_dir.glob("*/rank.*/stdout"):
        match = re.fullmatch(r"rank\.(\d+)", path.parent.name)
        if match:
            found[int(match[1])] = path
    for path in report_dir.glob("rank-*.out"):
        match = re.fullmatch(r"rank-(\d+)\.out", path.name)
        if match:
            found[int(match[1])] = path
    return found


def _stderr_tail(path: pathlib.Path) -> str:
    candidates = [path.with_name("stderr"), path.with_suffix(".err")]
    for err in candidates:
        if err.exists() and err != path:
            lines = err.read_text(errors="replace").strip().splitlines()
            return " | ".join(lines[-3:])
    return ""


def merge(report_dir: pathlib.Path, ranks: int) -> dict:
    files = report_files(report_dir)
    per_rank, missing, hazards = {}, [], {}
    runs, complete, timing = 0, True, {}
    for rank in range(ranks):
        path = files.get(rank)
        if path is None:
            missing.append({"rank": rank, "why": "no output file"})
            continue
        try:
            report = parse_check_report(extract_json_object(path.read_text(errors="replace")))
        except ValueError as err:
            missing.append({"rank": rank, "why": f"unreadable report ({err})",
                            "stderr": _stderr_tail(path)})
            continue
        if report.raw.get("process", rank) != rank or report.raw.get("processes", ranks) != ranks:
            missing.append({"rank": rank, "why": f"the report in its file is process "
                                                 f"{report.raw.get('process')} of "
                                                 f"{report.raw.get('processes')}, not {rank} of {ranks}"})
            continue
        per_rank[str(rank)] = {"verdict": report.verdict, "hazard_kinds": report.hazard_kinds,
                               "runs": report.runs, "file": str(path)}
        runs = max(runs, report.runs)
        complete = complete and report.complete
        if report.timing:
            timing[str(rank)] = report.timing.__dict__
        for h in report.raw.get("hazards", []):
            key = (h.get("kind"), h.get("summary"))
            entry = hazards.setdefault(key, {**h, "reported_by": []})
            entry["reported_by"].append(rank)
    # Each rank replays one schedule: at best a sample ("no_hazard_found"), never a proof.
    verdict = "hazard" if hazards or any(r["verdict"] == "hazard" for r in per_rank.values()) \
        else "incomplete" if missing \
        else "inconclusive" if any(r["verdict"] == "inconclusive" for r in per_rank.values()) \
        else "no_hazard_found"
    return {"verdict": verdict, "ranks": ranks, "reports": per_rank, "missing": missing,
            "hazards": list(hazards.values()), "runs": runs, "complete": complete and not missing,
            "timing": timing or None}
