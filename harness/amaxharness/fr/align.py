"""Ring-buffer alignment, per process group by collective_seq_id.

A dump keeps only its newest records, so ranks start at different points; and ranks that issue
extra collectives (metrics, logging) run their record_id counters ahead, so a record_id cutoff
would drop every record of the ranks that run behind. Within one process group, though, the
k-th collective carries collective_seq_id k on every member. So each group is aligned on its
own: on every rank that still holds records of the group, they run from some first seq to its
last; the group is compared from the largest of those first seqs (before it, some rank has
forgotten what it did) up to the largest last one.

A ring buffer loses only its oldest records, so a rank whose records of the group end at #k
has issued nothing of the group since: for every later seq it is known not to have joined.
What stays unknown is a rank that holds no record of the group at all while its buffer has
wrapped (it may have issued any number before its window): its part is undecidable. A rank
whose buffer has not wrapped (record_ids from 0) holds its whole history.
"""

from __future__ import annotations

import collections
import dataclasses

from .dump import Dump


@dataclasses.dataclass
class GroupRecords:
    name: str
    desc: str
    backends: tuple  # the profiling names' prefixes seen ('gloo', 'nccl'), sorted
    per_rank: dict  # rank -> {collective_seq_id: [Record]}, ranks with a dump and records
    positions: dict  # rank -> [(index in the rank's records, collective_seq_id)] in issue order
    lo: int  # the first collective_seq_id compared
    hi: int  # the last one any rank recorded

    def first(self, rank: int) -> int:
        return next(iter(self.per_rank[rank]))

    def last(self, rank: int) -> int:
        return next(reversed(self.per_rank[rank]))

    @property
    def backend(self) -> str:
        return "/".join(self.backends) or "unknown"


@dataclasses.dataclass
class Alignment:
    groups: dict  # name -> GroupRecords, in group order (by name length, then name)
    records: dict  # rank -> [Record] (collectives and p2p), in record_id order
    wrapped: set  # ranks whose ring buffer has wrapped


def align(dumps: list[Dump]) -> Alignment:
    per_group: dict = {}
    descs, backends = {}, collections.defaultdict(set)
    for d in dumps:
        for i, r in enumerate(d.records):
            if r.is_p2p:
                continue
            name = r.pg_name
            if name not in per_group:
                per_group[name] = ({}, {})
                descs[name] = r.pg_desc
            by_rank, positions = per_group[name]
            by_rank.setdefault(d.rank, {}).setdefault(r.collective_seq_id, []).append(r)
            positions.setdefault(d.rank, []).append((i, r.collective_seq_id))
            backends[name].add(r.backend)
    groups = {}
    for name in sorted(per_group, key=lambda n: (len(n), n)):
        by_rank, positions = per_group[name]
        # a rank's records of one group come in seq order; sort anyway so first/last hold
        by_rank = {rank: dict(sorted(seqs.items())) for rank, seqs in by_rank.items()}
        lo = max(next(iter(seqs)) for seqs in by_rank.values())
        hi = max(next(reversed(seqs)) for seqs in by_rank.values())
        groups[name] = GroupRecords(name=name, desc=descs[name],
                                    backends=tuple(sorted(b for b in backends[name] if b)),
                                    per_rank=by_rank, positions=positions, lo=lo, hi=hi)
    return Alignment(groups=groups, records={d.rank: d.records for d in dumps},
                     wrapped={d.rank for d in dumps if d.wrapped})
