"""The import's report: human text (the default) and a JSON document (--json)."""

from __future__ import annotations

from .agreement import AgreementReport, Divergence
from .align import Alignment


def _record_lines(rank: int, records: list, frames: int) -> list[str]:
    if not records:
        return [f"    rank {rank}: (no record)"]
    lines = []
    for r in records:
        lines.append(f"    rank {rank}: record {r.record_id}, group {r.pg_name} "
                     f"#{r.collective_seq_id}: {r.describe()}")
        for frame in r.frames[:frames]:
            lines.append(f"        at {frame}")
        if len(r.frames) > frames:
            lines.append(f"        ... {len(r.frames) - frames} more frames")
    return lines


def divergence_lines(d: Divergence, frames: int) -> list[str]:
    lines = [f"  {f.kind}: {f.text}" for f in d.findings]
    for rank in sorted(d.records):
        lines += _record_lines(rank, d.records[rank], frames)
    return lines


def text(dumps, alignment: Alignment, report: AgreementReport, frames: int = 8) -> str:
    versions = sorted({d.version for d in dumps})
    out = [f"import-fr: {len(dumps)} dump(s), Flight Recorder version {', '.join(versions)}"]
    out += [f"  rank {d.rank}: {d.path} ({len(d.records)} records)" for d in dumps]
    dropped = {r: n for r, n in alignment.dropped.items() if n}
    if alignment.cutoff is not None:
        out.append(f"aligned from record_id {alignment.cutoff}" +
                   (" (ring buffer wrapped; dropped " +
                    ", ".join(f"rank {r}: {n}" for r, n in sorted(dropped.items())) + ")"
                    if dropped else ""))
    for g in report.groups:
        head = (f"group {g.name}" + (f" ({g.desc})" if g.desc else "") +
                f": members {', '.join(map(str, g.members))}")
        if g.window:
            head += f"; collectives #{g.window[0]}..#{g.window[1]}: {g.matched} agree"
        if g.divergent:
            head += f", {g.divergent} diverge"
        if not g.first and not g.membership:
            out.append(head + "; consistent")
            continue
        out.append(head)
        for f in g.membership:
            out.append(f"  {f.kind}: {f.text}")
        if g.first:
            out.append(f"  first divergence at collective_seq_id {g.first.seq}:")
            out += divergence_lines(g.first, frames)
    for inv in report.inversions:
        label = "order inversion" if report.inversions_are_divergences else \
            "note: order inversion (safe only when collective kernels run concurrently)"
        out.append(f"{label} between group {inv.group} and group {inv.other[0]}:")
        out += divergence_lines(inv, frames)
        if report.inversions_are_divergences:
            out.append("  with serialized collective kernels (NCCL < 2.26) this deadlocks")
    if report.p2p_ignored:
        out.append(f"note: {report.p2p_ignored} point-to-point record(s) were not matched")
    out += [f"note: {n}" for n in report.notes]
    n = len(report.divergences)
    out.append(f"verdict: {'DIVERGENT' if n else 'consistent'}" +
               (f" ({n} divergence{'s' if n > 1 else ''})" if n else ""))
    return "\n".join(out)


def _record_json(r) -> dict:
    return {"record_id": r.record_id, "process_group": r.pg_name,
            "collective_seq_id": r.collective_seq_id, "profiling_name": r.profiling_name,
            "input_sizes": r.input_sizes, "input_dtypes": r.input_dtypes,
            "output_sizes": r.output_sizes, "output_dtypes": r.output_dtypes, "state": r.state,
            "frames": [{"name": f.name, "filename": f.filename, "line": f.line}
                       for f in r.frames]}


def _divergence_json(d: Divergence) -> dict:
    return {"group": d.group, "collective_seq_id": d.seq, "kinds": d.kinds,
            "other": None if d.other is None else {"group": d.other[0],
                                                    "collective_seq_id": d.other[1]},
            "findings": [{"kind": f.kind, "text": f.text} for f in d.findings],
            "ranks": d.ranks,
            "records": {str(r): [_record_json(x) for x in recs]
                        for r, recs in sorted(d.records.items())}}


def document(dumps, alignment: Alignment, report: AgreementReport) -> dict:
    return {
        "dumps": [{"rank": d.rank, "path": str(d.path), "version": d.version,
                   "records": len(d.records)} for d in dumps],
        "aligned_from_record_id": alignment.cutoff,
        "dropped": {str(r): n for r, n in sorted(alignment.dropped.items())},
        "groups": [{"name": g.name, "desc": g.desc, "members": list(g.members),
                    "window": list(g.window) if g.window else None, "matched": g.matched,
                    "divergent": g.divergent,
                    "membership": [{"kind": f.kind, "text": f.text} for f in g.membership],
                    "first_divergence": _divergence_json(g.first) if g.first else None}
                   for g in report.groups],
        "order_inversions": [_divergence_json(d) for d in report.inversions],
        "order_inversions_are_divergences": report.inversions_are_divergences,
        "p2p_ignored": report.p2p_ignored,
        "notes": report.notes,
        "verdict": "divergent" if report.divergences else "consistent",
    }
