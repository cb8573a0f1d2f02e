"""Runs the sweep's jobs in parallel with a progress bar, caching each as it finishes.

Threads are enough: every job is a child process, so the GIL is never the bottleneck. The main
thread alone touches the progress bar. On Ctrl-C (or SIGTERM) it stops starting
jobs, ends the running children, and returns. Each worker caches its job the moment it ends,
so every finished job survives the interruption.

Each run has a deadline (--point-timeout). The program gets a time budget a little under it, so
it stops itself and reports what it covered; a run the deadline still kills is inconclusive
(cause point_timeout), like any check a time cap cut short, never an error and never cached.
"""

from __future__ import annotations

import concurrent.futures as futures
import signal
import sys
import threading

from tqdm import tqdm

from .. import program
from ..errors import ProgramError
from .cache import Cache, Outcome
from .plan import Job


def run_and_cache(binary, job: Job, timeout_s: float, cache: Cache) -> Outcome:
    """Runs one job in a worker thread and caches it there, the moment it ends."""
    outcome = run_one(binary, job, timeout_s)
    cache.put(job, outcome)
    return outcome


KEPT_HAZARDS = 20


def _trimmed(raw: dict) -> dict:
    """The report with at most KEPT_HAZARDS hazards plus one of every other kind: a large run
    reports thousands of races, and the sweep needs the kinds, not megabytes per cache file."""
    hazards = raw.get("hazards") or []
    if len(hazards) <= KEPT_HAZARDS:
        return raw
    kept = hazards[:KEPT_HAZARDS]
    kinds = {h.get("kind") for h in kept}
    for h in hazards[KEPT_HAZARDS:]:
        if h.get("kind") not in kinds:
            kept.append(h)
            kinds.add(h.get("kind"))
    return {**raw, "hazards": kept, "hazards_total": len(hazards)}


TIME_BUDGET = "--time-budget"


def time_budget(timeout_s: float) -> float:
    """The program's own time budget for a run with this deadline: a little under it (10%, at
    least 1 s, at most 30 s; half of a deadline under 2 s), so the program stops itself in time
    to write its report and says what it covered."""
    margin = min(max(0.1 * timeout_s, 1.0), 30.0)
    return timeout_s - margin if timeout_s - margin >= 0.5 * timeout_s else 0.5 * timeout_s


def _with_time_budget(args: tuple, timeout_s: float) -> list:
    """The job's arguments plus the time budget, unless the grid's args set one. Not part of the
    job (its cache key): a run that finished within the budget is the same run without one."""
    if TIME_BUDGET in args:
        return list(args)
    return [*args, TIME_BUDGET, f"{time_budget(timeout_s):g}"]


def _budget_raised_by_deadline(report: dict) -> dict:
    """A report cut short by the budget the sweep set: the option that raises it is the sweep's
    --point-timeout, not the program's --time-budget (which the sweep derives from it)."""
    causes = report.get("cut_short") or []
    if not any(isinstance(c, dict) and c.get("cause") == "time_budget" for c in causes):
        return report
    return {**report, "cut_short": [
        {**c, "raise_with": "--point-timeout"} if isinstance(c, dict) and
        c.get("cause") == "time_budget" else c for c in causes]}


def _strategy(job: Job) -> str:
    args = list(job.args)
    return args[args.index("--strategy") + 1] if "--strategy" in args else ""


def _cut_at_deadline(job: Job, timeout_s: float, err: Exception) -> Outcome:
    """A run killed at the deadline was cut short by a time cap like the program's own budget:
    inconclusive, not an error. The report stands in for the one the program never wrote."""
    report = {"verdict": "inconclusive", "hazards": [], "runs": 0, "complete": False,
              "strategy": _strategy(job),
              "cut_short": [{"cause": "point_timeout", "limit": timeout_s,
                             "raise_with": "--point-timeout"}]}
    return Outcome(returncode=None, report=report, error=str(err), wall_s=timeout_s)


def run_one(binary, job: Job, timeout_s: float) -> Outcome:
    try:
        done = program.run([binary, *_with_time_budget(job.args, timeout_s)],
                           timeout_s=timeout_s)
    except program.Timeout as err:
        return _cut_at_deadline(job, timeout_s, err)
    if done.returncode in program.REPORT_EXIT_CODES:
        try:
            report = program.read_check_report(done)
        except ProgramError as err:
            return Outcome(returncode=done.returncode, report=None, error=str(err),
                           wall_s=done.wall_s)
        raw = _trimmed(report.raw)
        if TIME_BUDGET not in job.args:
            raw = _budget_raised_by_deadline(raw)
        return Outcome(returncode=done.returncode, report=raw, error=None, wall_s=done.wall_s)
    kind = "bad input" if done.returncode == 2 else "failed"
    return Outcome(returncode=done.returncode, report=None,
                   error=f"{kind}: {program.describe_failure(done)}", wall_s=done.wall_s)


class Interrupted(Exception):
    def __init__(self, finished: int, total: int):
        super().__init__(f"{finished} of {total}")
        self.finished, self.total = finished, total


def _sigterm_as_interrupt():
    """SIGTERM ends a sweep the same orderly way as Ctrl-C (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, handler)


def execute(binary, jobs: list[Job], cache: Cache, workers: int, timeout_s: float,
            progress: bool) -> dict[Job, Outcome]:
    """Outcomes for every job: from the cache, or run now. Raises Interrupted on Ctrl-C."""
    outcomes: dict[Job, Outcome] = {}
    todo = []
    for job in jobs:
        hit = cache.get(job)
        if hit is not None:
            outcomes[job] = hit
        else:
            todo.append(job)
    print(f"sweep: {len(jobs)} runs: {len(outcomes)} cached, {len(todo)} to run on "
          f"{workers} worker(s)", file=sys.stderr)
    if not todo:
        return outcomes
    todo.sort(key=lambda j: -j.cost_estimate())  # stable: equal costs keep grid order
    previous = _sigterm_as_interrupt()
    bar = tqdm(total=len(todo), unit="run", desc="sweep", file=sys.stderr, disable=not progress,
               dynamic_ncols=True, mininterval=0.5)
    pool = futures.ThreadPoolExecutor(max_workers=workers)
    pending, submitted = {}, []
    hazards = failures = 0
    try:
        pending = {pool.submit(run_and_cache, binary, job, timeout_s, cache): job for job in todo}
        submitted = list(pending)
        while pending:
            done, _ = futures.wait(pending, timeout=0.5, return_when=futures.FIRST_COMPLETED)
            for fut in done:
                job = pending.pop(fut)
                outcome = fut.result()
                outcomes[job] = outcome
                if outcome.report is None:
                    failures += 1
                elif outcome.report.get("verdict") == "hazard":
                    hazards += 1
                bar.set_postfix(hazards=hazards, failed=failures, refresh=False)
                bar.update(1)
    except KeyboardInterrupt:
        for fut in pending:
            fut.cancel()
        program.live_processes.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        program.live_processes.resume()
        bar.close()
        finished = sum(1 for f in submitted if f.done() and not f.cancelled()
                       and f.exception() is None and f.result().cacheable)
        raise Interrupted(finished, len(todo)) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    pool.shutdown(wait=True)
    bar.close()
    return outcomes
