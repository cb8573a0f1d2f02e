"""The import's report: human text (the default) and a JSON document (--json).

The text leads with the root cause: the earliest divergence (in time_created_ns, then seq).
What follows from it (the ranks that then wait in other groups) is summarised with counts; the
full listing of every group, divergence and record is under --verbose, and always in the JSON.
Every string in it was cut to a bounded length when the dump was read (src/fr/dump.h).
"""

from __future__ import annotations

import collections

from .agreement import AgreementReport, Divergence, outcome, ranks_text

BRIEF_GROUPS = 16  # up to this many groups, each gets its line without --verbose
BRIEF_LIST = 8  # knock-on divergences and deviating ranks listed without --verbose


def _record_lines(rank: int, records: list, frames: int) -> list[str]:
    if not records:
        return [f"    rank {rank}: (no record)"]
    lines = []
    for r in records:
        lines.append(f"    rank {rank}: record {r.record_id}, group {r.pg_name} "
                     f"#{r.collective_seq_id}: {r.describe()}")
        for frame in r.frames[:frames]:
            lines.append(f"        at {frame}")
        more = len(r.frames) - frames + r.frames_dropped
        if more > 0:
            lines.append(f"        ... {more} more frames")
    return lines


def _shown_ranks(d: Divergence, verbose: bool) -> tuple[list, int]:
    """The ranks whose records are printed: every deviating one (up to BRIEF_LIST) and one that
    agrees, to compare with; everything under --verbose."""
    ranks = sorted(d.records)
    if verbose or len(ranks) <= BRIEF_LIST:
        return ranks, 0
    deviating = [r for r in d.ranks if r in d.records][:BRIEF_LIST]
    agreeing = [r for r in ranks if r not in set(d.ranks)][:1]
    shown = sorted(deviating + agreeing)
    return shown, len(ranks) - len(shown)


def divergence_lines(d: Divergence, frames: int, verbose: bool = True) -> list[str]:
    lines = [f"  {f.kind}: {f.text}" for f in d.findings]
    shown, hidden = _shown_ranks(d, verbose)
    for rank in shown:
        lines += _record_lines(rank, d.records[rank], frames)
    if hidden:
        lines.append(f"    ... the records of {hidden} more rank(s) under --verbose")
    return lines


def _where(d: Divergence) -> str:
    if d.other:
        return f"order inversion between group {d.group} #{d.seq} and group {d.other[0]} " \
               f"#{d.other[1]}"
    if d.seq is None:
        return f"group {d.group}: the dumps disagree on its members"
    return f"group {d.group}, first divergence at collective_seq_id {d.seq}"


def _group_line(g) -> str:
    head = (f"group {g.name}" + (f" ({g.desc})" if g.desc else "") +
            f": members {ranks_text(g.members)}")
    if g.window:
        head += f"; collectives #{g.window[0]}..#{g.window[1]}: {g.matched} agree"
    if g.divergent:
        head += f", {g.divergent} diverge"
    if g.undecidable:
        by_why = collections.defaultdict(list)
        for r, why in g.undecidable.items():
            by_why[why].append(r)
        head += "; undecidable for " + "; ".join(f"rank(s) {ranks_text(rs)} ({why})"
                                                 for why, rs in sorted(by_why.items()))
    elif not g.first and not g.membership:
        head += "; consistent"
    if g.first:
        head += f"; first divergence at #{g.first.seq} ({', '.join(g.first.kinds)})"
    return head


def _summary(groups: list) -> str:
    counts = collections.Counter("divergent" if g.first or g.membership else
                                 "undecidable" if g.undecidable else "consistent" for g in groups)
    return f"{len(groups)} groups: " + ", ".join(f"{counts[k]} {k}" for k in
                                                 ("consistent", "divergent", "undecidable")
                                                 if counts[k])


