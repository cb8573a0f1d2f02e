"""The dumps of a job, read, aligned and matched by the program (`amaxcheck fr-scan`), and the
records the report and the replay scenario need, as typed values.

Everything that scales with the job is in C++ (src/fr/): reading, bounding and validating the
dumps (dump.h there: a restricted pickle reader that refuses every global, a JSON reader,
strings cut to 200 characters with their length and a digest, at most 64 frames per record,
nesting and sizes bounded with exit-2 messages that name the file and the field, every file on
its own thread), the alignment per group by collective_seq_id (align.h), the matching and the
cross-group order inversions (agreement.h, inversion.h) and the scenario's window (window.h).
It prints one compact document (match_json.h) holding the findings and only the records they
and the scenario need; this module reads it. agreement.py turns the findings into the report's
values.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import subprocess

from .. import program
from ..errors import InputError, ProgramError

STATES = ("scheduled", "started", "completed")
MAX_TEXT = 200  # src/fr/dump.h max_text: reports cut composed text to the same length


@dataclasses.dataclass(frozen=True)
class Frame:
    name: str
    filename: str
    line: int

    def __str__(self):
        return f"{self.name} at {self.filename}:{self.line}"


@dataclasses.dataclass(slots=True)
class Record:
    rank: int
    index: int  # position in the dump's entries
    record_id: int
    pg_name: str
    pg_desc: str
    collective_seq_id: int
    p2p_seq_id: int
    op_id: int
    profiling_name: str
    input_sizes: list
    input_dtypes: list
    output_sizes: list
    output_dtypes: list
    state: str
    is_p2p: bool
    time_created_ns: int
    timeout_ms: int | None
    duration_ms: float | None
    frames: list
    frames_dropped: int = 0  # frames beyond MAX_FRAMES, not kept

    @property
    def op(self) -> str:
        """The collective's name without the backend prefix: 'nccl:all_reduce' -> 'all_reduce'."""
        return self.profiling_name.split(":", 1)[-1]

    @property
    def backend(self) -> str:
        """The backend prefix of the profiling name ('nccl', 'gloo'); '' when there is none."""
        head, sep, _ = self.profiling_name.partition(":")
        return head if sep else ""

    def numel(self, sizes=None) -> int:
        total = 0
        for shape in (self.input_sizes if sizes is None else sizes):
            n = 1
            for dim in shape:
                n *= dim
            total += n
        return total

    def describe(self) -> str:
        return (f"{self.profiling_name} in {cut(str(self.input_sizes))} "
                f"{cut('/'.join(self.input_dtypes))} out {cut(str(self.output_sizes))} "
                f"{cut('/'.join(self.output_dtypes))} [{self.state}]")


@dataclasses.dataclass
class Dump:
    path: pathlib.Path
    rank: int
    version: str
    records: int  # how many the dump holds
    wrapped: bool  # the ring buffer has forgotten its oldest records (record_ids start above 0)


@dataclasses.dataclass
class Scan:
    """What `fr-scan` found: the dumps, its findings (the document's report part, read by
    agreement.check), and the scenario's window with the records it keeps."""
    dumps: list  # Dump, by rank
    doc: dict  # fr-scan's document, its findings part
    records: list  # Record, the ones the findings and the window refer to, by index
    windows: dict  # group -> (first, last) collective_seq_id kept in the scenario
    kept: dict  # rank -> [Record] kept in the scenario, in record order


def cut(text: str) -> str:
    """`text` for a report: at most MAX_TEXT characters and a note of the length."""
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"... ({len(text)} chars)"


def _records(d: dict) -> list:
    texts = d["texts"]
    frames = [Frame(name=texts[n], filename=texts[f], line=line) for n, f, line in d["frames"]]
    stacks = [[frames[i] for i in stack] for stack in d["stacks"]]
    return [Record(rank, index, record_id, texts[pg], texts[desc], seq, p2p_seq, op_id,
                   texts[name], ins, [texts[i] for i in in_types], outs,
                   [texts[i] for i in out_types], STATES[state], bool(is_p2p), created, timeout,
                   None if duration is None else float(duration), stacks[stack], dropped)
            for (rank, index, record_id, pg, desc, seq, p2p_seq, op_id, name, ins, in_types, outs,
                 out_types, state, is_p2p, created, timeout, duration, stack, dropped)
            in d["records"]]


def load_dumps(paths: list[pathlib.Path], fmt: str = "auto", kernels: str = "auto",
               window: int = 8) -> Scan:
    """The dumps read and matched by `amaxcheck fr-scan`; InputError (with the program's
    message) for a bad dump, duplicate ranks included."""
    binary = program.program_path()
    argv = [str(binary), "fr-scan", "--format", fmt, "--kernels", kernels, "--window",
            str(window), "--", *map(str, paths)]
    done = subprocess.run(argv, capture_output=True)
    err = done.stderr.decode("utf-8", "replace")
    if done.returncode == 2:
        raise InputError(err.strip().removeprefix("error: "))
    if done.returncode != 0:
        raise ProgramError(f"{binary} fr-scan exited {done.returncode}: {cut(err.strip())}")
    d = json.loads(done.stdout)
    records = _records(d)
    dumps = [Dump(path=paths[x["input"]], rank=x["rank"], version=x["version"],
                  records=x["records"], wrapped=x["wrapped"]) for x in d["dumps"]]
    windows = {g["name"]: tuple(w) for g, w in zip(d["groups"], d["scenario_window"])}
    kept = {dump.rank: [records[i] for i in rows] for dump, rows in zip(dumps, d["kept"])}
    return Scan(dumps=dumps, doc=d, records=records, windows=windows, kept=kept)
