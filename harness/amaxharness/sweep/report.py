"""The sweep's tables: results.csv (every point, every figure) and report.md (what it means).

Both are pure functions of the rows, so a rerun served from the cache writes identical bytes.
"""

from __future__ import annotations

import csv
import io

from ..program import short_kind
from .grid import Grid
from .results import VERDICT_ERROR, Row



VERDICT_WORDS = {"proven_clean": "proven clean", "no_hazard_found": "no hazard found",
                 "inconclusive": "inconclusive"}


def to_csv(grid: Grid, rows: list[Row]) -> str:
    keys = list(grid.axes)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(keys + list(Row.CSV_TAIL))
    for row in rows:
        writer.writerow(row.csv_values(keys))
    return out.getvalue()


def human_bytes(n: float | None) -> str:
    if n is None:
        return "–"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n}"


def num(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}"


def _md_table(header: list[str], body: list[list[str]]) -> str:
    def esc(cell):
        return str(cell).replace("|", "\\|")
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in body]
    return "\n".join(lines)


def compress(values: list, universe: list) -> str:
    """'2–16, 64': runs of consecutive grid values, so a report names where a hazard appears."""
    index = {repr(v): i for i, v in enumerate(universe)}
    picked = sorted({index[repr(v)] for v in values})
    parts, start = [], None
    for n, i in enumerate(picked):
        if start is None:
            start = i
        if n + 1 == len(picked) or picked[n + 1] != i + 1:
            a, b = universe[start], universe[i]
            parts.append(f"{a}" if start == i else f"{a}–{b}")
            start = None
    return ", ".join(parts)


def _by_design(rows: list[Row]) -> dict[str, list[Row]]:
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row.design, []).append(row)
    return groups


def safety_summary(grid: Grid, rows: list[Row]) -> str:
    x = grid.x
    universe = grid.axes[x] if x else []
    where = (lambda rs: f" at {x}={compress([r.point[x] for r in rs], universe)}") if x else \
        (lambda rs: "")
    hazards = [r for r in rows if r.verdict == "hazard"]
    proven = [r for r in rows if r.verdict == "proven_clean"]
    sampled = [r for r in rows if r.verdict == "no_hazard_found"]
    inconclusive = [r for r in rows if r.verdict == "inconclusive"]
    errors = [r for r in rows if r.verdict == VERDICT_ERROR]
    parts = []
    if hazards:
        kinds = []
        for r in hazards:
            kinds += [k for k in r.hazard_kinds if k not in kinds]
        parts.append(f"**hazard** ({', '.join(kinds)}){where(hazards)}")
    # A proof and a sample say different things: they are never merged into one "clean".
    if proven:
        parts.append(f"proven clean{where(proven)}")
    if sampled:
        parts.append(f"no hazard found (sampled){where(sampled)}")
    if inconclusive:
        parts.append(f"inconclusive (cut short){where(inconclusive)}")
    if errors:
        parts.append(f"failed{where(errors)}")
    return "; ".join(parts) or "not checked"


def span(rows: list[Row], attr: str, fmt) -> str:
    values = [getattr(r, attr) for r in rows if getattr(r, attr) is not None]
    if not values:
        return "hung" if any(r.timed_verdict == "hung" for r in rows) else "–"
    if len(rows) == 1 or values[0] == values[-1]:
        return fmt(values[0])
    return f"{fmt(values[0])} → {fmt(values[-1])}"


def _matching(rows: list[Row], condition: dict) -> list[Row]:
    return [r for r in rows if all(r.point.get(k) == v for k, v in condition.items())]


def _safety_words(rows: list[Row]) -> str:
    rows = [r for r in rows if r.verdict != "skipped"]  # points with a timed run only
    hazards = sorted({k for r in rows if r.verdict == "hazard" for k in r.hazard_kinds})
    if hazards:
        return "hazardous (" + ", ".join(hazards) + ")"
    if rows and all(r.verdict == "proven_clean" for r in rows):
        return "proven clean"
    if rows and all(r.verdict in ("proven_clean", "no_hazard_found") for r in rows):
        return "clean in every sampled run"
    return "not settled (some runs inconclusive or failed)"