def text(dumps, report: AgreementReport, frames: int = 8, verbose: bool = False,
         scenario=None, sim: dict | None = None, sim_error: str | None = None) -> str:
    """The report; `scenario`, `sim` and `sim_error` (command.simulate) are this run's, and only
    files this run wrote are named. The verdict line is agreement.outcome's, as is the exit."""
    versions = sorted({d.version for d in dumps})
    backends = sorted({g.backend for g in report.groups}) or ["unknown"]
    out = [f"import-fr: {len(dumps)} dump(s) (ranks {ranks_text(d.rank for d in dumps)}), "
           f"Flight Recorder version {', '.join(versions)}, backend {', '.join(backends)}"]
    if verbose or len(dumps) <= BRIEF_LIST:
        out += [f"  rank {d.rank}: {d.path} ({d.records} records"
                f"{', ring buffer wrapped' if d.wrapped else ''})"
                for d in dumps]
    ordered = report.ordered_divergences()
    if ordered:
        root, rest = ordered[0], ordered[1:]
        out.append(f"root cause: {_where(root)}:")
        out += divergence_lines(root, frames, verbose)
        if root.other and root.deadlocks:
            # A hazard of the order, not a claim about this run: the states above say whether it hung.
            out.append("  with serialized collective kernels (NCCL < 2.26) this order can deadlock")
        if rest:
            kinds = collections.Counter(k for d in rest for k in d.kinds)
            out.append(f"after it: {len(rest)} more divergence(s) (" +
                       ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + ") in " +
                       f"{len({d.group for d in rest})} group(s)" +
                       ("" if verbose else "; --verbose lists each, the JSON has them all"))
            for d in rest if verbose else rest[:BRIEF_LIST]:
                out.append(f"  {_where(d)} ({', '.join(d.kinds)}; "
                           f"ranks {ranks_text(d.ranks)})")
                if verbose:
                    out += divergence_lines(d, frames, verbose)
            if not verbose and len(rest) > BRIEF_LIST:
                out.append(f"  ... {len(rest) - BRIEF_LIST} more")
    if verbose or len(report.groups) <= BRIEF_GROUPS:
        for g in report.groups:
            out.append(_group_line(g))
            out += [f"  {f.kind}: {f.text}" for f in g.membership]
    else:
        out.append(_summary(report.groups))
        out += [_group_line(g) for g in report.groups if g.undecidable][:BRIEF_LIST]
    for inv in report.inversions:
        if not inv.deadlocks:
            out.append(f"note: order inversion between group {inv.group} and group "
                       f"{inv.other[0]} (safe: these groups' collectives do not serialize; "
                       "--kernels serialized says otherwise)")
            out += divergence_lines(inv, frames, verbose)
    if report.p2p_ignored:
        out.append(f"note: {report.p2p_ignored} point-to-point record(s) (send/recv) were not "
                   "matched: the import checks collectives only")
    out += [f"note: {n}" for n in report.notes]
    if scenario is not None:
        out.append(f"scenario: {scenario}")
    if sim:
        kinds = ", ".join(sim["hazard_kinds"]) or "no hazard"
        out.append(f"simulator: {sim['verdict']} ({kinds})")
        if sim["trace"]:
            out.append(f"  trace: {sim['trace']}  (amaxcheck replay {sim['trace']})")
        if sim["perfetto"]:
            out.append(f"  perfetto: {sim['perfetto']}  (open in ui.perfetto.dev)")
    out.append(verdict_line(report, sim, sim_error))
    return "\n".join(out)


def verdict_line(report: AgreementReport, sim: dict | None = None,
                 sim_error: str | None = None) -> str:
    verdict, reasons = outcome(report, sim, sim_error)
    if verdict == "divergent":
        n = len(report.divergences)
        return f"verdict: DIVERGENT ({n} divergence{'s' if n > 1 else ''})"
    if verdict == "hazard":
        return f"verdict: HAZARD ({'; '.join(reasons)})"
    if verdict == "error":
        return f"verdict: ERROR ({'; '.join(reasons)})"
    if verdict == "inconclusive":
        return f"verdict: INCONCLUSIVE (no divergence found, but {'; '.join(reasons)})"
    return "verdict: consistent"


def _record_json(r) -> dict:
    return {"record_id": r.record_id, "process_group": r.pg_name,
            "collective_seq_id": r.collective_seq_id, "profiling_name": r.profiling_name,
            "input_sizes": r.input_sizes, "input_dtypes": r.input_dtypes,
            "output_sizes": r.output_sizes, "output_dtypes": r.output_dtypes, "state": r.state,
            "frames": [{"name": f.name, "filename": f.filename, "line": f.line}
                       for f in r.frames], "frames_dropped": r.frames_dropped}


def _divergence_json(d: Divergence) -> dict:
    return {"group": d.group, "collective_seq_id": d.seq, "kinds": d.kinds,
            "other": None if d.other is None else {"group": d.other[0],
                                                    "collective_seq_id": d.other[1]},
            "deadlocks": d.deadlocks if d.other else None, "time_created_ns": d.time_ns,
            "findings": [{"kind": f.kind, "text": f.text} for f in d.findings],
            "ranks": d.ranks,
            "records": {str(r): [_record_json(x) for x in recs]
                        for r, recs in sorted(d.records.items())}}


def document(dumps, report: AgreementReport, sim: dict | None = None,
             sim_error: str | None = None) -> dict:
    ordered = report.ordered_divergences()
    verdict, reasons = outcome(report, sim, sim_error)
    return {
        "dumps": [{"rank": d.rank, "path": str(d.path), "version": d.version,
                   "records": d.records, "wrapped": d.wrapped}
                  for d in dumps],
        "missing_ranks": report.missing_ranks,
        "root_cause": _divergence_json(ordered[0]) if ordered else None,
        "knock_on": [{"group": d.group, "collective_seq_id": d.seq, "kinds": d.kinds,
                      "ranks": d.ranks} for d in ordered[1:]],
        "groups": [{"name": g.name, "desc": g.desc, "backend": g.backend,
                    "members": list(g.members),
                    "window": list(g.window) if g.window else None, "matched": g.matched,
                    "divergent": g.divergent,
                    "undecidable": {str(r): why for r, why in sorted(g.undecidable.items())},
                    "membership": [{"kind": f.kind, "text": f.text} for f in g.membership],
                    "first_divergence": _divergence_json(g.first) if g.first else None,
                    "divergent_seqs": [{"collective_seq_id": s, "kinds": k, "ranks": rs}
                                       for s, k, rs in g.divergent_seqs]}
                   for g in report.groups],
        "order_inversions": [_divergence_json(d) for d in report.inversions],
        "p2p_ignored": report.p2p_ignored,
        "notes": report.notes,
        # the dumps' own verdict, and the import's (with the simulator's check; as the exit)
        "agreement_verdict": report.verdict,
        "verdict": verdict,
        "verdict_reasons": reasons,
    }
