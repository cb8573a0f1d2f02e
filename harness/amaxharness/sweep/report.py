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


def _covers(xs: list, universe: list) -> bool:
    return {repr(v) for v in xs} == {repr(v) for v in universe}


def span(rows: list[Row], attr: str, fmt, x: str | None = None,
         universe: list | None = None) -> str:
    """The figure from the first to the last row (in x order) that has one. With `x`, a span
    whose figures do not come from every value of `universe` (the x values the table header
    names) names the points it has, so a missing point never hides behind the header's range."""
    have = [r for r in rows if getattr(r, attr) is not None]
    if not have:
        if any(r.timed_verdict == "hung" for r in rows):
            return "hung"
        return "cut short" if any(r.timed_verdict == "inconclusive" for r in rows) else "–"
    values = [getattr(r, attr) for r in have]
    text = fmt(values[0]) if all(v == values[0] for v in values) else \
        f"{fmt(values[0])} → {fmt(values[-1])}"
    if x is None:
        return text
    xs = [r.point[x] for r in have]
    if universe is not None and _covers(xs, universe):
        return text
    return f"{text} ({x}={compress(xs, universe if universe is not None else xs)})"


def _matching(rows: list[Row], condition: dict) -> list[Row]:
    return [r for r in rows if all(r.point.get(k) == v for k, v in condition.items())]


def cost_label(rows: list[Row]) -> str:
    """'modelled (cost model, preset X)': the cost figures are the cost model's estimates for
    the presets the timed runs used, not measurements."""
    presets = sorted({r.cost_preset for r in rows if r.cost_preset})
    if not presets:
        return "modelled (cost model)"
    return f"modelled (cost model, preset{'s' if len(presets) > 1 else ''} {', '.join(presets)})"


# ---- the answer ----------------------------------------------------------------------------
# Every sentence is built from the answer table's conditions and the rows they match: a
# condition that is absent or matches no run is left out, never filled in from other designs.

# Words for the knob values the seed question's conditions name; any other reads key=value.
VALUE_WORDS = {
    ("protocol", "te-async"): "te-async",
    ("protocol", "te-sync"): "te-sync",
    ("comm", "shared"): "the shared communicator",
    ("comm", "separate"): "a separate amax communicator",
    ("amax-order", "same"): "the same launch order on every rank",
    ("amax-order", "rank-dependent"): "a rank-dependent launch order of the backward amax "
                                      "reduction",
    ("wait", "before-copy"): "waiting before the copy-back",
    ("wait", "after-copy"): "waiting after the copy-back",
    ("kernels", "concurrent"): "concurrent kernels (NCCL >= 2.26, CUDA >= 12.3)",
    ("kernels", "serialized"): "serialized kernels",
}


def words(condition: dict) -> str:
    """A design in words: 'te-async, the shared communicator and serialized kernels'."""
    ordered = sorted(condition.items(), key=lambda kv: kv[0] != "protocol")  # protocol first
    parts = [VALUE_WORDS.get((k, v), f"{k}={v}") for k, v in ordered]
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else "".join(parts)


def _split(a: dict, b: dict) -> tuple[dict, dict, dict]:
    """What two conditions share, and what each has of its own."""
    common = {k: v for k, v in a.items() if k in b and b[k] == v}
    return (common, {k: v for k, v in a.items() if k not in common},
            {k: v for k, v in b.items() if k not in common})


def _condition(spec: dict, name: str) -> dict | None:
    """A named design of the answer table; None when absent or empty (an empty condition would
    match every point, and a sentence about it would claim what no run showed)."""
    condition = spec.get(name)
    return dict(condition) if isinstance(condition, dict) and condition else None


def _only(rows: list[Row], condition: dict) -> Row | None:
    """The one point a condition names; None when it names none or several (a figure taken
    from one of several would be said of all of them)."""
    found = _matching(rows, condition)
    return found[0] if len(found) == 1 else None


def _line(grid: Grid, rows: list[Row], condition: dict) -> list[Row]:
    """The points of one design with cost figures, in x order; none when the condition names
    several designs (two points at one x)."""
    found = [r for r in _matching(rows, condition) if r.exposed_amax_latency_us is not None]
    xs = [repr(r.point[grid.x]) for r in found]
    if len(set(xs)) != len(xs):
        return []
    return sorted(found, key=lambda r: grid.axes[grid.x].index(r.point[grid.x]))


