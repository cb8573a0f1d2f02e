"""One Flight Recorder dump (one rank): loaded, validated, and turned into typed records.

Format (PyTorch's NCCL Flight Recorder, versions 2.x; unknown fields are ignored):
  {"version": "2.4", "pg_config": {name: {"name", "desc", "ranks": "[0, 1]"}},
   "pg_status": {pg_id: {...}}, "entries": [entry, ...], ...}
  entry: record_id, pg_id, process_group (name, desc), collective_seq_id, p2p_seq_id, op_id,
         profiling_name ("nccl:all_reduce"), input_sizes, input_dtypes, output_sizes,
         output_dtypes, state (scheduled|started|completed), time_created_ns, is_p2p,
         timeout_ms, and optionally duration_ms and frames ([{name, filename, line}]).
Pickle is PyTorch's default dump format; JSON is its JSON dump. Every problem is an InputError
that names the file and the field.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import re

from ..errors import InputError
from .safe_pickle import RefusedPickle, loads_plain

SUPPORTED_MAJOR = 2
STATES = ("scheduled", "started", "completed")


@dataclasses.dataclass(frozen=True)
class Frame:
    name: str
    filename: str
    line: int

    def __str__(self):
        return f"{self.name} at {self.filename}:{self.line}"


@dataclasses.dataclass
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

    @property
    def op(self) -> str:
        """The collective's name without the backend prefix: 'nccl:all_reduce' -> 'all_reduce'."""
        return self.profiling_name.split(":", 1)[-1]

    def numel(self, sizes=None) -> int:
        total = 0
        for shape in (self.input_sizes if sizes is None else sizes):
            n = 1
            for dim in shape:
                n *= dim
            total += n
        return total

    def describe(self) -> str:
        return (f"{self.profiling_name} in {self.input_sizes} {'/'.join(self.input_dtypes)} "
                f"out {self.output_sizes} {'/'.join(self.output_dtypes)} [{self.state}]")


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


def read_document(path: pathlib.Path, fmt: str = "auto"):
    """The raw document of a dump file: JSON when asked or when it starts with '{'."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(f"{path}: cannot read the dump ({err.strerror})") from None
    if not data:
        raise InputError(f"{path}: empty file, not a Flight Recorder dump")
    is_json = fmt == "json" or (fmt == "auto" and data.lstrip()[:1] in (b"{", b"["))
    if is_json:
        try:
            return json.loads(data)
        except (ValueError, RecursionError) as err:
            raise InputError(f"{path}: not valid JSON ({err}); truncated?") from None
    try:
        return loads_plain(data)
    except RefusedPickle as err:
        raise InputError(f"{path}: refused: {err}. A Flight Recorder dump holds only plain "
                         "containers, strings and numbers; nothing from this file was "
                         "executed") from None
    except Exception as err:  # noqa: BLE001 - a corrupt pickle fails in many ways
        raise InputError(f"{path}: not a complete pickle ({type(err).__name__}: {err}); "
                         "truncated or not a Flight Recorder dump?") from None


class _Fields:
    """Typed access to one dict of the dump, with errors that name the path to the field."""

    def __init__(self, doc: dict, where: str):
        self.doc, self.where = doc, where

    def get(self, key, kinds, default=dataclasses.MISSING):
        if key not in self.doc or self.doc[key] is None:
            if default is dataclasses.MISSING:
                raise InputError(f"{self.where}: missing field '{key}'")
            return default
        value = self.doc[key]
        if isinstance(value, bool) and bool not in kinds:
            raise InputError(f"{self.where}.{key}: expected {_names(kinds)}, got a boolean")
        if not isinstance(value, kinds):
            raise InputError(f"{self.where}.{key}: expected {_names(kinds)}, got "
                             f"{type(value).__name__} {_short(value)}")
        return value


def _names(kinds) -> str:
    return " or ".join({int: "an integer", float: "a number", str: "a string", bool: "a boolean",
                        list: "a list", tuple: "a list", dict: "an object"}[k] for k in kinds
                       if k is not tuple or list not in kinds)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _sizes(value, where: str) -> list:
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(s, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool)
                                                 and d >= 0 for d in s) for s in value):
        raise InputError(f"{where}: expected a list of shapes (lists of non-negative integers), "
                         f"got {_short(value)}")
    return [list(s) for s in value]


def _strings(value, where: str) -> list:
    if not isinstance(value, (list, tuple)) or not all(isinstance(s, str) for s in value):
        raise InputError(f"{where}: expected a list of strings, got {_short(value)}")
    return list(value)


def _frames(value, where: str) -> list:
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{where}: expected a list of frames")
    frames = []
    for i, f in enumerate(value):
        if not isinstance(f, dict):
            raise InputError(f"{where}[{i}]: expected an object with name, filename, line")
        line = f.get("line", 0)
        frames.append(Frame(name=str(f.get("name", "?")), filename=str(f.get("filename", "?")),
                            line=int(line) if str(line).isdigit() else 0))
    return frames


def parse_ranks(value, where: str) -> tuple:
    """pg_config ranks: PyTorch writes a string like "[0, 1]"; a list is accepted too."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise InputError(f"{where}: expected a rank list like \"[0, 1]\", got "
                             f"{_short(value)}") from None
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(r, int) and not isinstance(r, bool) and r >= 0 for r in value):
        raise InputError(f"{where}: expected a list of non-negative ranks, got {_short(value)}")
    if len(set(value)) != len(value):
        raise InputError(f"{where}: a rank appears twice in {list(value)}")
    return tuple(value)