def answer(grid: Grid, rows: list[Row]) -> list[str]:
    """The seed question answered in sentences, from the grid's `answer` table: the shared vs
    the separate communicator at one x value and bucket size, and the safety of the launch
    order under each kernel concurrency. Every number comes from the rows."""
    spec = grid.answer
    x, bucket_key = grid.x, spec.get("bucket")
    if not spec or not x:
        return []
    buckets = grid.axes.get(bucket_key, [None]) if bucket_key else [None]
    at = spec.get("x", grid.axes[x][-1])
    lines = ["## The answer", ""]
    for bucket in buckets:
        def one(name):
            cond = dict(spec.get(name, {}), **{x: at})
            if bucket_key:
                cond[bucket_key] = bucket
            found = _matching(rows, cond)
            return found[0] if found else None
        shared, separate, serialized = one("shared"), one("separate"), one("separate_serialized")
        size = human_bytes(bucket) if bucket is not None else "the default"
        if not (shared and separate) or shared.exposed_amax_latency_us is None \
                or separate.exposed_amax_latency_us is None:
            lines += [f"- With {size} buckets at {x} {at}: no cost figures for both designs.", ""]
            continue
        it_change = 100.0 * (separate.iteration_time_us - shared.iteration_time_us) / \
            shared.iteration_time_us
        sentence = (f"- At {x} {at} with {size} gradient buckets, the separate amax communicator "
                    f"changes the exposed amax latency from {shared.exposed_amax_latency_us:.1f} µs "
                    f"to {separate.exposed_amax_latency_us:.1f} µs and the time the amax "
                    f"reduction queues behind gradient buckets from {shared.amax_queued_us:.1f} µs "
                    f"to {separate.amax_queued_us:.1f} µs per rank and iteration; the iteration "
                    f"takes {shared.iteration_time_us:.1f} µs shared and "
                    f"{separate.iteration_time_us:.1f} µs separate ({it_change:+.1f}%). It costs "
                    f"{human_bytes(separate.extra_comm_memory_bytes)} of device memory per GPU.")
        if serialized and serialized.amax_queued_us is not None:
            sentence += (f" With serialized kernels the separate communicator's reduction queues "
                         f"{serialized.amax_queued_us:.1f} µs behind the buckets again, as on the "
                         f"shared one.")
        sync_shared, sync_separate = one("sync_shared"), one("sync_separate")
        if sync_shared and sync_separate and sync_shared.exposed_amax_latency_us is not None \
                and sync_separate.exposed_amax_latency_us is not None:
            sentence += (f" A protocol that waits for the reduction at once (te-sync) is exposed "
                         f"to all of it: {sync_shared.exposed_amax_latency_us:.1f} µs shared, "
                         f"{sync_separate.exposed_amax_latency_us:.1f} µs separate.")
        lines += [sentence, ""]
    growth = spec.get("growth")
    if growth:
        cond = dict(growth)
        if bucket_key and buckets[0] is not None:
            cond[bucket_key] = buckets[0]
        line = sorted((r for r in _matching(rows, cond) if r.exposed_amax_latency_us is not None),
                      key=lambda r: grid.axes[x].index(r.point[x]))
        if len(line) > 1:
            first, last = line[0], line[-1]
            sentence = (f"- Exposed amax latency grows with {x} and the nodes it spans: te-sync "
                        f"on a separate communicator waits {first.exposed_amax_latency_us:.1f} µs "
                        f"at {x} {first.point[x]} and {last.exposed_amax_latency_us:.1f} µs at "
                        f"{x} {last.point[x]} per rank and iteration (the reduction's latency: "
                        f"ring hops within a node, a tree's log2 of the nodes across them).")
            async_cond = dict(spec.get("separate", {}))
            if bucket_key and buckets[0] is not None:
                async_cond[bucket_key] = buckets[0]
            hidden = [r.exposed_amax_latency_us for r in _matching(rows, async_cond)
                      if r.exposed_amax_latency_us is not None]
            if hidden:
                sentence += (f" The asynchronous reduction (te-async) exposes at most "
                             f"{max(hidden):.1f} µs of it over the same {x} range: the next "
                             f"autocast's work hides it.")
            lines += [sentence, ""]
    groups = {name: [r for r in _matching(rows, spec.get(name, {}))]
              for name in ("order_concurrent", "order_serialized", "shared_order", "after_copy")}
    if groups["order_concurrent"] and groups["order_serialized"]:
        lines += [f"- With a rank-dependent launch order of the backward amax reduction, the "
                  f"separate communicator is {_safety_words(groups['order_concurrent'])} with "
                  f"concurrent kernels (NCCL >= 2.26, CUDA >= 12.3) and "
                  f"{_safety_words(groups['order_serialized'])} with serialized kernels: it "
                  f"fixes the matching, not the order across communicators on one device.", ""]
    if groups["shared_order"]:
        lines += [f"- On the shared communicator that order is "
                  f"{_safety_words(groups['shared_order'])}.", ""]
    if groups["after_copy"]:
        lines += [f"- Waiting after the copy-back is {_safety_words(groups['after_copy'])} on any "
                  f"communicator: the fix is to wait before copying.", ""]
    return lines


