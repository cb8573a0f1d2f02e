"""The dumps as an explicit amaxcheck scenario (traces/SCENARIO.md), so that the simulator's
collective-agreement and deadlock detectors check them, and `check`/`replay`/`export` work.

One scenario rank per dump (in rank order), one host thread per rank that issues that rank's
collectives in record order, one stream and one communicator per process group (NCCL runs each
group's work on its own internal stream). Each collective gets its own buffer range, so no race
is invented between unrelated collectives.

The scenario is windowed, so the simulated part stays small however big the job: per group,
the last `--window` collectives up to and including its first divergence (or up to its last
collective when it has none), the same seqs on every member, so the k-th collectives the
simulator pairs are the same ones. The program chooses them (src/fr/window.h).

Two liberties, both so the simulator can hold a real job's dump:
- Element counts are renumbered: every distinct size in the dumps maps to a small count
  (1, 2, 3, ... in size order). Equal sizes stay equal and different sizes stay different, which
  is all that collective agreement compares; the real shapes are kept in each op's origin.
- Collectives the model has no kind for (all_to_all, reduce, gather, barrier, ...) become
  all_reduce ops named after the real operation. A dtype other than BFloat16 becomes f32. The
  agreement check (src/fr/agreement.h) sees the exact kinds and dtypes; the simulator sees the order,
  the participation and the sizes.
"""

from __future__ import annotations

import re

from .agreement import AgreementReport
from .dump import Record, Scan

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


def build(scan: Scan, report: AgreementReport, kernels: str, source: str) -> dict:
    """The scenario document (explicit form) of the window the program kept (scan.kept)."""
    dumps, kept = scan.dumps, scan.kept
    size_of = _size_map(r for recs in kept.values() for r in recs)
    groups = [g.name for g in report.groups]
    index_of_rank = {d.rank: i for i, d in enumerate(dumps)}
    members: dict[str, list[int]] = {}
    for g in report.groups:
        # a member whose part is undecidable stays out: what it issued is unknown, and the
        # simulator would otherwise call its silence a hang
        members[g.name] = [index_of_rank[r] for r in g.dumped if r not in g.undecidable]
    comm_of = {g: f"pg {g}" if len(g) <= 40 else f"pg #{i} {g[:40]}"
               for i, g in enumerate(groups)}
    comms = [{"name": comm_of[g], "members": members[g]} for g in groups]
    if kernels == "auto":
        nccl = all(g.backends == ("nccl",) for g in report.groups)
        kernels = "serialized" if nccl else "concurrent"
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
            comm = comm_of[r.pg_name]
            op = {"kind": kind, "name": f"{comm} #{r.collective_seq_id} {r.op[:60]}",
                  "origin": _origin(r), "stream": comm, "comm": comm,
                  "reads": [read_range], "writes": [write_range]}
            if kind in ("all_reduce", "reduce_scatter"):
                op["reduce"] = "sum"
            if sim_dtype(r) != "f32":
                op["dtype"] = sim_dtype(r)
            ops.append(op)
        ranks.append({
            "name": f"rank {d.rank}", "device": index_of_rank[d.rank],
            "threads": [{"name": "main", "program": ops}],
            "streams": [comm_of[g] for g in groups],
            "events": [],
            "flags": [],
            "buffers": [{"name": "collectives", "size": max(offset, 1)}],
        })
    return {"name": "flight-recorder import", "kernels": kernels, "source": source[:1000],
            "ranks": ranks, "comms": comms, "checks": []}
