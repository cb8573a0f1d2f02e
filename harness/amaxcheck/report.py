"""The program's `--json` reports as typed data: `check --json` (CheckReport) and `suite --json`
(SuiteReport). The reports' shapes are the CLI contract; every reader of them, the API
(amaxcheck.check / amaxcheck.suite) and the harness commands, goes through this module.

A malformed report raises ValueError naming the field ("report.hazards[0]: missing field 'kind'").
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable, Iterable, Sequence, TypeVar

# The verdicts of `check --json` (scheduler/verdict.h): a sample is not a proof, and a check that
# a cap or budget cut short claims nothing.
VERDICTS = ("hazard", "proven_clean", "no_hazard_found", "inconclusive")
# How a suite case came out against its expectation (`suite --json`).
CASE_STATUSES = ("met", "unmet", "inconclusive")

KindOrder = Callable[[], Sequence[str]]


def _no_order() -> Sequence[str]:
    return ()


def sort_kinds(found: Iterable[str], order: Sequence[str]) -> list[str]:
    """Distinct kinds in `order` (the program's, stable across runs and platforms); a kind
    `order` does not list goes last, by name."""
    found = set(found)
    return [k for k in order if k in found] + sorted(found - set(order))


@dataclasses.dataclass
class Participant:
    rank: int
    lane: str
    op: str
    origin: str
    step: int


@dataclasses.dataclass
class Hazard:
    kind: str
    summary: str
    participants: list[Participant]
    replay: str
    subject: str = ""


@dataclasses.dataclass
class Timing:
    iteration_time_us: float
    exposed_amax_latency_us: float
    amax_queued_us: float
    extra_comm_memory_bytes: int


@dataclasses.dataclass
class CheckReport:
    """`amaxcheck check --json`: the verdict, the hazards and, in timed mode, the cost figures."""

    verdict: str  # one of VERDICTS
    hazards: list[Hazard]
    runs: int
    complete: bool
    strategy: str
    seed: int
    trace: str | None
    timing: Timing | None
    raw: dict[str, Any]
    cut_short: list[str] = dataclasses.field(default_factory=list)  # "step_cap", ...
    seconds: float = 0.0  # the check's own time, as the program measured it
    kind_order: KindOrder = dataclasses.field(default=_no_order, repr=False, compare=False)

    @property
    def hazard_kinds(self) -> list[str]:
        """Distinct kinds, in the contract's order (stable across runs and platforms)."""
        return sort_kinds((h.kind for h in self.hazards), self.kind_order())

    @property
    def replay(self) -> str | None:
        """The command that replays the counterexample; None without a hazard."""
        return next((h.replay for h in self.hazards if h.replay), None)


T = TypeVar("T")


def extract_json_object(text: str) -> dict[str, Any]:
    """The JSON object a program printed; tolerates log lines before it."""
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise ValueError("no JSON object in the output")


def field(doc: dict[str, Any], key: str, kind: type[T], where: str, optional: bool = False) -> Any:
    """doc[key] as `kind` (an int is a float too); ValueError naming `where.key` otherwise."""
    if key not in doc or doc[key] is None:
        if optional:
            return None
        raise ValueError(f"{where}: missing field '{key}'")
    value = doc[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{where}.{key}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def parse_hazards(items: list[Any], where: str) -> list[Hazard]:
    hazards = []
    for i, h in enumerate(items):
        hw = f"{where}[{i}]"
        if not isinstance(h, dict):
            raise ValueError(f"{hw}: expected an object")
        participants = []
        for j, p in enumerate(h.get("participants") or []):
            pw = f"{hw}.participants[{j}]"
            participants.append(Participant(
                rank=field(p, "rank", int, pw), lane=str(p.get("lane", "")),
                op=str(p.get("op", "")), origin=str(p.get("origin", "")),
                step=int(p.get("step", 0))))
        hazards.append(Hazard(kind=field(h, "kind", str, hw), summary=str(h.get("summary", "")),
                              participants=participants, replay=str(h.get("replay", "")),
                              subject=str(h.get("subject", ""))))
    return hazards


def _cut_short(doc: dict[str, Any]) -> list[str]:
    return [str(c.get("cause", "")) for c in doc.get("cut_short") or [] if isinstance(c, dict)]


def parse_check_report(doc: dict[str, Any], kind_order: KindOrder = _no_order) -> CheckReport:
    """Validates and converts one report; ValueError names the field that is wrong.
    `kind_order` gives the program's order of hazard kinds (asked only when needed)."""
    verdict = field(doc, "verdict", str, "report")
    if verdict not in VERDICTS:
        raise ValueError(f"report.verdict: expected one of {', '.join(VERDICTS)}, got {verdict!r}")
    hazards = parse_hazards(field(doc, "hazards", list, "report"), "report.hazards")
    timing = None
    if isinstance(doc.get("timing"), dict):
        t = doc["timing"]
        timing = Timing(
            iteration_time_us=field(t, "iteration_time_us", float, "report.timing"),
            exposed_amax_latency_us=field(t, "exposed_amax_latency_us", float, "report.timing"),
            amax_queued_us=field(t, "amax_queued_us", float, "report.timing"),
            extra_comm_memory_bytes=int(field(t, "extra_comm_memory_bytes", float,
                                              "report.timing")))
    seconds = doc.get("seconds", 0.0)
    return CheckReport(
        verdict=verdict, hazards=hazards, runs=field(doc, "runs", int, "report"),
        complete=bool(doc.get("complete", False)), strategy=str(doc.get("strategy", "")),
        seed=int(doc.get("seed", 0)), trace=doc.get("trace"), timing=timing, raw=doc,
        cut_short=_cut_short(doc),
        seconds=float(seconds) if isinstance(seconds, (int, float)) else 0.0,
        kind_order=kind_order)


@dataclasses.dataclass
class Expected:
    """What a suite case expects: a verdict, and for a hazard its kinds (subject, ops)."""

    verdict: str  # "proven_clean", "no_hazard_found" or "hazard"
    kinds: list[str] = dataclasses.field(default_factory=list)
    subject: str = ""
    ops: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class CaseReport:
    """One case of `amaxcheck suite --json`: its expectation, what the check found, and how
    to reproduce it (`replay` when it has a counterexample, else `rerun`)."""

    name: str
    status: str  # one of CASE_STATUSES
    expected: Expected
    verdict: str  # one of VERDICTS
    got: str      # "proven clean", "HAZARD data_race, deadlock", ...
    reason: str   # why it was not met, or what cut it short; "" when met
    hazards: list[Hazard]
    runs: int
    seconds: float
    trace: str | None
    replay: str
    rerun: str
    cut_short: list[str] = dataclasses.field(default_factory=list)

    @property
    def met(self) -> bool:
        return self.status == "met"

    @property
    def command(self) -> str:
        """The command that reproduces the case: its replay, else the check itself."""
        return self.replay or self.rerun


@dataclasses.dataclass
class SuiteReport:
    """`amaxcheck suite --json`: every case in the suite's order, and the exit code."""

    name: str
    file: str
    cases: list[CaseReport]
    exit_code: int

    @property
    def unmet(self) -> list[CaseReport]:
        return [c for c in self.cases if c.status == "unmet"]

    @property
    def inconclusive(self) -> list[CaseReport]:
        return [c for c in self.cases if c.status == "inconclusive"]

    @property
    def passed(self) -> bool:
        return all(c.met for c in self.cases)


def parse_suite_report(doc: dict[str, Any]) -> SuiteReport:
    """Validates and converts a suite report; ValueError names the field that is wrong."""
    cases = []
    for i, c in enumerate(field(doc, "cases", list, "suite")):
        where = f"suite.cases[{i}]"
        if not isinstance(c, dict):
            raise ValueError(f"{where}: expected an object")
        status = field(c, "status", str, where)
        if status not in CASE_STATUSES:
            raise ValueError(f"{where}.status: expected one of {', '.join(CASE_STATUSES)}, got {status!r}")
        verdict = field(c, "verdict", str, where)
        if verdict not in VERDICTS:
            raise ValueError(f"{where}.verdict: expected one of {', '.join(VERDICTS)}, got {verdict!r}")
        e = field(c, "expected", dict, where)
        expected = Expected(verdict=field(e, "verdict", str, f"{where}.expected"),
                            kinds=[str(k) for k in e.get("kinds") or []],
                            subject=str(e.get("subject", "")),
                            ops=[str(o) for o in e.get("ops") or []])
        cases.append(CaseReport(
            name=field(c, "name", str, where), status=status, expected=expected, verdict=verdict,
            got=str(c.get("got", "")), reason=str(c.get("reason", "")),
            hazards=parse_hazards(field(c, "hazards", list, where), f"{where}.hazards"),
            runs=field(c, "runs", int, where), seconds=field(c, "seconds", float, where),
            trace=c.get("trace"), replay=str(c.get("replay", "")), rerun=str(c.get("rerun", "")),
            cut_short=_cut_short(c)))
    return SuiteReport(name=field(doc, "suite", str, "suite"), file=str(doc.get("file", "")),
                       cases=cases, exit_code=field(doc, "exit_code", int, "suite"))
