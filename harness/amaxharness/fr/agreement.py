"""Collective agreement across ranks, from Flight Recorder records aligned per group (align.py).

Per process group, the k-th collective a rank issues carries collective_seq_id k on every
member, so records are matched by (group, collective_seq_id). Matched records must agree on the
operation, the sizes and the dtypes (else the backend pairs different operations: a hang, or
silent corruption when the sizes happen to fit), every member must have issued it (else the
others wait forever), and their states should agree (not compared for gloo, which records
every collective as `scheduled`). Only the seqs some rank recorded are visited, so the work is
linear in the records, whatever the seq values.

Members come from the dumps' pg_config (the majority view; the dumps disagreeing is itself a
finding), else from the ranks that recorded the group. A member without a dump, or one whose
wrapped buffer holds no record of the group, is undecidable: the verdict is then never
"consistent" (inconclusive, unless a divergence is found elsewhere).

Across groups, two ranks that issue the collectives of two shared groups in a different
relative order deadlock when collective kernels are serialized: NCCL < 2.26 runs one
communicator's kernel at a time per device. gloo runs each group on its own threads, so there
an inversion is a note. The rule follows each group's backend (`--kernels auto`, the default)
unless the user forces `serialized` or `concurrent`.

Point-to-point records (is_p2p) are not matched; they are counted.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
import itertools

from .align import Alignment, GroupRecords
from .dump import Dump, Record, cut

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
    time_ns: int | None = None  # the earliest time_created_ns of its records (0s ignored)
    deadlocks: bool = True  # order inversion: under the kernels rule that applies

    @property
    def kinds(self) -> list:
        return sorted({f.kind for f in self.findings}, key=KINDS.index)


@dataclasses.dataclass
class GroupReport:
    name: str
    desc: str
    backend: str
    members: tuple
    dumped: tuple  # members that have a dump
    window: tuple | None  # (first, last) collective_seq_id compared
    matched: int
    divergent: int  # collective_seq_ids with at least one finding
    first: Divergence | None
    membership: list  # membership_mismatch findings (the dumps' pg_config disagree)
    undecidable: dict  # rank -> why its part cannot be checked
    divergent_seqs: list  # (seq, kinds, ranks) of every divergent collective_seq_id


@dataclasses.dataclass
class AgreementReport:
    groups: list
    inversions: list  # Divergence of kind order_inversion, each with .deadlocks
    p2p_ignored: int
    notes: list
    missing_ranks: list  # ranks known to exist that have no dump

    @property
    def divergences(self) -> list:
        found = []
        for g in self.groups:
            if g.membership:
                found.append(Divergence(group=g.name, seq=None, findings=g.membership, ranks=[],
                                        records={}))
            if g.first:
                found.append(g.first)
        return found + [inv for inv in self.inversions if inv.deadlocks]

    @property
    def undecidable(self) -> bool:
        return bool(self.missing_ranks) or any(g.undecidable for g in self.groups)

    @property
    def verdict(self) -> str:
        if self.divergences:
            return "divergent"
        return "inconclusive" if self.undecidable else "consistent"

    def ordered_divergences(self) -> list:
        """The root cause first: the earliest divergence in time (time_created_ns), then seq;
        those without a time (membership) come last."""
        return sorted(self.divergences, key=lambda d: (
            d.time_ns is None, d.time_ns or 0, d.seq if d.seq is not None else -1,
            len(d.group), d.group))


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
    return cut(" + ".join(f"in {r.input_sizes} out {r.output_sizes}" for r in records))


def _show_dtypes(records: list) -> str:
    return cut(" + ".join(f"in {'/'.join(r.input_dtypes) or '?'} "
                          f"out {'/'.join(r.output_dtypes) or '?'}" for r in records))


ASPECTS = (("type_mismatch", "operations", _signature,
            lambda rs: cut(" + ".join(_signature(rs)))),
           ("size_mismatch", "sizes", _sizes, _show_sizes),
           ("dtype_mismatch", "dtypes", _dtypes, _show_dtypes),
           ("state_mismatch", "states", _states, lambda rs: cut(" + ".join(_states(rs)))))


def _alike_key(records: list, states: bool) -> tuple:
    return tuple((r.profiling_name, r.input_sizes, r.output_sizes, r.input_dtypes,
                  r.output_dtypes, r.state if states else None) for r in records)


def _all_alike(have: dict, states: bool) -> bool:
    """The common case, checked at once: every rank's records agree in every aspect."""
    it = iter(have.values())
    first = _alike_key(next(it), states)
    return all(_alike_key(recs, states) == first for recs in it)


