"""Flight Recorder dumps written the way PyTorch writes them (pickle by default, or JSON),
for the import tests and the shipped examples.

`training(...)` builds the records of a small FP8 data-parallel job: per iteration an amax
all-reduce (8 floats) on the amax group and two gradient buckets on the data-parallel group;
the tests then perturb one rank (swap, drop, resize, wrap) to plant a divergence.
"""

import json
import pickle

FRAMES = [{"name": "all_reduce", "filename": "torch/distributed/distributed_c10d.py",
           "line": 2501},
          {"name": "reduce_amax", "filename": "transformer_engine/pytorch/fp8.py", "line": 120}]


def entry(record_id, pg, seq, op="all_reduce", size=8, dtype="Float", state="completed",
          frames=None, desc=None, **extra):
    doc = {"record_id": record_id, "pg_id": int(pg) if pg.isdigit() else 0,
           "process_group": (pg, desc or {"0": "default_pg", "1": "amax_reduction"}.get(pg, pg)),
           "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq,
           "profiling_name": f"nccl:{op}", "time_created_ns": 1_000_000 * record_id,
           "input_sizes": [[size]], "input_dtypes": [dtype],
           "output_sizes": [[size]], "output_dtypes": [dtype], "state": state,
           "retired": state == "completed", "timeout_ms": 600000, "is_p2p": False,
           "duration_ms": 0.05, "frames": list(frames if frames is not None else FRAMES)}
    doc.update(extra)
    return doc


def training(iterations=3, order=("amax", "bucket0", "bucket1"), amax_pg="1", amax_size=8):
    """Records of one rank, in issue order; `order` arranges each iteration's collectives."""
    sizes = {"amax": amax_size, "bucket0": 1048576, "bucket1": 524288}
    seq = {"0": 0, "1": 0}
    records = []
    for _ in range(iterations):
        for name in order:
            pg = amax_pg if name == "amax" else "0"
            seq[pg] += 1
            frames = FRAMES if name == "amax" else [
                {"name": "allreduce_hook", "filename": "torch/nn/parallel/distributed.py",
                 "line": 1400}]
            records.append(entry(len(records), pg, seq[pg], size=sizes[name], frames=frames))
    return records


def dump(entries, ranks=(0, 1), groups=None, version="2.4", **top):
    groups = groups or {"0": ("default_pg", list(ranks)), "1": ("amax_reduction", list(ranks))}
    doc = {"version": version,
           "pg_config": {name: {"name": name, "desc": desc, "ranks": members if isinstance(members, str) else json.dumps(members)}
                         for name, (desc, members) in groups.items()},
           "pg_status": {name: {"last_enqueued_collective": 0, "last_started_collective": 0,
                                "last_completed_collective": 0} for name in groups},
           "entries": entries}
    doc.update(top)
    return doc


def write_pickle(path, doc):
    path.write_bytes(pickle.dumps(doc, protocol=2))  # PyTorch's pickler writes protocol 2
    return path


def write_json(path, doc):
    path.write_text(json.dumps(doc, indent=1))
    return path


def write_pair(folder, rank0, rank1, fmt="pickle", **kwargs):
    """nccl_trace_rank_0 / _1 in `folder` (PyTorch's default names)."""
    write = write_pickle if fmt == "pickle" else write_json
    return [write(folder / f"nccl_trace_rank_{r}", dump(e, **kwargs))
            for r, e in ((0, rank0), (1, rank1))]


# ---- the examples shipped in traces/fr/ (python3 harness/tests/fr_dumps.py regenerates them) --

def _hung(records, rank_stuck_at=-1):
    """The state a hang leaves: everything completed except the last record, still started."""
    records[rank_stuck_at]["state"] = "started"
    return records


EXAMPLES = {
    # name: (format, () -> (rank 0 records, rank 1 records), expected exit code, expected kinds)
    "consistent": ("pickle", lambda: (training(), training()), 0, []),
    "shared_comm_swapped": (
        "pickle", lambda: (_hung(training(amax_pg="0")),
                                  _hung(training(amax_pg="0",
                                                 order=("bucket0", "amax", "bucket1")))),
        1, ["size_mismatch"]),
    "missing_collective": (
        "json", lambda: (_hung(training()), training()[:-1]), 1, ["not_joined"]),
    "separate_comm_inversion": (
        "pickle", lambda: (training(order=("amax", "bucket0", "bucket1")),
                                  training(order=("bucket0", "amax", "bucket1"))),
        1, ["order_inversion"]),
    "wrapped_ring_buffer": (
        "pickle", lambda: (training(iterations=4), training(iterations=4)[5:]), 0, []),
}


def write_examples(root):
    for name, (fmt, make, _, _) in EXAMPLES.items():
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        rank0, rank1 = make()
        write = write_pickle if fmt == "pickle" else write_json
        suffix = "" if fmt == "pickle" else ".json"
        for rank, records in ((0, rank0), (1, rank1)):
            write(folder / f"nccl_trace_rank_{rank}{suffix}", dump(records))


if __name__ == "__main__":
    import pathlib
    write_examples(pathlib.Path(__file__).resolve().parents[2] / "traces" / "fr")