def _where(grid: Grid, rows: list[Row]) -> str:
    return f" at {grid.x}={compress([r.point[grid.x] for r in rows], grid.axes[grid.x])}"


def verdict_phrase(grid: Grid, rows: list[Row]) -> str:
    """What the safety runs of `rows` established, each verdict with where: a proof with the
    schedules its complete search covered, a sample with its run count, a check cut short with
    its causes. Never a bare 'clean'."""
    by = {v: [r for r in rows if r.verdict == v] for v in
          ("hazard", "proven_clean", "no_hazard_found", "inconclusive", VERDICT_ERROR)}
    parts = []
    if by["hazard"]:
        kinds: list = []
        for r in by["hazard"]:
            kinds += [k for k in r.hazard_kinds if k not in kinds]
        parts.append(f"hazardous ({', '.join(kinds)}){_where(grid, by['hazard'])}")
    if by["proven_clean"]:
        runs = sorted({r.runs for r in by["proven_clean"] if r.runs is not None})
        counted = "" if not runs else f" ({runs[0]} schedule{'s' if runs[0] != 1 else ''})" \
            if len(runs) == 1 else f" ({runs[0]}–{runs[-1]} schedules)"
        parts.append(f"proven clean{_where(grid, by['proven_clean'])} by a complete exhaustive "
                     f"search{counted}")
    if by["no_hazard_found"]:
        samples: dict = {}
        for r in by["no_hazard_found"]:
            samples.setdefault(r.runs, []).append(r)
        parts.append("no hazard found in " + " and ".join(
            f"{n} sampled run{'s' if n != 1 else ''}{' each' if len(rs) > 1 else ''}"
            f"{_where(grid, rs)}" for n, rs in samples.items()))
    if by["inconclusive"]:
        causes: list = []
        for r in by["inconclusive"]:
            causes += [c.cause for c in r.cut_short if c.run == "safety" and c.cause not in causes]
        parts.append(f"inconclusive{_where(grid, by['inconclusive'])} (cut short: "
                     f"{', '.join(causes) or 'cause not reported'})")
    if by[VERDICT_ERROR]:
        parts.append(f"not checked{_where(grid, by[VERDICT_ERROR])}: the run failed")
    return "; ".join(parts)


def _safety_lines(grid: Grid, rows: list[Row], conditions: list) -> list[str]:
    """The safety of designs that differ in a few knobs: what they share, then each one's own
    knobs with what its runs established. Designs no safety run checked are left out."""
    checked = []
    for condition in conditions:
        found = [r for r in _matching(rows, condition) if r.verdict != "skipped"] \
            if condition else []
        if found:
            checked.append((condition, found))
    if not checked:
        return []
    if len(checked) == 1:
        condition, found = checked[0]
        return [f"- For {words(condition)}: {verdict_phrase(grid, found)}.", ""]
    common = dict(checked[0][0])
    for condition, _ in checked[1:]:
        common = _split(common, condition)[0]
    lines = [f"- For {words(common)}:" if common else "- Side by side:"]
    for condition, found in checked:
        own = {k: v for k, v in condition.items() if k not in common}
        lines.append(f"  - {words(own)}: {verdict_phrase(grid, found)}.")
    return lines + [""]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _cost_lines(grid: Grid, rows: list[Row], spec: dict, where: dict, at: str) -> list[str]:
    """The `shared` design against the `separate` one at one x value and bucket size (`at` in
    words), with the `separate_serialized` and the `sync_shared` / `sync_separate` designs where
    they ran. The figures are labelled with the presets of the two compared points."""
    base_c, alt_c = _condition(spec, "shared"), _condition(spec, "separate")
    if not (base_c and alt_c) or base_c == alt_c:
        return []
    base, alt = _only(rows, base_c | where), _only(rows, alt_c | where)
    if not (base and alt):
        return []
    common, base_own, alt_own = _split(base_c, alt_c)
    setting = f"{_capital(cost_label([base, alt]))} {at}" + \
        (f", with {words(common)}" if common else "")
    lacking = [f"{words(own)} (timed run: {r.timed_verdict})" for own, r in
               ((base_own, base), (alt_own, alt)) if r.exposed_amax_latency_us is None]
    if lacking:
        return [f"- {setting}: no cost figures for {' or '.join(lacking)}.", ""]
    change = 100.0 * (alt.iteration_time_us - base.iteration_time_us) / base.iteration_time_us
    sentence = (f"- {setting}: {words(alt_own)} instead of {words(base_own)} changes the "
                f"exposed amax latency from {base.exposed_amax_latency_us:.1f} µs to "
                f"{alt.exposed_amax_latency_us:.1f} µs and the time the amax reduction queues "
                f"behind earlier collectives from {base.amax_queued_us:.1f} µs to "
                f"{alt.amax_queued_us:.1f} µs per rank and iteration; the iteration takes "
                f"{base.iteration_time_us:.1f} µs and {alt.iteration_time_us:.1f} µs "
                f"({change:+.1f}%), and the extra communicator memory per GPU is "
                f"{human_bytes(base.extra_comm_memory_bytes)} and "
                f"{human_bytes(alt.extra_comm_memory_bytes)}.")
    serial_c = _condition(spec, "separate_serialized")
    serial = _only(rows, serial_c | where) if serial_c else None
    serial_own = _split(alt_c, serial_c)[2] if serial_c else {}
    if serial and serial_own and serial.amax_queued_us is not None:
        same = abs(serial.amax_queued_us - base.amax_queued_us) < 0.05
        sentence += (f" With {words(serial_own)} its reduction queues "
                     f"{serial.amax_queued_us:.1f} µs behind earlier collectives"
                     + (f", as with {words(base_own)}." if same else "."))
    sync_a_c, sync_b_c = _condition(spec, "sync_shared"), _condition(spec, "sync_separate")
    if sync_a_c and sync_b_c and sync_a_c != sync_b_c:
        sync_a, sync_b = _only(rows, sync_a_c | where), _only(rows, sync_b_c | where)
        if sync_a and sync_b and sync_a.exposed_amax_latency_us is not None \
                and sync_b.exposed_amax_latency_us is not None:
            sync_common, a_own, b_own = _split(sync_a_c, sync_b_c)
            new = {k: v for k, v in sync_common.items() if base_c.get(k) != v}
            sentence += ((f" With {words(new)} the" if new else " The") +
                         f" exposed amax latency is {sync_a.exposed_amax_latency_us:.1f} µs with "
                         f"{words(a_own)} and {sync_b.exposed_amax_latency_us:.1f} µs with "
                         f"{words(b_own)}.")
    return [sentence, ""]


