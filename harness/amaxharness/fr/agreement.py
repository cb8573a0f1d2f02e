"""Collective agreement across ranks, from aligned Flight Recorder records.

Per process group, the k-th collective a rank issues carries collective_seq_id k on every
member, so records are matched by (group, collective_seq_id). Matched records must agree on the
operation, the sizes and the dtypes (else NCCL pairs different operations: a hang, or silent
corruption when the sizes happen to fit), every member must have issued it (else the others
wait forever), and their states should agree. The first divergence of each group is reported
with every member's record and call stack.

Across groups, two ranks that issue the collectives of two shared groups in a different
relative order deadlock when collective kernels are serialized (NCCL < 2.26): reported as an
order inversion, a divergence under `serialized` and a note under `concurrent`.

Point-to-point records (is_p2p) are not matched; they are counted.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses

from .align import Alignment
from .dump import Dump, Record

KINDS = ("not_joined", "type_mismatch", "size_mismatch", "dtype_mismatch", "state_mismatch",
         "membership_mismatch", "order_inversion")


@dataclasses.dataclass
class Finding:
    kind: str
    text: str


@dataclasses.dataclass
class Divergence:
    group: str
    seq: int | None
    findings: list
    ranks: list  # the ranks that deviate (or do not join)
    records: dict  # rank -> [Record] at this seq ([] when missing)
    other: tuple | None = None  # order inversion: (other group, its seq)

    @property
    def kinds(self) -> list:
        return sorted({f.kind for f in self.findings}, key=KINDS.index)


@dataclasses.dataclass
class GroupReport:
    name: str
    desc: str
    members: tuple
    dumped: tuple  # members that have a dump
    window: tuple | None  # (first, last) collective_seq_id compared
    matched: int
    divergent: int  # collective_seq_ids with at least one finding
    first: Divergence | None
    membership: list  # membership_mismatch findings (the dumps' pg_config disagree)


@dataclasses.dataclass
class AgreementReport:
    groups: list
    inversions: list  # Divergence of kind order_inversion
    inversions_are_divergences: bool
    p2p_ignored: int
    notes: list

    @property
    def divergences(self) -> list:
        found = []
        for g in self.groups:
            if g.membership:
                found.append(Divergence(group=g.name, seq=None, findings=g.membership, ranks=[],
                                        records={}))
            if g.first:
                found.append(g.first)
        return found + (self.inversions if self.inversions_are_divergences else [])


def _signature(records: list) -> tuple:
    return tuple(r.op for r in records)


def _sizes(records: list) -> tuple:
    # all_to_all splits may legitimately differ per rank; only the other collectives must agree.
    return tuple(None if "all_to_all" in r.op or "alltoall" in r.op else
                 (tuple(map(tuple, r.input_sizes)), tuple(map(tuple, r.output_sizes)))
                 for r in records)


def _dtypes(records: list) -> tuple:
    return tuple((tuple(r.input_dtypes), tuple(r.output_dtypes)) for r in records)


def _states(records: list) -> tuple:
    return tuple(r.state for r in records)


def _show_sizes(records: list) -> str:
    return " + ".join(f"in {r.input_sizes} out {r.output_sizes}" for r in records)


def _show_dtypes(records: list) -> str:
    return " + ".join(f"in {'/'.join(r.input_dtypes) or '?'} out {'/'.join(r.output_dtypes) or '?'}"
                      for r in records)


ASPECTS = (("type_mismatch", "operations", _signature, lambda rs: " + ".join(_signature(rs))),
           ("size_mismatch", "sizes", _sizes, _show_sizes),
           ("dtype_mismatch", "dtypes", _dtypes, _show_dtypes),
           ("state_mismatch", "states", _states, lambda rs: " + ".join(_states(rs))))


def _deviants(by_rank: dict, key) -> tuple[list, list]:
    """Ranks outside the largest agreeing block (all of them on a tie), and the blocks."""
    blocks = collections.defaultdict(list)
    for rank, recs in by_rank.items():
        blocks[key(recs)].append(rank)
    ordered = sorted((sorted(ranks) for ranks in blocks.values()), key=lambda b: b[0])
    if len(ordered) <= 1:
        return [], ordered
    sizes = sorted((len(b) for b in ordered), reverse=True)
    if sizes[0] == sizes[1]:
        return sorted(by_rank), ordered
    majority = max(ordered, key=len)
    return sorted(r for r in by_rank if r not in majority), ordered


def _describe_blocks(blocks: list, by_rank: dict, show) -> str:
    return "; ".join(f"rank{'s' if len(b) > 1 else ''} {_ranks(b)}: {show(by_rank[b[0]])}"
                     for b in blocks)


def _ranks(ranks) -> str:
    return ", ".join(map(str, sorted(ranks)))


def _group_members(dumps: list[Dump], name: str, recorded: dict) -> tuple[tuple, list]:
    listed = {d.rank: d.pg_config[name].ranks for d in dumps if name in d.pg_config}
    findings = []
    if listed:
        variants = collections.defaultdict(list)
        for rank, ranks in listed.items():
            variants[tuple(sorted(ranks))].append(rank)
        members = max(variants, key=lambda v: (len(variants[v]), v))
        if len(variants) > 1:
            findings.append(Finding("membership_mismatch", "the dumps disagree on the members: " +
                                    "; ".join(f"rank(s) {_ranks(v)} say {list(k)}"
                                              for k, v in sorted(variants.items()))))
        return members, findings
    return tuple(sorted(r for r, per_seq in recorded.items() if per_seq)), findings


def check_group(name: str, desc: str, dumps: list[Dump], alignment: Alignment) -> GroupReport:
    recorded = {}
    for d in dumps:
        per_seq = collections.defaultdict(list)
        for r in alignment.records[d.rank]:
            if r.pg_name == name and not r.is_p2p:
                per_seq[r.collective_seq_id].append(r)
        recorded[d.rank] = per_seq
    members, member_findings = _group_members(dumps, name, recorded)
    dumped = tuple(r for r in members if r in recorded)
    present = [r for r in dumped if recorded[r]]
    report = GroupReport(name=name, desc=desc, members=members, dumped=dumped, window=None,
                         matched=0, divergent=0, first=None, membership=member_findings)
    if not present:
        return report
    lo = max(min(recorded[r]) for r in present)
    hi = max(max(recorded[r]) for r in present)
    report.window = (lo, hi)
    for seq in range(lo, hi + 1):
        at = {r: recorded[r].get(seq, []) for r in dumped}
        have = {r: recs for r, recs in at.items() if recs}
        if not have:
            continue
        findings, deviating = [], set()
        for r in sorted(set(dumped) - set(have)):
            last = max(recorded[r]) if recorded[r] else None
            if last is None or last < seq:
                why = "never issued it" + ("" if last is None else f" (its last is #{last})")
            else:
                why = "has no record of it (a gap in its buffer)"
            findings.append(Finding("not_joined", f"rank {r} {why}"))
            deviating.add(r)
        for kind, label, key, show in ASPECTS:
            odd, blocks = _deviants(have, key)
            if odd:
                findings.append(Finding(kind, f"{label} differ: "
                                              f"{_describe_blocks(blocks, have, show)}"))
                deviating |= set(odd)
        if not findings:
            report.matched += 1
            continue
        report.divergent += 1
        if report.first is None:
            report.first = Divergence(group=name, seq=seq, findings=findings,
                                      ranks=sorted(deviating), records=at)
    return report


def _positions(records: list, group: str, window) -> dict:
    pos = {}
    for i, r in enumerate(records):
        if r.pg_name == group and not r.is_p2p and window and r.collective_seq_id >= window[0]:
            pos.setdefault(r.collective_seq_id, i)
    return pos


def find_inversions(groups: list[GroupReport], alignment: Alignment) -> list[Divergence]:
    """The first cross-group order inversion of each pair of groups sharing two dumped ranks."""
    found = []
    for gi, a in enumerate(groups):
        for b in groups[gi + 1:]:
            shared = sorted(set(a.dumped) & set(b.dumped))
            if len(shared) < 2 or not a.window or not b.window:
                continue
            pa = {r: _positions(alignment.records[r], a.name, a.window) for r in shared}
            pb = {r: _positions(alignment.records[r], b.name, b.window) for r in shared}
            # per rank: a's seqs sorted by issue position, to find the last one before b#j
            order = {r: sorted(pa[r].items(), key=lambda kv: kv[1]) for r in shared}
            for j in sorted(set.intersection(*(set(pb[r]) for r in shared))):
                last = {}
                for r in shared:
                    k = bisect.bisect_left([p for _, p in order[r]], pb[r][j])
                    last[r] = max((s for s, _ in order[r][:k]), default=None)
                if len(set(last.values())) <= 1:
                    continue
                early = min(shared, key=lambda r: (-1 if last[r] is None else last[r], r))
                late = max(shared, key=lambda r: (-1 if last[r] is None else last[r], r))
                a_seq = (last[early] + 1) if last[early] is not None else min(pa[late])
                if a_seq not in pa[early] or a_seq not in pa[late]:
                    continue  # the other rank never issued it: a not_joined, reported per group
                text = (f"rank {late} issues group {a.name} #{a_seq} before group {b.name} #{j}; "
                        f"rank {early} issues group {b.name} #{j} first")
                records = {late: [alignment.records[late][pa[late][a_seq]],
                                  alignment.records[late][pb[late][j]]],
                           early: [alignment.records[early][pb[early][j]],
                                   alignment.records[early][pa[early][a_seq]]]}
                found.append(Divergence(group=a.name, seq=a_seq, other=(b.name, j),
                                        findings=[Finding("order_inversion", text)],
                                        ranks=sorted({early, late}), records=records))
                break
    return found


def check(dumps: list[Dump], alignment: Alignment, kernels: str = "serialized") -> AgreementReport:
    names = {}
    for d in dumps:
        for r in alignment.records[d.rank]:
            if not r.is_p2p:
                names.setdefault(r.pg_name, r.pg_desc)
    groups = [check_group(n, names[n], dumps, alignment)
              for n in sorted(names, key=lambda n: (len(n), n))]
    notes = []
    for g in groups:
        missing = sorted(set(g.members) - set(g.dumped))
        if missing:
            notes.append(f"group {g.name}: no dump for member rank(s) {_ranks(missing)}; "
                         "they are not checked")
    p2p = sum(1 for recs in alignment.records.values() for r in recs if r.is_p2p)
    return AgreementReport(groups=groups, inversions=find_inversions(groups, alignment),
                           inversions_are_divergences=(kernels == "serialized"),
                           p2p_ignored=p2p, notes=notes)


__all__ = ["AgreementReport", "Divergence", "Finding", "GroupReport", "Record", "check"]