def to_markdown(grid: Grid, rows: list[Row], plots: list[str], program_note: str) -> str:
    x = grid.x
    out = [f"# {grid.title}", ""]
    if grid.description:
        out += [grid.description.strip(), ""]
    varying = [f"`{k}` ∈ {{{', '.join(map(str, grid.axes[k]))}}}" for k in grid.varying()]
    fixed = [f"`{k}`={v[0]}" for k, v in grid.axes.items() if len(v) == 1]
    out += [f"Grid: {' × '.join(varying) or 'one point'}"
            + (f"; fixed: {', '.join(fixed)}" if fixed else "") + f" ({len(rows)} points).", ""]
    plans: dict = {}
    for r in rows:
        if r.plan:
            plans.setdefault(r.plan, []).append(r.point[x] if x else None)
    if plans:
        where = (lambda vs: f" at {x}={compress(vs, grid.axes[x])}") if x else (lambda vs: "")
        out += ["Safety runs: " + "; ".join(f"{plan}{where(vs)}" for plan, vs in plans.items())
                + ".", ""]
    hung = [r for r in rows if r.timed_verdict == "hung"]
    if hung:
        out += [f"Cost figures are left out ('hung') where the timed run deadlocked "
                f"({len(hung)} point{'s' if len(hung) > 1 else ''}): its times measure nothing.",
                ""]
    compute_s = sum((r.safety_wall_s or 0) + (r.timed_wall_s or 0) for r in rows)
    out += [f"Program: {program_note}; {compute_s:.0f} s of compute over all runs.", ""]

    out += answer(grid, rows)
    span_note = f" ({x} = {grid.axes[x][0]} → {grid.axes[x][-1]})" if x else ""
    out += ["## Findings per design", ""]
    body = []
    for design, group in _by_design(rows).items():
        group = sorted(group, key=lambda r: grid.axes[x].index(r.point[x])) if x else group
        body.append([design, safety_summary(grid, group),
                     span(group, "exposed_amax_latency_us", num),
                     span(group, "amax_queued_us", num),
                     span(group, "iteration_time_us", num),
                     span(group, "extra_comm_memory_bytes", human_bytes)])
    out += [_md_table(["design", "safety", f"exposed amax latency (µs){span_note}",
                       "amax queued behind gradients (µs)", "iteration time (µs)",
                       "extra communicator memory"], body), ""]
    for plot in plots:
        out += [f"![{plot}]({plot})", ""]

    out += ["## Every point", ""]
    keys = grid.varying() or list(grid.axes)
    body = []
    for r in rows:
        body.append([str(r.point[k]) for k in keys] + [
            VERDICT_WORDS.get(r.verdict, r.verdict),
            ", ".join(short_kind(k) for k in r.hazard_kinds) or "–",
            "–" if r.runs is None else str(r.runs),
            "–" if r.complete is None else ("yes" if r.complete else "no"),
            *(("hung",) * 4 if r.timed_verdict == "hung" else
              (num(r.iteration_time_us), num(r.exposed_amax_latency_us), num(r.amax_queued_us),
               human_bytes(r.extra_comm_memory_bytes)))])
    out += [_md_table(keys + ["verdict", "hazards", "runs", "complete", "iteration (µs)",
                              "exposed amax (µs)", "queued (µs)", "extra comm memory"], body), ""]
    failed = [r for r in rows if r.errors]
    if failed:
        out += ["## Failed runs", ""]
        for r in failed:
            label = ", ".join(f"{k}={r.point[k]}" for k in keys)
            out += [f"- {label}: {' | '.join(r.errors)}"]
        out += [""]
    return "\n".join(out)