def check_version(version, where: str) -> str:
    text = str(version) if isinstance(version, (str, int, float)) and \
        not isinstance(version, bool) else None
    match = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:\..*)?", text or "")
    if not match:
        raise InputError(f"{where}.version: expected a version like \"2.4\", got "
                         f"{_short(version)}")
    if int(match[1]) != SUPPORTED_MAJOR:
        raise InputError(f"{where}: Flight Recorder dump version {text} is not supported "
                         f"(expected {SUPPORTED_MAJOR}.x)")
    return text


ENTRY_FIELDS = {"record_id", "pg_id", "process_group", "collective_seq_id", "p2p_seq_id", "op_id",
                "profiling_name", "input_sizes", "input_dtypes", "output_sizes", "output_dtypes",
                "state", "time_created_ns", "is_p2p", "timeout_ms", "duration_ms", "frames",
                "retired", "time_discovered_started_ns", "time_discovered_completed_ns"}


def _record(entry, index: int, rank: int, where: str) -> Record:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected an object, got {type(entry).__name__}")
    f = _Fields(entry, where)
    pg = f.get("process_group", (list, tuple))
    if len(pg) < 1 or not all(isinstance(p, str) for p in pg):
        raise InputError(f"{where}.process_group: expected [name, desc], got {_short(pg)}")
    state = f.get("state", (str,))
    if state not in STATES:
        raise InputError(f"{where}.state: expected one of {list(STATES)}, got {state!r}")
    duration = f.get("duration_ms", (int, float), None)
    return Record(
        rank=rank, index=index, record_id=f.get("record_id", (int,)),
        pg_name=pg[0], pg_desc=pg[1] if len(pg) > 1 else "",
        collective_seq_id=f.get("collective_seq_id", (int,)),
        p2p_seq_id=f.get("p2p_seq_id", (int,), 0), op_id=f.get("op_id", (int,), 0),
        profiling_name=f.get("profiling_name", (str,)),
        input_sizes=_sizes(f.get("input_sizes", (list, tuple)), f"{where}.input_sizes"),
        input_dtypes=_strings(f.get("input_dtypes", (list, tuple), []), f"{where}.input_dtypes"),
        output_sizes=_sizes(f.get("output_sizes", (list, tuple), []), f"{where}.output_sizes"),
        output_dtypes=_strings(f.get("output_dtypes", (list, tuple), []),
                               f"{where}.output_dtypes"),
        state=state, is_p2p=bool(f.get("is_p2p", (bool,), False)),
        time_created_ns=f.get("time_created_ns", (int,), 0),
        timeout_ms=f.get("timeout_ms", (int,), None),
        duration_ms=None if duration is None else float(duration),
        frames=_frames(f.get("frames", (list, tuple), []), f"{where}.frames"))


def rank_from_name(path: pathlib.Path) -> int | None:
    """PyTorch names dumps <prefix><rank> (default /tmp/nccl_trace_rank_<rank>)."""
    match = re.search(r"(\d+)(?:\.[A-Za-z]+)?$", path.name)
    return int(match[1]) if match else None


def parse_dump(doc, path: pathlib.Path, fallback_rank: int) -> Dump:
    where = str(path)
    if not isinstance(doc, dict):
        raise InputError(f"{where}: expected a dict at the top level (a Flight Recorder dump), "
                         f"got {type(doc).__name__}")
    top = _Fields(doc, where)
    version = check_version(top.get("version", (str, int, float)), where)
    rank = doc.get("rank")
    if not (isinstance(rank, int) and not isinstance(rank, bool) and rank >= 0):
        rank = rank_from_name(path)
    if rank is None:
        rank = fallback_rank
    pg_config = {}
    for name, pg in top.get("pg_config", (dict,), {}).items():
        pw = f"{where}: pg_config[{name!r}]"
        if not isinstance(pg, dict):
            raise InputError(f"{pw}: expected an object with name, desc, ranks")
        fields = _Fields(pg, pw)
        pg_config[str(name)] = ProcessGroup(
            name=str(fields.get("name", (str,), str(name))),
            desc=str(fields.get("desc", (str,), "")),
            ranks=parse_ranks(fields.get("ranks", (str, list, tuple)), f"{pw}.ranks"))
    entries = top.get("entries", (list, tuple))
    records, ignored = [], set()
    for i, entry in enumerate(entries):
        records.append(_record(entry, i, rank, f"{where}: entries[{i}]"))
        if isinstance(entry, dict):
            ignored |= set(entry) - ENTRY_FIELDS
    records.sort(key=lambda r: r.record_id)
    ids = [r.record_id for r in records]
    if len(set(ids)) != len(ids):
        raise InputError(f"{where}: entries: a record_id appears twice")
    return Dump(path=path, rank=rank, version=version, pg_config=pg_config, records=records,
                ignored_fields=ignored)


def load_dumps(paths: list[pathlib.Path], fmt: str = "auto") -> list[Dump]:
    """All dumps, one per rank, sorted by rank; duplicate ranks are an error."""
    dumps = [parse_dump(read_document(p, fmt), p, i) for i, p in enumerate(paths)]
    by_rank: dict[int, Dump] = {}
    for d in dumps:
        if d.rank in by_rank:
            raise InputError(f"{d.path}: rank {d.rank} already comes from {by_rank[d.rank].path}")
        by_rank[d.rank] = d
    return [by_rank[r] for r in sorted(by_rank)]

