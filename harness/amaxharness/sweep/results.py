"""Points joined with their runs' outcomes: one Row per grid point, ready for CSV/markdown/plots."""

from __future__ import annotations

import dataclasses

from ..program import parse_check_report
from .cache import Outcome
from .grid import Grid
from .plan import PlannedPoint, cost_preset

VERDICT_ERROR = "error"
VERDICT_SKIPPED = "skipped"
HUNG_KINDS = ("deadlock", "unjoined_collective")
TIME_UNITS = {"time_budget": " s", "point_timeout": " s"}


@dataclasses.dataclass(frozen=True)
class CutShort:
    """One cause that cut a run short, as the program's --json "cut_short" names it (or the
    sweep's own deadline, cause point_timeout): what stopped it, at what limit, and the option
    that raises the limit."""

    run: str  # "safety" | "timed"
    cause: str
    limit: object
    raise_with: str

    def __str__(self) -> str:
        value = f"{self.limit:g}" if isinstance(self.limit, float) else self.limit
        limit = "" if value is None else f"limit {value}{TIME_UNITS.get(self.cause, '')}"
        raise_with = f"raise with {self.raise_with}" if self.raise_with else ""
        details = ", ".join(d for d in (limit, raise_with) if d)
        return f"{self.run}: {self.cause}" + (f" ({details})" if details else "")


def cut_short_of(report, run: str) -> list[CutShort]:
    """The causes a report names for what was cut short, whatever its verdict (a hazard found
    before a cap still leaves the capped runs unexplored); one "cause not reported" when an
    inconclusive report names none."""
    if report is None:
        return []
    found = [CutShort(run, str(c.get("cause", "")), c.get("limit"), str(c.get("raise_with", "")))
             for c in report.raw.get("cut_short") or [] if isinstance(c, dict)]
    if not found and report.verdict == "inconclusive":
        return [CutShort(run, "cause not reported", None, "")]
    return found


@dataclasses.dataclass
class Row:
    point: dict
    design: str
    verdict: str  # hazard | proven_clean | no_hazard_found | inconclusive | error | skipped
    hazard_kinds: list
    runs: int | None
    complete: bool | None
    strategy: str
    plan: str  # the configured safety run, e.g. "pct ×200" (runs is what it explored)
    iteration_time_us: float | None
    exposed_amax_latency_us: float | None
    amax_queued_us: float | None
    extra_comm_memory_bytes: int | None
    timed_verdict: str
    errors: list
    safety_wall_s: float | None
    timed_wall_s: float | None
    cut_short: list = dataclasses.field(default_factory=list)  # CutShort, safety run's first
    cost_preset: str = ""  # the cost model's preset of the timed run ("" without one)

    # New columns go last, so a reader that indexes columns keeps working.
    CSV_TAIL = ("design", "verdict", "hazard_kinds", "runs", "complete", "strategy", "plan",
                "iteration_time_us", "exposed_amax_latency_us", "amax_queued_us",
                "extra_comm_memory_bytes", "timed_verdict", "error", "safety_wall_s",
                "timed_wall_s", "cut_short")

    @property
    def inconclusive(self) -> bool:
        """A run of this point was cut short: its safety verdict or its cost figures."""
        return self.verdict == "inconclusive" or self.timed_verdict == "inconclusive"

    def csv_values(self, keys: list[str]) -> list:
        def blank(v):
            return "" if v is None else v
        return [self.point[k] for k in keys] + [
            self.design, self.verdict, ";".join(self.hazard_kinds), blank(self.runs),
            "" if self.complete is None else str(self.complete).lower(), self.strategy, self.plan,
            blank(self.iteration_time_us), blank(self.exposed_amax_latency_us),
            blank(self.amax_queued_us), blank(self.extra_comm_memory_bytes), self.timed_verdict,
            " | ".join(self.errors), blank(self.safety_wall_s), blank(self.timed_wall_s),
            "; ".join(map(str, self.cut_short))]


def design_label(grid: Grid, point: dict) -> str:
    return ", ".join(f"{k}={point[k]}" for k in grid.design) or "all points"


def _report(outcome: Outcome | None, errors: list, kind: str):
    if outcome is None:
        return None
    if outcome.report is None:
        errors.append(f"{kind}: {outcome.error}")
        return None
    try:
        return parse_check_report(outcome.report)
    except ValueError as err:  # a cache written by an older program: shown, not trusted
        errors.append(f"{kind}: unreadable report ({err})")
        return None


def _plan_label(job) -> str:
    if job is None:
        return ""
    args = list(job.args)
    strategy = args[args.index("--strategy") + 1]
    for flag in ("--runs", "--max-schedules"):
        if flag in args:
            return f"{strategy} ×{args[args.index(flag) + 1]}"
    return strategy


def _timing(timed, p: PlannedPoint, errors: list):
    """The cost figures of the timed run and its verdict. A run cut short (inconclusive) has no
    figures and is no failure; a hung run's times measure nothing."""
    if timed is None:
        return None, VERDICT_SKIPPED if p.timed is None else VERDICT_ERROR
    if timed.verdict == "inconclusive":
        return None, timed.verdict
    if set(timed.hazard_kinds) & set(HUNG_KINDS):
        return None, "hung"
    if timed.timing is None and timed.raw.get("cut_short"):
        return None, "inconclusive"  # a cap cut the run (after a hazard, say): no figures
    if timed.timing is None:
        errors.append("timed: the report has no timing figures")
    return timed.timing, timed.verdict


def build_rows(grid: Grid, planned: list[PlannedPoint], outcomes: dict) -> list[Row]:
    rows = []
    for p in planned:
        errors: list = []
        s_out = outcomes.get(p.safety) if p.safety else None
        t_out = outcomes.get(p.timed) if p.timed else None
        safety = _report(s_out, errors, "safety")
        timed = _report(t_out, errors, "timed")
        if p.safety is None:
            verdict = VERDICT_SKIPPED
        elif safety is None:
            verdict = VERDICT_ERROR
        else:
            verdict = safety.verdict
        timing, timed_verdict = _timing(timed, p, errors)
        cut_short = cut_short_of(safety, "safety")
        if p.timed != p.safety:  # the timed run doubling as the safety run is listed once
            cut_short += cut_short_of(timed, "timed")
        rows.append(Row(
            point=p.point, design=design_label(grid, p.point), verdict=verdict,
            hazard_kinds=safety.hazard_kinds if safety else [],
            runs=safety.runs if safety else None, complete=safety.complete if safety else None,
            strategy=safety.strategy if safety else "",
            iteration_time_us=timing.iteration_time_us if timing else None,
            exposed_amax_latency_us=timing.exposed_amax_latency_us if timing else None,
            amax_queued_us=timing.amax_queued_us if timing else None,
            extra_comm_memory_bytes=timing.extra_comm_memory_bytes if timing else None,
            timed_verdict=timed_verdict, plan=_plan_label(p.safety),
            errors=errors, safety_wall_s=round(s_out.wall_s, 3) if s_out else None,
            timed_wall_s=round(t_out.wall_s, 3) if t_out else None,
            cut_short=cut_short, cost_preset=cost_preset(p.timed)))
    return rows