def _growth_lines(grid: Grid, rows: list[Row], spec: dict, where: dict) -> list[str]:
    """The `growth` design's exposed latency from the first to the last x value it has, and the
    `separate` design's largest over the x values it has."""
    x, condition = grid.x, _condition(spec, "growth")
    line = _line(grid, rows, condition | where) if condition else []
    if len(line) < 2:
        return []
    first, last = line[0], line[-1]
    sentence = (f"- Exposed amax latency, {cost_label(line)}, with {words(condition)}: "
                f"{first.exposed_amax_latency_us:.1f} µs at {x} {first.point[x]} and "
                f"{last.exposed_amax_latency_us:.1f} µs at {x} {last.point[x]} per rank and "
                f"iteration")
    if x == "dp" and last.exposed_amax_latency_us > first.exposed_amax_latency_us:
        sentence += (" (it grows with dp and the nodes it spans: ring hops within a node, a "
                     "tree's log2 of the nodes across them)")
    sentence += "."
    other = _condition(spec, "separate")
    hidden = _line(grid, rows, other | where) if other and other != condition else []
    if hidden:
        top = max(r.exposed_amax_latency_us for r in hidden)
        sentence += (f" With {words(_split(condition, other)[2])} it is at most {top:.1f} µs"
                     f"{_where(grid, hidden)}"
                     + (": none of the reduction is exposed." if top < 0.05 else "."))
    return [sentence, ""]


