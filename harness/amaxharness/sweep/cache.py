"""Finished runs, one small JSON file per run in OUT/cache/, written atomically as each ends.

Only deterministic outcomes are kept: a report (exit 0, 1 or 4) and bad input (exit 2), which the
same program would repeat. Crashes, internal errors, and runs cut short by time (the program's
--time-budget or the sweep's deadline, which depend on the machine's load) are not cached, so a
rerun tries them again. A corrupt or foreign cache file is ignored (and recomputed), never trusted.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib

from .. import atomic
from .plan import Job

CACHE_VERSION = 1

# Causes of a cut-short run that depend on the clock, not on the arguments.
TIME_CAUSES = ("time_budget", "point_timeout")


@dataclasses.dataclass
class Outcome:
    """What one run of the program gave: its report, or why there is none."""

    returncode: int | None
    report: dict | None  # the raw --json object
    error: str | None
    wall_s: float
    cached: bool = False

    @property
    def cacheable(self) -> bool:
        if self.report is None:
            return self.returncode == 2
        return not any(c.get("cause") in TIME_CAUSES for c in self.report.get("cut_short") or []
                       if isinstance(c, dict))


class Cache:
    def __init__(self, folder: pathlib.Path, program_fingerprint: str):
        self.folder = folder
        self.fingerprint = program_fingerprint

    def _path(self, job: Job) -> pathlib.Path:
        return self.folder / f"{job.key(self.fingerprint)}.json"

    def get(self, job: Job) -> Outcome | None:
        path = self._path(job)
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(doc, dict) or doc.get("version") != CACHE_VERSION or \
                doc.get("args") != list(job.args) or doc.get("program") != self.fingerprint:
            return None
        return Outcome(returncode=doc.get("returncode"), report=doc.get("report"),
                       error=doc.get("error"), wall_s=float(doc.get("wall_s", 0.0)), cached=True)

    def put(self, job: Job, outcome: Outcome):
        if not outcome.cacheable:
            return
        doc = {"version": CACHE_VERSION, "program": self.fingerprint, "kind": job.kind,
               "args": list(job.args), "returncode": outcome.returncode,
               "report": outcome.report, "error": outcome.error,
               "wall_s": round(outcome.wall_s, 3)}
        atomic.write_text(self._path(job), json.dumps(doc, indent=1, sort_keys=True) + "\n")
