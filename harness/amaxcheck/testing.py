"""Assertions for a test suite (pytest or any other): each turns a result into a pass, or an
AssertionError whose message is the hazard summary with its participants and the command that
replays it.

    from amaxcheck.testing import assert_clean, assert_hazard, assert_suite_met

    def test_our_protocol_is_race_free():
        assert_clean(amaxcheck.check("ci/our_protocol.json", strategy="exhaustive"), proven=True)
"""

from __future__ import annotations

from .report import CaseReport, CheckReport, Hazard, SuiteReport

_WORDS = {"hazard": "HAZARD", "proven_clean": "proven clean", "no_hazard_found": "no hazard found",
          "inconclusive": "inconclusive"}


def describe_hazard(hazard: Hazard) -> str:
    """"data_race: RAW race on ...", one line per participant, then the replay command."""
    lines = [f"{hazard.kind}: {hazard.summary}"]
    lines += [f"  rank {p.rank} {p.lane}: {p.op} [{p.origin}] (step {p.step})" for p in hazard.participants]
    if hazard.replay:
        lines.append(f"  replay: {hazard.replay}")
    return "\n".join(lines)


def describe_check(result: CheckReport) -> str:
    """The verdict, what cut it short, and the first hazard of each kind in full."""
    head = _WORDS.get(result.verdict, result.verdict)
    if result.hazards:
        head += f" ({len(result.hazards)} distinct: {', '.join(result.hazard_kinds)})"
    head += f" after {result.runs} run(s) of {result.strategy or 'the check'}"
    lines = [head]
    if result.cut_short:
        lines.append("cut short by: " + ", ".join(result.cut_short))
    seen: set[str] = set()
    for h in result.hazards:
        if h.kind not in seen:
            seen.add(h.kind)
            lines.append(describe_hazard(h))
    return "\n".join(lines)


def assert_verdict(result: CheckReport, *verdicts: str) -> None:
    """Passes when the verdict is one of `verdicts` ("proven_clean", "no_hazard_found", ...)."""
    __tracebackhide__ = True
    if result.verdict not in verdicts:
        wanted = " or ".join(_WORDS.get(v, v) for v in verdicts)
        raise AssertionError(f"expected {wanted}, got {describe_check(result)}")


def assert_clean(result: CheckReport, proven: bool = False) -> None:
    """No hazard and nothing cut short; with `proven`, only a complete exhaustive search passes."""
    __tracebackhide__ = True
    assert_verdict(result, *(("proven_clean",) if proven else ("proven_clean", "no_hazard_found")))


def assert_hazard(result: CheckReport, *kinds: str) -> None:
    """A hazard of every one of `kinds` was found (any hazard when none are given)."""
    __tracebackhide__ = True
    assert_verdict(result, "hazard")
    missing = [k for k in kinds if k not in result.hazard_kinds and k not in {h.kind for h in result.hazards}]
    if missing:
        raise AssertionError(f"expected {', '.join(missing)}, got {describe_check(result)}")


def describe_case(case: CaseReport) -> str:
    lines = [f"{case.name}: expected {case.expected.verdict}"
             + (f" ({', '.join(case.expected.kinds)})" if case.expected.kinds else "")
             + f", got {case.got}", f"  {case.reason}"]
    lines += ["  " + line for h in case.hazards[:1] for line in describe_hazard(h).splitlines()]
    lines.append(f"  {'replay' if case.replay else 'rerun'}: {case.command}")
    return "\n".join(lines)


def assert_suite_met(result: SuiteReport) -> None:
    """Every case met its expectation; the message lists each that did not, with its command."""
    __tracebackhide__ = True
    bad = [c for c in result.cases if not c.met]
    if bad:
        raise AssertionError(f"{len(bad)} of {len(result.cases)} case(s) of suite {result.name!r} "
                             "did not meet their expectation:\n" + "\n".join(describe_case(c) for c in bad))
