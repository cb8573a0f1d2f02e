"""One Flight Recorder dump (one rank) as typed records, read by the program's C++ reader.

Reading, bounding and validating the dumps is `amaxcheck fr-scan` (src/fr/, see dump.h there
for the format and the bounds): a restricted pickle reader that refuses every global, a JSON
reader, strings cut to 200 characters with their length and a digest, at most 64 frames per
record, nesting and sizes bounded with exit-2 messages that name the file and the field, every
file on its own thread. It prints compact JSON Lines, one dump per line with its strings,
shapes and call stacks once (src/fr/scan_json.h); this module turns each line into the records
the matching (align.py, agreement.py) works on, sharing what the dump shares.
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
class ProcessGroup:
    name: str
    desc: str
    ranks: tuple


@dataclasses.dataclass
class Dump:
    path: pathlib.Path
    rank: int
    version: str
    pg_config: dict  # name -> ProcessGroup
    records: list  # in record_id order
    ignored_fields: set

    @property
    def wrapped(self) -> bool:
        """The ring buffer has forgotten its oldest records (record_ids start at 0)."""
        return bool(self.records) and self.records[0].record_id > 0


def cut(text: str) -> str:
    """`text` for a report: at most MAX_TEXT characters and a note of the length."""
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"... ({len(text)} chars)"


def _dump(line: bytes, paths: list[pathlib.Path]) -> Dump:
    """One line of `fr-scan`'s output as a Dump."""
    d = json.loads(line)
    texts = d["texts"]
    shapes = d["shapes"]
    lists = [[texts[i] for i in names] for names in d["string_lists"]]
    frames = [Frame(name=texts[n], filename=texts[f], line=line) for n, f, line in d["frames"]]
    stacks = [[frames[i] for i in stack] for stack in d["stacks"]]
    rank = d["rank"]
    records = [Record(rank, index, record_id, texts[pg], texts[desc], seq, p2p_seq, op_id,
                      texts[name], shapes[ins], lists[in_types], shapes[outs], lists[out_types],
                      STATES[state], bool(is_p2p), created, timeout,
                      None if duration is None else float(duration), stacks[stack], dropped)
               for (index, record_id, pg, desc, seq, p2p_seq, op_id, name, ins, in_types, outs,
                    out_types, state, is_p2p, created, timeout, duration, stack, dropped)
               in d["records"]]
    pg_config = {key: ProcessGroup(name=name, desc=desc, ranks=tuple(ranks))
                 for key, name, desc, ranks in d["pg_config"]}
    return Dump(path=paths[d["input"]], rank=rank, version=d["version"], pg_config=pg_config,
                records=records, ignored_fields=set(d["ignored_fields"]))


def load_dumps(paths: list[pathlib.Path], fmt: str = "auto") -> list[Dump]:
    """All dumps, one per rank, sorted by rank (`amaxcheck fr-scan`); InputError (with the
    program's message) for a bad dump, duplicate ranks included."""
    binary = program.program_path()
    argv = [str(binary), "fr-scan", "--format", fmt, "--", *map(str, paths)]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        dumps = [_dump(line, paths) for line in proc.stdout]  # one line at a time: less memory
        err = proc.stderr.read().decode("utf-8", "replace")
    if proc.returncode == 2:
        raise InputError(err.strip().removeprefix("error: "))
    if proc.returncode != 0:
        raise ProgramError(f"{binary} fr-scan exited {proc.returncode}: {cut(err.strip())}")
    return dumps
