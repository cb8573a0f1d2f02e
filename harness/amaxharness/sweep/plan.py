"""From grid points to program runs.

Each point needs up to two runs of `amaxcheck check`: a safety run (its strategy explores
schedules and reports hazards) and a timed run (one discrete-event run under the cost model,
which reports the cost figures). A run is identified by its exact argument list and the
program's fingerprint, so points that share a run (e.g. differing only in cost-model knobs,
which the safety run does not see) share its result, and a rerun finds it in the cache.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json

from .grid import COST_PREFIX, PROTOCOL, Grid


@dataclasses.dataclass(frozen=True)
class Job:
    kind: str  # "safety" | "timed"
    args: tuple  # everything after the program's path

    def key(self, program_fingerprint: str) -> str:
        blob = json.dumps({"program": program_fingerprint, "args": list(self.args)})
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    def cost_estimate(self) -> float:
        """A rough relative cost, so the longest runs start first and the ETA settles early."""
        ranks, runs, it = 1.0, 1.0, iter(self.args)
        for arg in it:
            if arg in ("--dp", "--tp", "--pp", "--cp"):
                ranks *= float(next(it, 1))
            elif arg in ("--runs", "--max-schedules"):
                runs = float(next(it, 1))
        return ranks ** 2 * max(runs, 1.0)  # the simulator's cost grows ~quadratically in ranks


@dataclasses.dataclass
class PlannedPoint:
    point: dict
    safety: Job | None
    timed: Job | None


def format_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _knob_args(point: dict, with_cost: bool) -> list[str]:
    args = [format_value(point[PROTOCOL])]
    for key, value in point.items():
        if key == PROTOCOL:
            continue
        if key.startswith(COST_PREFIX):
            if with_cost:
                args += [f"--{key[len(COST_PREFIX):]}", format_value(value)]
            continue
        args += [f"--{key}", format_value(value)]
    return args


def _job(kind: str, point: dict, settings: dict) -> Job | None:
    if settings["skip"]:
        return None
    strategy = settings["strategy"]
    args = ["check"] + _knob_args(point, with_cost=(kind == "timed"))
    args += ["--strategy", strategy, "--seed", str(settings["seed"])]
    if kind == "safety":
        if strategy == "exhaustive":
            if settings["runs"]:
                args += ["--max-schedules", str(settings["runs"])]
        else:
            args += ["--runs", str(settings["runs"])]
        if settings["keep_going"]:
            args.append("--keep-going")
    args += list(settings["args"]) + ["--json"]
    return Job(kind=kind, args=tuple(args))


def _point(grid: Grid, point: dict) -> PlannedPoint:
    timed = _job("timed", point, grid.settings_for(point, "timed"))
    settings = grid.settings_for(point, "safety")
    if settings["strategy"] == "timed" and not settings["skip"]:
        # One timed run also reports hazards (the detectors see its schedule), so where
        # exploring is too costly the timed run doubles as the safety run: the same Job.
        safety = timed or _job("timed", point, grid.settings_for(point, "timed") |
                               {"skip": False})
    else:
        safety = _job("safety", point, settings)
    return PlannedPoint(point=point, safety=safety, timed=timed)


# The program's default machine (`check --help`: --topology); --alpha-us or --bus-gbps select
# the flat α + β·bytes model instead.
DEFAULT_PRESET = "h100-8x-nvlink-ib400"
FLAT_OPTIONS = ("--alpha-us", "--bus-gbps")


def cost_preset(job: Job | None) -> str:
    """The cost-model preset a timed run's figures come from, read from its own arguments (the
    last --topology wins, as on the program's command line); "" without a timed run."""
    if job is None:
        return ""
    args = list(job.args)
    presets = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--topology"]
    if presets:
        return presets[-1]
    return "flat" if any(a in FLAT_OPTIONS for a in args) else DEFAULT_PRESET


def plan(grid: Grid) -> list[PlannedPoint]:
    return [_point(grid, p) for p in grid.points()]


def distinct_jobs(planned: list[PlannedPoint]) -> list[Job]:
    seen, jobs = set(), []
    for p in planned:
        for job in (p.safety, p.timed):
            if job is not None and job not in seen:
                seen.add(job)
                jobs.append(job)
    return jobs