def _deviants(by_rank: dict, key) -> tuple[list, list]:
    """Ranks outside the largest agreeing block (all of them on a tie), and the blocks."""
    blocks = collections.defaultdict(list)
    for rank, recs in by_rank.items():
        blocks[key(recs)].append(rank)
    if len(blocks) <= 1:
        return [], []
    ordered = sorted((sorted(ranks) for ranks in blocks.values()), key=lambda b: b[0])
    sizes = sorted((len(b) for b in ordered), reverse=True)
    if sizes[0] == sizes[1]:
        return sorted(by_rank), ordered
    majority = set(max(ordered, key=len))
    return sorted(r for r in by_rank if r not in majority), ordered


def _describe_blocks(blocks: list, by_rank: dict, show) -> str:
    return "; ".join(f"rank{'s' if len(b) > 1 else ''} {ranks_text(b)}: {show(by_rank[b[0]])}"
                     for b in blocks)


def ranks_text(ranks) -> str:
    """Sorted ranks with runs folded: 0, 2-5, 9."""
    out = []
    for _, run in itertools.groupby(enumerate(sorted(ranks)), lambda p: p[1] - p[0]):
        run = [r for _, r in run]
        out.append(str(run[0]) if len(run) == 1 else
                   f"{run[0]}, {run[1]}" if len(run) == 2 else f"{run[0]}-{run[-1]}")
    return ", ".join(out)


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
                                    "; ".join(f"rank(s) {ranks_text(v)} say {list(k)}"
                                              for k, v in sorted(variants.items()))))
        return members, findings
    return tuple(sorted(recorded)), findings


def _earliest(at: dict) -> int | None:
    times = [r.time_created_ns for recs in at.values() for r in recs if r.time_created_ns]
    return min(times) if times else None


def _not_joined(absent: dict) -> list:
    """One finding per reason, with the ranks it holds for folded: rank -> why."""
    by_why = collections.defaultdict(list)
    for rank, why in absent.items():
        by_why[why].append(rank)
    return [Finding("not_joined", f"rank{'s' if len(ranks) > 1 else ''} {ranks_text(ranks)} "
                                  f"{why}") for why, ranks in sorted(by_why.items(),
                                                                     key=lambda kv: min(kv[1]))]


def check_group(g: GroupRecords, dumps: list[Dump], alignment: Alignment) -> GroupReport:
    by_rank = {d.rank: d for d in dumps}
    recorded = g.per_rank
    members, member_findings = _group_members(dumps, g.name, recorded)
    dumped = tuple(r for r in members if r in by_rank)
    undecidable = {r: "no dump" for r in members if r not in by_rank}
    # members with a dump but no record of the group: known never to have issued one when
    # their buffer holds its whole history, unknown when it wrapped
    silent = [r for r in dumped if r not in recorded]
    for r in silent:
        if r in alignment.wrapped:
            undecidable[r] = "its wrapped ring buffer holds no record of this group"
    never = [r for r in silent if r not in undecidable]
    present = [r for r in dumped if r in recorded]
    report = GroupReport(name=g.name, desc=g.desc, backend=g.backend, members=members,
                         dumped=dumped, window=(g.lo, g.hi), matched=0, divergent=0, first=None,
                         membership=member_findings, undecidable=undecidable, divergent_seqs=[])
    compare_states = g.backends != ("gloo",)
    seqs = sorted({s for r in present for s in recorded[r] if s >= g.lo})
    lasts = {r: g.last(r) for r in present}
    for seq in seqs:
        have, absent = {}, {}
        for r in present:
            recs = recorded[r].get(seq)
            if recs:
                have[r] = recs
            elif lasts[r] < seq:
                absent[r] = f"never issued it (its last is #{lasts[r]})"
            else:
                absent[r] = "has no record of it (a gap in its buffer)"
        for r in never:
            absent[r] = "never issued it (no record of this group in an unwrapped buffer)"
        findings = _not_joined(absent)
        deviating = set(absent)
        for kind, label, key, show in () if _all_alike(have, compare_states) else ASPECTS:
            if kind == "state_mismatch" and not compare_states:
                continue
            odd, blocks = _deviants(have, key)
            if odd:
                findings.append(Finding(kind, f"{label} differ: "
                                              f"{_describe_blocks(blocks, have, show)}"))
                deviating |= set(odd)
        if not findings:
            report.matched += 1
            continue
        report.divergent += 1
        kinds = sorted({f.kind for f in findings}, key=KINDS.index)
        report.divergent_seqs.append((seq, kinds, sorted(deviating)))
        if report.first is None:
            at = {r: have.get(r, []) for r in dumped if r not in undecidable}
            report.first = Divergence(group=g.name, seq=seq, findings=findings,
                                      ranks=sorted(deviating), records=at, time_ns=_earliest(at))
    return report


