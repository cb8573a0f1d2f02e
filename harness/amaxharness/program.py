"""The amaxcheck C++ program, as the harness drives it.

Where it is (AMAXCHECK_BIN, set by the launcher), how to run it with a deadline while keeping
Ctrl-C working, and its `--json` reports, read by the amaxcheck package's readers
(amaxcheck.report, the CLI contract) so the harness and the Python API share one copy.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import pathlib
import shlex
import signal
import subprocess
import threading
import time

from amaxcheck import report
from amaxcheck.report import (VERDICTS, CheckReport, Hazard, Participant, Timing,  # noqa: F401
                              extract_json_object)
from amaxcheck.report import field as _field

from .errors import InputError, ProgramError

# The exit codes of a check that produced a report: 0 proven clean or no hazard found, 1 hazard,
# 4 inconclusive.
REPORT_EXIT_CODES = (0, 1, 4)


def program_path() -> pathlib.Path:
    """The built program from AMAXCHECK_BIN; a clear error when it is unset or missing."""
    value = os.environ.get("AMAXCHECK_BIN")
    if not value:
        raise InputError("AMAXCHECK_BIN is not set: run the harness through ./amaxcheck, or set it "
                         "to the built program (build/sim/amaxcheck)")
    path = pathlib.Path(value)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise InputError(f"AMAXCHECK_BIN={value} is not an executable file: build it first "
                         "(./amaxcheck build)")
    return path


def fingerprint(path: pathlib.Path) -> str:
    """A content hash of the program, so cached results die with the binary that made them."""
    digest = hashlib.sha256()
    with open(path, "rb") as binary:
        for chunk in iter(lambda: binary.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


@dataclasses.dataclass
class Completed:
    argv: list[str]
    returncode: int  # negative: killed by that signal; None never: timeouts raise
    stdout: str
    stderr: str
    wall_s: float

    def command_line(self) -> str:
        return shlex.join(self.argv)


class _LiveProcesses:
    """Children still running, so an interrupt can end them instead of orphaning them."""

    def __init__(self):
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen] = set()
        self._stopping = False

    def add(self, proc):
        """Registers a child; a child started after stop() is ended at once."""
        with self._lock:
            self._procs.add(proc)
            stopping = self._stopping
        if stopping:
            proc.terminate()

    def discard(self, proc):
        with self._lock:
            self._procs.discard(proc)

    def stop(self):
        """Ends every running child and any started from now on (until resume())."""
        with self._lock:
            self._stopping = True
            procs = list(self._procs)
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()

    def resume(self):
        with self._lock:
            self._stopping = False


live_processes = _LiveProcesses()


class Timeout(ProgramError):
    pass


def run(argv: list[str], timeout_s: float | None = None, cwd=None, env=None) -> Completed:
    """Runs argv to completion and captures its output; raises Timeout past `timeout_s`.

    Only the child's own id is ever signalled (terminate, then kill), never a process group, so
    nothing that the harness did not start is touched.
    """
    start = time.monotonic()
    proc = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
    live_processes.add(proc)
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        raise Timeout(f"timed out after {timeout_s:g} s: {shlex.join(map(str, argv))}") from None
    except BaseException:
        if proc.poll() is None:
            proc.terminate()
            proc.wait()
        raise
    finally:
        live_processes.discard(proc)
    return Completed([str(a) for a in argv], proc.returncode, stdout, stderr,
                     time.monotonic() - start)


def describe_failure(done: Completed) -> str:
    """One line that says how a run failed, with the tail of its stderr."""
    if done.returncode < 0:
        how = f"killed by {signal.Signals(-done.returncode).name}"
    else:
        how = f"exit {done.returncode}"
    tail = done.stderr.strip().splitlines()[-3:]
    return f"{how}: {done.command_line()}" + (f" -- {' | '.join(tail)}" if tail else "")


# ---- the hazard kinds -----------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class HazardKind:
    name: str         # as reports and traces write it: "data_race"
    short: str        # a table label: "race"
    description: str


@functools.lru_cache(maxsize=None)
def _hazard_kinds_of(path: str) -> tuple[HazardKind, ...]:
    done = run([path, "hazard-kinds", "--json"], timeout_s=60)
    if done.returncode != 0:
        raise ProgramError(describe_failure(done))
    try:
        return tuple(HazardKind(k["name"], k["short"], k["description"])
                     for k in json.loads(done.stdout)["hazard_kinds"])
    except (ValueError, KeyError, TypeError) as err:
        raise ProgramError(f"unreadable hazard kinds ({err!r}) from {done.command_line()}") from None


def hazard_kinds() -> tuple[HazardKind, ...]:
    """Every hazard kind, in the program's report order (`amaxcheck hazard-kinds --json`, read
    once per program): the harness keeps no list of its own."""
    return _hazard_kinds_of(str(program_path()))


def sort_kinds(found) -> list[str]:
    """Distinct kinds in the program's order (stable across runs and platforms); a kind the
    program does not list goes last, by name."""
    found = set(found)
    if not found:
        return []
    order = [k.name for k in hazard_kinds()]
    return [k for k in order if k in found] + sorted(found - set(order))


def short_kind(name: str) -> str:
    """The table label of a kind ("race" for data_race); the name itself when unknown."""
    return next((k.short for k in hazard_kinds() if k.name == name), name)


# ---- the --json report ---------------------------------------------------------------------
# The report's types and readers are the amaxcheck package's (amaxcheck.report), shared with its
# Python API; the harness only adds the program's order of hazard kinds.


def parse_check_report(doc: dict) -> CheckReport:
    """Validates and converts one report; ValueError names the field that is wrong."""
    return report.parse_check_report(doc, kind_order=lambda: [k.name for k in hazard_kinds()])


def read_check_report(done: Completed) -> CheckReport:
    """The report of a `check --json` run that exited 0, 1 or 4; ProgramError otherwise."""
    if done.returncode not in REPORT_EXIT_CODES:
        raise ProgramError(describe_failure(done))
    try:
        return parse_check_report(extract_json_object(done.stdout))
    except ValueError as err:
        raise ProgramError(f"unreadable report ({err}) from {done.command_line()}") from None


@dataclasses.dataclass
class ReplayReport:
    """`amaxcheck replay --json`: the replayed run's hazards (verdict from the exit code)."""

    verdict: str
    hazards: list[Hazard]
    steps: int | None
    outcome: str

    @property
    def hazard_kinds(self) -> list[str]:
        return sort_kinds(h.kind for h in self.hazards)


def read_replay_report(done: Completed) -> ReplayReport:
    """The report of a `replay --json` run that exited 0 (no hazard), 1 (hazard) or 4 (no hazard,
    but the recorded run ended at its step cap: inconclusive)."""
    if done.returncode not in REPORT_EXIT_CODES:
        raise ProgramError(describe_failure(done))
    try:
        doc = extract_json_object(done.stdout)
        hazards = [Hazard(kind=_field(h, "kind", str, f"replay.hazards[{i}]"),
                          summary=str(h.get("summary", "")), participants=[],
                          replay=str(h.get("replay", "")))
                   for i, h in enumerate(_field(doc, "hazards", list, "replay"))]
    except ValueError as err:
        raise ProgramError(f"unreadable replay report ({err}) from {done.command_line()}") \
            from None
    steps = doc.get("steps")
    verdict = "hazard" if done.returncode == 1 or hazards else \
        "inconclusive" if done.returncode == 4 else "no_hazard_found"
    return ReplayReport(verdict=verdict,
                        hazards=hazards, steps=steps if isinstance(steps, int) else None,
                        outcome=str(doc.get("outcome", "")))
