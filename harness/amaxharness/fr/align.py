"""Ring-buffer alignment: a dump keeps only its last N records, so ranks start at different
points. Keep, on every rank, the records from the largest first record_id onwards: before that
id at least one rank has already forgotten what it did, so nothing earlier can be compared.
"""

from __future__ import annotations

import dataclasses

from .dump import Dump


@dataclasses.dataclass
class Alignment:
    cutoff: int | None  # the first record_id kept (None: no records anywhere)
    records: dict  # rank -> [Record] kept, in record_id order
    dropped: dict  # rank -> number of records dropped


def align(dumps: list[Dump]) -> Alignment:
    firsts = [d.records[0].record_id for d in dumps if d.records]
    cutoff = max(firsts) if firsts else None
    records, dropped = {}, {}
    for d in dumps:
        kept = [r for r in d.records if cutoff is None or r.record_id >= cutoff]
        records[d.rank] = kept
        dropped[d.rank] = len(d.records) - len(kept)
    return Alignment(cutoff=cutoff, records=records, dropped=dropped)