def _last_before(positions: list, lo_a: int, b_positions: list, lo_b: int) -> dict:
    """For each of b's seqs (>= lo_b) on one rank: the last seq of a (>= lo_a) issued before it."""
    a = [(p, s) for p, s in positions if s >= lo_a]
    a_pos = [p for p, _ in a]
    out = {}
    for p, s in b_positions:
        if s >= lo_b:
            k = bisect.bisect_left(a_pos, p)
            out.setdefault(s, a[k - 1][1] if k else None)
    return out


def _inversion(a: GroupRecords, b: GroupRecords, shared: list, alignment: Alignment):
    """The first seq of b whose position relative to a's collectives differs between ranks."""
    last = {r: _last_before(a.positions[r], a.lo, b.positions[r], b.lo) for r in shared}
    a_first = {r: {} for r in shared}
    for r in shared:
        for p, s in a.positions[r]:
            a_first[r].setdefault(s, p)
    common = set.intersection(*(set(last[r]) for r in shared))
    for j in sorted(common):
        at = {r: last[r][j] for r in shared}
        if len(set(at.values())) <= 1:
            continue
        key = lambda r: (-1 if at[r] is None else at[r], r)  # noqa: E731
        early, late = min(shared, key=key), max(shared, key=key)
        a_seq = (at[early] + 1) if at[early] is not None else min(
            s for s in a_first[late] if s >= a.lo)
        if a_seq not in a_first[early] or a_seq not in a_first[late]:
            continue  # the other rank never issued it: a not_joined, reported per group
        b_pos = {r: next(p for p, s in b.positions[r] if s == j) for r in (early, late)}
        text = (f"rank {late} issues group {a.name} #{a_seq} before group {b.name} #{j}; "
                f"rank {early} issues group {b.name} #{j} first")
        records = {late: [alignment.records[late][a_first[late][a_seq]],
                          alignment.records[late][b_pos[late]]],
                   early: [alignment.records[early][b_pos[early]],
                           alignment.records[early][a_first[early][a_seq]]]}
        return Divergence(group=a.name, seq=a_seq, other=(b.name, j),
                          findings=[Finding("order_inversion", text)],
                          ranks=sorted({early, late}), records=records,
                          time_ns=_earliest(records))
    return None


def inversion_deadlocks(a: GroupRecords, b: GroupRecords, kernels: str) -> bool:
    """Whether an order inversion between a and b deadlocks under `kernels`: serialized and
    concurrent are the user's word; auto serializes NCCL groups only (gloo runs each group on
    its own threads, and NCCL >= 2.26 users say `concurrent`)."""
    if kernels != "auto":
        return kernels == "serialized"
    return a.backends == ("nccl",) and b.backends == ("nccl",)


def find_inversions(alignment: Alignment, kernels: str) -> list[Divergence]:
    """The first cross-group order inversion of each pair of groups sharing two ranks: the
    pairs are found from each rank's groups, so groups that share no rank cost nothing."""
    groups_of = collections.defaultdict(list)
    for name, g in alignment.groups.items():
        for r in g.per_rank:
            groups_of[r].append(name)
    shared = collections.defaultdict(list)
    order = {name: i for i, name in enumerate(alignment.groups)}
    for r, names in sorted(groups_of.items()):
        for a, b in itertools.combinations(sorted(names, key=order.get), 2):
            shared[(a, b)].append(r)
    found = []
    for (a_name, b_name), ranks in sorted(shared.items(),
                                          key=lambda kv: (order[kv[0][0]], order[kv[0][1]])):
        if len(ranks) < 2:
            continue
        a, b = alignment.groups[a_name], alignment.groups[b_name]
        inv = _inversion(a, b, ranks, alignment)
        if inv:
            inv.deadlocks = inversion_deadlocks(a, b, kernels)
            found.append(inv)
    return found


def known_ranks(dumps: list[Dump]) -> set:
    """Every rank the dumps show exists: the dumped ones, every pg_config member, and every rank
    below the largest (ranks run 0..world_size-1)."""
    ranks = {d.rank for d in dumps}
    for d in dumps:
        for pg in d.pg_config.values():
            ranks.update(pg.ranks)
    return set(range(max(ranks) + 1)) if ranks else set()


def check(dumps: list[Dump], alignment: Alignment, kernels: str = "auto") -> AgreementReport:
    groups = [check_group(g, dumps, alignment) for g in alignment.groups.values()]
    missing = sorted(known_ranks(dumps) - {d.rank for d in dumps})
    notes = []
    if missing:
        notes.append(f"no dump for rank(s) {ranks_text(missing)}: what they did is unknown, so "
                     "the job cannot be called consistent")
    p2p = sum(1 for recs in alignment.records.values() for r in recs if r.is_p2p)
    return AgreementReport(groups=groups, inversions=find_inversions(alignment, kernels),
                           p2p_ignored=p2p, notes=notes, missing_ranks=missing)


__all__ = ["AgreementReport", "Divergence", "Finding", "GroupReport", "Record", "check"]
