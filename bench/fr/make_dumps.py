#!/usr/bin/env python3
"""Synthetic Flight Recorder dumps of a hung FP8 data-parallel job, schema-faithful to PyTorch's
NCCL Flight Recorder (version 2.4, pickle protocol 2 by default, or JSON), for the import
benchmark (bench/fr/bench_import.py) and the import tests.

The job: `ranks` ranks (a multiple of 8) in three kinds of process groups, created in this order
on every rank, so named "0", "1", ... as PyTorch names them: the world (`default_pg`), the
data-parallel groups of 8 consecutive ranks (`dp_<i>`) and the amax groups of 8 strided ranks
(`amax_<i>`: ranks i, i + ranks/8, ...). A rank's pg_config lists its own three groups. Per
iteration each rank issues an amax all-reduce (8 floats) on its amax group, two gradient
buckets (bf16) on its DP group, on even DP groups an extra metrics all-reduce (so record_ids
run ahead there and the ring buffers wrap at different record_ids), and a loss all-reduce on
the world. Each rank keeps only its last `records` records (a wrapped ring buffer).

One rank (`stuck`) stops after iteration `iterations - 1` (a data loader hang, say). Every other
rank issues the last iteration: the collectives of the stuck rank's groups stay started or
scheduled, the world's loss all-reduce stays started everywhere. The root cause is the stuck
rank's amax group at the last iteration, where it never joined.

    python3 bench/fr/make_dumps.py OUT --ranks 64 [--records 2000] [--format pickle|json]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import pickle

FRAMES = {
    "amax": [("all_reduce", "torch/distributed/distributed_c10d.py", 2501),
             ("reduce_amax", "transformer_engine/pytorch/fp8.py", 120),
             ("forward", "model/layers.py", 88), ("train_step", "train.py", 41)],
    "bucket": [("allreduce_hook", "torch/nn/parallel/distributed.py", 1400),
               ("_run_ddp_forward", "torch/nn/parallel/distributed.py", 1320),
               ("train_step", "train.py", 44)],
    "metrics": [("all_reduce", "torch/distributed/distributed_c10d.py", 2501),
                ("log_metrics", "metrics.py", 17), ("train_step", "train.py", 52)],
    "loss": [("all_reduce", "torch/distributed/distributed_c10d.py", 2501),
             ("reduce_loss", "train.py", 60), ("train_step", "train.py", 61)],
}
SIZES = {"amax": ([8], "Float"), "bucket0": ([25165824], "BFloat16"),
         "bucket1": ([12582912], "BFloat16"), "metrics": ([4], "Float"), "loss": ([1], "Float")}


def groups(ranks: int) -> dict:
    """name -> (desc, members), in creation order."""
    out = {"0": ("default_pg", list(range(ranks)))}
    n = ranks // 8
    for i in range(n):
        out[str(1 + i)] = (f"dp_{i}", list(range(8 * i, 8 * i + 8)))
    for i in range(n):
        out[str(1 + n + i)] = (f"amax_{i}", list(range(i, ranks, n)))
    return out


def rank_groups(rank: int, ranks: int) -> tuple[str, str]:
    n = ranks // 8
    return str(1 + rank // 8), str(1 + n + rank % n)


def _frames(kind):
    return [{"name": n, "filename": f, "line": line} for n, f, line in FRAMES[kind]]


def rank_records(rank: int, ranks: int, iterations: int, stuck: int) -> list:
    dp, amax = rank_groups(rank, ranks)
    stuck_dp, stuck_amax = rank_groups(stuck, ranks)
    seq = {"0": 0, dp: 0, amax: 0}
    frames = {k: _frames(k) for k in FRAMES}
    metrics = (rank // 8) % 2 == 0
    out = []
    skew = (rank * 7919) % 1000  # ns: the clocks of the ranks differ a little
    last = iterations if rank != stuck else iterations - 1
    for it in range(last):
        plan = [("amax", amax, "amax"), ("bucket0", dp, "bucket"), ("bucket1", dp, "bucket")]
        if metrics:
            plan.append(("metrics", dp, "metrics"))
        plan.append(("loss", "0", "loss"))
        hung = it == iterations - 1
        for k, (what, pg, frame_kind) in enumerate(plan):
            seq[pg] += 1
            if not hung:
                state = "completed"
            elif pg == "0":
                state = "started"
            elif pg in (stuck_dp, stuck_amax):
                state = "started" if k == 0 else "scheduled"
            else:
                state = "completed"
            size, dtype = SIZES[what]
            created = 1_000_000_000 + it * 50_000_000 + k * 1_000_000 + skew
            desc = {"0": "default_pg"}.get(pg) or (f"dp_{int(pg) - 1}" if pg == dp else
                                                  f"amax_{int(pg) - 1 - ranks // 8}")
            out.append({
                "record_id": len(out), "pg_id": int(pg), "process_group": (pg, desc),
                "collective_seq_id": seq[pg], "p2p_seq_id": 0, "op_id": seq[pg],
                "profiling_name": "nccl:all_reduce", "time_created_ns": created,
                "input_sizes": [size], "input_dtypes": [dtype], "output_sizes": [size],
                "output_dtypes": [dtype], "state": state,
                "time_discovered_started_ns": created + 1000 if state != "scheduled" else None,
                "time_discovered_completed_ns": created + 90000 if state == "completed" else None,
                "retired": state == "completed", "timeout_ms": 600000, "is_p2p": False,
                "duration_ms": 0.09 if state == "completed" else None,
                # a list of its own per entry, as PyTorch writes it (no memo sharing)
                "frames": [dict(f) for f in frames[frame_kind]]})
    return out


def dump(rank: int, ranks: int, records: int, iterations: int, stuck: int) -> dict:
    entries = rank_records(rank, ranks, iterations, stuck)[-records:]
    all_groups = groups(ranks)
    mine = ("0",) + rank_groups(rank, ranks)
    return {"version": "2.4", "comm_lib_version": "2.21.5",
            "pg_config": {g: {"name": g, "desc": all_groups[g][0],
                              "ranks": json.dumps(all_groups[g][1])} for g in mine},
            "pg_status": {g: {"last_enqueued_collective": 0, "last_started_collective": 0,
                              "last_completed_collective": 0} for g in mine},
            "entries": entries}


def write(out: pathlib.Path, ranks: int, records: int = 2000, fmt: str = "pickle",
          stuck: int | None = None, iterations: int | None = None) -> list[pathlib.Path]:
    if ranks % 8 or ranks < 8:
        raise ValueError("ranks must be a positive multiple of 8")
    stuck = ranks // 2 + 3 if stuck is None else stuck
    # enough iterations that every ring buffer wraps (4 or 5 records per iteration)
    iterations = iterations or records // 4 + 50
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for rank in range(ranks):
        doc = dump(rank, ranks, records, iterations, stuck)
        path = out / f"nccl_trace_rank_{rank}{'.json' if fmt == 'json' else ''}"
        if fmt == "json":
            path.write_text(json.dumps(doc))
        else:
            path.write_bytes(pickle.dumps(doc, protocol=2))
        paths.append(path)
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--format", choices=("pickle", "json"), default="pickle")
    parser.add_argument("--stuck", type=int)
    args = parser.parse_args()
    paths = write(args.out, args.ranks, args.records, args.format, args.stuck)
    print(f"{len(paths)} dumps in {args.out}")


if __name__ == "__main__":
    main()