def answer(grid: Grid, rows: list[Row]) -> list[str]:
    """The seed question answered in sentences, from the grid's `answer` table of named design
    conditions: the shared vs the separate communicator at one x value and bucket size, the
    latency's growth, and the safety of the designs named. Every number and verdict comes from
    the rows the conditions match; a sentence whose designs did not run is left out."""
    spec = grid.answer
    x = grid.x
    if not spec or not x:
        return []
    bucket_key = spec.get("bucket") if spec.get("bucket") in grid.axes else None
    buckets = grid.axes[bucket_key] if bucket_key else [None]
    at = spec.get("x", grid.axes[x][-1])
    lines: list[str] = []
    for bucket in buckets:
        where = {x: at, **({bucket_key: bucket} if bucket_key else {})}
        at_words = f"at {x} {at}" + \
            (f" with {human_bytes(bucket)} gradient buckets" if bucket_key else "")
        lines += _cost_lines(grid, rows, spec, where, at_words)
    first_bucket = {bucket_key: buckets[0]} if bucket_key else {}
    lines += _growth_lines(grid, rows, spec, first_bucket)
    for names in (("order_concurrent", "order_serialized"), ("shared_order",),
                  ("after_copy", "separate")):
        lines += _safety_lines(grid, rows, [_condition(spec, n) for n in names])
    return ["## The answer", ""] + lines if lines else []


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
    if any(r.cost_preset for r in rows):
        out += [f"Cost figures (latency, queueing, iteration time, communicator memory) are "
                f"{cost_label(rows)}: one timed run per point, estimates, not measurements.", ""]
    compute_s = sum((r.safety_wall_s or 0) + (r.timed_wall_s or 0) for r in rows)
    out += [f"Program: {program_note}; {compute_s:.0f} s of compute over all runs.", ""]

    out += answer(grid, rows)
    out += _findings(grid, rows)
    for plot in plots:
        out += [f"![{plot}]({plot})", ""]
    out += _every_point(grid, rows)
    out += _cut_short_section(grid, rows)
    failed = [r for r in rows if r.errors]
    if failed:
        out += ["## Failed runs", ""]
        for r in failed:
            out += [f"- {point_label(grid, r)}: {' | '.join(r.errors)}"]
        out += [""]
    return "\n".join(out)


def point_label(grid: Grid, row: Row) -> str:
    return ", ".join(f"{k}={row.point[k]}" for k in (grid.varying() or list(grid.axes)))


def _findings(grid: Grid, rows: list[Row]) -> list[str]:
    x = grid.x
    universe = grid.axes[x] if x else None
    span_note = "" if not x else f" ({x} = {universe[0]})" if len(universe) == 1 else \
        f" ({x} = {universe[0]} → {universe[-1]})"
    body = []
    for design, group in _by_design(rows).items():
        group = sorted(group, key=lambda r: universe.index(r.point[x])) if x else group
        body.append([design, safety_summary(grid, group)] + [
            span(group, attr, fmt, x, universe) for attr, fmt in (
                ("exposed_amax_latency_us", num), ("amax_queued_us", num),
                ("iteration_time_us", num), ("extra_comm_memory_bytes", human_bytes))])
    note = [f"A figure range runs from the first to the last {x} value of the header; a cell "
            f"with figures at fewer {x} values names them.", ""] if x and len(universe) > 1 else []
    return ["## Findings per design", ""] + note + [
            _md_table(["design", "safety", f"modelled exposed amax latency (µs){span_note}",
                       "modelled amax queued behind gradients (µs)",
                       "modelled iteration time (µs)", "modelled extra communicator memory"],
                      body), ""]


def _cost_cells(r: Row) -> tuple:
    if r.timed_verdict in ("hung", "inconclusive"):  # no figures, and why
        return ("hung" if r.timed_verdict == "hung" else "cut short",) * 4
    return (num(r.iteration_time_us), num(r.exposed_amax_latency_us), num(r.amax_queued_us),
            human_bytes(r.extra_comm_memory_bytes))


def _every_point(grid: Grid, rows: list[Row]) -> list[str]:
    keys = grid.varying() or list(grid.axes)
    body = []
    for r in rows:
        body.append([str(r.point[k]) for k in keys] + [
            VERDICT_WORDS.get(r.verdict, r.verdict),
            ", ".join(short_kind(k) for k in r.hazard_kinds) or "–",
            "–" if r.runs is None else str(r.runs),
            "–" if r.complete is None else ("yes" if r.complete else "no"), *_cost_cells(r)])
    return ["## Every point", "",
            _md_table(keys + ["verdict", "hazards", "runs", "complete", "modelled iteration (µs)",
                              "modelled exposed amax (µs)", "modelled queued (µs)",
                              "modelled extra comm memory"], body), ""]


def _cut_short_section(grid: Grid, rows: list[Row]) -> list[str]:
    """Inconclusive points with what cut each run short and the option that raises the limit:
    neither clean nor hazardous until rerun with more room."""
    cut = [r for r in rows if r.cut_short]
    if not cut:
        return []
    return ["## Inconclusive points", ""] + \
        [f"- {point_label(grid, r)}: {'; '.join(map(str, r.cut_short))}" for r in cut] + [""]
