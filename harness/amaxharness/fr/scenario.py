"""The dumps as an explicit amaxcheck scenario (traces/SCENARIO.md), so that the simulator's
collective-agreement and deadlock detectors check them, and `check`/`replay`/`export` work.

One scenario rank per dump (in rank order), one host thread per rank that issues that rank's
collectives in record order, one stream and one communicator per process group (NCCL runs each
group's work on its own internal stream). Each collective gets its own buffer range, so no race
is invented between unrelated collectives.

Two liberties, both so the simulator can hold a real job's dump:
- Element counts are renumbered: every distinct size in the dumps maps to a small count
  (1, 2, 3, ... in size order). Equal sizes stay equal and different sizes stay different, which
  is all that collective agreement compares; the real shapes are kept in each op's origin.
- Collectives the model has no kind for (all_to_all, reduce, gather, barrier, ...) become
  all_reduce ops named after the real operation. A dtype other than BFloat16 becomes f32. The
  Python agreement check above sees the exact kinds and dtypes; the simulator sees the order,
  the participation and the sizes.
"""

from __future__ import annotations

import re

from .align import Alignment
from .dump import Dump, Record

KINDS = {"all_reduce": "all_reduce", "allreduce": "all_reduce",
         "all_gather": "all_gather", "_allgather_base": "all_gather", "allgather": "all_gather",
         "all_gather_into_tensor": "all_gather", "all_gather_into_tensor_coalesced": "all_gather",
         "reduce_scatter": "reduce_scatter", "_reduce_scatter_base": "reduce_scatter",
         "reduce_scatter_tensor": "reduce_scatter",
         "reduce_scatter_tensor_coalesced": "reduce_scatter", "broadcast": "broadcast"}


def sim_kind(record: Record) -> str:
    return KINDS.get(record.op, "all_reduce")


def sim_dtype(record: Record) -> str:
    dtypes = record.input_dtypes or record.output_dtypes
    return "bf16" if dtypes and dtypes[0] == "BFloat16" else "f32"


def _size_map(records) -> dict:
    sizes = set()
    for r in records:
        sizes.add(r.numel())
        sizes.add(r.numel(r.output_sizes))
    return {n: i + 1 for i, n in enumerate(sorted(sizes))}


def _origin(r: Record) -> str:
    text = (f"rank {r.rank} record {r.record_id}: group {r.pg_name} #{r.collective_seq_id} "
            f"{r.describe()}")
    if r.frames:  # the first frame outside torch itself: the user's call site
        user = [f for f in r.frames if not re.search(r"(^|/)torch/", f.filename)]
        text += f" at {(user or r.frames)[0]}"
    return text


def build(dumps: list[Dump], alignment: Alignment, kernels: str, source: str) -> dict:
    """The scenario document (explicit form)."""
    kept = {d.rank: [r for r in alignment.records[d.rank] if not r.is_p2p] for d in dumps}
    # Per group, start where every rank that recorded it still has it, as the agreement check
    # does; otherwise the k-th collectives the simulator pairs would not be the same ones.
    first_seq: dict[str, int] = {}
    for recs in kept.values():
        seen: dict[str, int] = {}
        for r in recs:
            seen.setdefault(r.pg_name, r.collective_seq_id)
            seen[r.pg_name] = min(seen[r.pg_name], r.collective_seq_id)
        for g, lo in seen.items():
            first_seq[g] = max(first_seq.get(g, lo), lo)
    kept = {rank: [r for r in recs if r.collective_seq_id >= first_seq[r.pg_name]]
            for rank, recs in kept.items()}
    size_of = _size_map(r for recs in kept.values() for r in recs)
    groups: list[str] = []
    for recs in kept.values():
        for r in recs:
            if r.pg_name not in groups:
                groups.append(r.pg_name)
    groups.sort(key=lambda n: (len(n), n))
    index_of_rank = {d.rank: i for i, d in enumerate(dumps)}
    members: dict[str, list[int]] = {g: [] for g in groups}
    for d in dumps:
        for g in groups:
            listed = d.pg_config.get(g)
            in_group = (d.rank in listed.ranks) if listed else any(r.pg_name == g
                                                                 for r in kept[d.rank])
            if in_group:
                members[g].append(index_of_rank[d.rank])
    comms = [{"name": f"pg {g}", "members": members[g]} for g in groups]
    ranks = []
    for d in dumps:
        ops, offset = [], 0
        for r in kept[d.rank]:
            m = max(len(members[r.pg_name]), 1)
            kind = sim_kind(r)
            c_in, c_out = size_of[r.numel()], size_of[r.numel(r.output_sizes)]
            if kind == "all_gather":
                reads, writes = c_in, c_in * m
            elif kind == "reduce_scatter":
                reads, writes = c_out * m, c_out
            else:
                reads = writes = c_in
            read_range = {"buffer": "collectives", "offset": offset, "count": reads}
            in_place = kind in ("all_reduce", "broadcast")
            write_range = read_range if in_place else \
                {"buffer": "collectives", "offset": offset + reads, "count": writes}
            offset += reads + (0 if in_place else writes)
            op = {"kind": kind, "name": f"pg {r.pg_name} #{r.collective_seq_id} {r.op}",
                  "origin": _origin(r), "stream": f"pg {r.pg_name}", "comm": f"pg {r.pg_name}",
                  "reads": [read_range], "writes": [write_range]}
            if kind in ("all_reduce", "reduce_scatter"):
                op["reduce"] = "sum"
            if sim_dtype(r) != "f32":
                op["dtype"] = sim_dtype(r)
            ops.append(op)
        ranks.append({
            "name": f"rank {d.rank}", "device": index_of_rank[d.rank],
            "threads": [{"name": "main", "program": ops}],
            "streams": [f"pg {g}" for g in groups],
            "events": [],
            "flags": [],
            "buffers": [{"name": "collectives", "size": max(offset, 1)}],
        })
    return {"name": "flight-recorder import", "kernels": kernels, "source": source,
            "ranks": ranks, "comms": comms, "checks": []}
