"""amaxcheck.check and amaxcheck.suite: run the program and return its typed report.

    result = amaxcheck.check("te-async", knobs={"comm": "separate", "dp": 4}, strategy="exhaustive")
    result.verdict          # "proven_clean"
    result.hazards[0].participants, result.replay, result.seconds, result.wall_s

Exit codes 0, 1 and 4 are verdicts (clean, hazard, inconclusive) and come back as results; 2 (bad
input) raises InputError with the program's message, anything else ProgramError.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping, Sequence

from .errors import InputError, ProgramError
from .program import StrPath, find_program, hazard_kind_names, run_program
from .report import CheckReport, SuiteReport, extract_json_object, parse_check_report, parse_suite_report

VERDICT_EXIT_CODES = (0, 1, 4)
EXIT_CODE_OF_VERDICT = {"hazard": 1, "inconclusive": 4, "proven_clean": 0, "no_hazard_found": 0}


@dataclasses.dataclass
class CheckResult(CheckReport):
    """A check's report, with how it ran."""

    exit_code: int = 0
    argv: list[str] = dataclasses.field(default_factory=list)
    wall_s: float = 0.0


@dataclasses.dataclass
class SuiteResult(SuiteReport):
    """A suite's report, with how it ran."""

    argv: list[str] = dataclasses.field(default_factory=list)
    wall_s: float = 0.0


def knob_args(knobs: Mapping[str, object] | None) -> list[str]:
    """{"comm": "separate", "dp": 4, "one_rank_comms": True} -> --comm separate --dp 4 --one-rank-comms"""
    args: list[str] = []
    for name, value in (knobs or {}).items():
        option = "--" + name.replace("_", "-")
        if value is True:
            args.append(option)
        elif value is False or value is None:
            continue
        elif isinstance(value, (list, tuple)):
            args += [a for v in value for a in (option, str(v))]
        else:
            args += [option, str(value)]
    return args


def _failed(argv: list[str], code: int, stderr: str) -> Exception:
    tail = " | ".join(stderr.strip().splitlines()[-3:])
    if code == 2:
        return InputError(tail or f"bad input: {' '.join(argv)}")
    return ProgramError(f"exit {code}: {' '.join(argv)}" + (f" -- {tail}" if tail else ""))


def check(target: StrPath, *args: str, knobs: Mapping[str, object] | None = None,
          strategy: str | None = None, seed: int | None = None, runs: int | None = None,
          time_budget_s: float | None = None, trace_out: StrPath | None = None,
          junit_xml: StrPath | None = None, program: StrPath | None = None,
          timeout_s: float | None = None, cwd: StrPath | None = None) -> CheckResult:
    """`amaxcheck check TARGET ... --json`: TARGET is a protocol name or a scenario file; `args`
    are further options, `knobs` a protocol's (`knobs={"wait": "after-copy"}` is `--wait
    after-copy`; a scenario file takes none: the program refuses them, InputError)."""
    path = find_program(program)
    options = dict(strategy=strategy, seed=seed, runs=runs, time_budget=time_budget_s,
                   trace_out=trace_out, junit_xml=junit_xml)
    argv = [str(path), "check", str(target), *knob_args(knobs), *args,
            *knob_args({k: v for k, v in options.items() if v is not None}), "--json", "--no-progress"]
    done, wall_s = run_program(argv, timeout_s=timeout_s, cwd=cwd)
    if done.returncode not in VERDICT_EXIT_CODES:
        raise _failed(argv, done.returncode, done.stderr)
    try:
        report = parse_check_report(extract_json_object(done.stdout),
                                    kind_order=lambda: hazard_kind_names(str(path)))
    except ValueError as err:
        raise ProgramError(f"unreadable report ({err}) from {' '.join(argv)}") from None
    # As suite() does: a result whose verdict and exit code disagree would pass one reader and
    # fail another.
    if EXIT_CODE_OF_VERDICT[report.verdict] != done.returncode:
        raise ProgramError(f"the report says {report.verdict} (exit {EXIT_CODE_OF_VERDICT[report.verdict]}), the "
                           f"program exited {done.returncode}: {' '.join(argv)}")
    fields = {f.name: getattr(report, f.name) for f in dataclasses.fields(CheckReport)}
    return CheckResult(**fields, exit_code=done.returncode, argv=argv, wall_s=wall_s)


def suite(file: StrPath, *args: str, jobs: int | None = None, out: StrPath | None = None,
          junit_xml: StrPath | None = None, program: StrPath | None = None,
          timeout_s: float | None = None, cwd: StrPath | None = None) -> SuiteResult:
    """`amaxcheck suite FILE --json`: every case with its status against its expectation."""
    path = find_program(program)
    options = dict(jobs=jobs, out=out, junit_xml=junit_xml)
    argv = [str(path), "suite", str(file), *args,
            *knob_args({k: v for k, v in options.items() if v is not None}), "--json"]
    done, wall_s = run_program(argv, timeout_s=timeout_s, cwd=cwd)
    if done.returncode not in VERDICT_EXIT_CODES:
        raise _failed(argv, done.returncode, done.stderr)
    try:
        report = parse_suite_report(extract_json_object(done.stdout))
    except ValueError as err:
        raise ProgramError(f"unreadable suite report ({err}) from {' '.join(argv)}") from None
    if report.exit_code != done.returncode:
        raise ProgramError(f"the suite report says exit {report.exit_code}, the program exited "
                           f"{done.returncode}: {' '.join(argv)}")
    fields = {f.name: getattr(report, f.name) for f in dataclasses.fields(SuiteReport)}
    return SuiteResult(**fields, argv=argv, wall_s=wall_s)


