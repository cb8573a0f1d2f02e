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

Dumps are untrusted and may be huge or hostile, so everything kept is bounded: a file over
MAX_FILE_BYTES or with more than MAX_ENTRIES entries is refused; strings are cut to MAX_TEXT
characters (with a digest, so different long names stay different); at most MAX_FRAMES frames
are kept per record, and a frame list that many entries share (a pickle memo) is read once; a
string that is not valid Unicode (a lone surrogate) is refused, since nothing downstream could
write it; nesting too deep to walk is refused.

gloo writes a single pg_config entry under the key '' (the last group it created): it is keyed
by its own name instead.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pathlib
import re

from ..errors import InputError
from .safe_pickle import RefusedPickle, loads_plain

SUPPORTED_MAJOR = 2
STATES = ("scheduled", "started", "completed")
MAX_FILE_BYTES = 1 << 30
MAX_ENTRIES = 1 << 20
MAX_TEXT = 200
MAX_FRAMES = 64
MAX_RANK = 1 << 20  # ranks run below this (a million GPUs): a bigger one is refused
MAX_ID = (1 << 63) - 1


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


def read_document(path: pathlib.Path, fmt: str = "auto"):
    """The raw document of a dump file: JSON when asked or when it starts with '{'."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(f"{path}: {size} bytes, over the {MAX_FILE_BYTES}-byte limit for one "
                             "dump (a Flight Recorder dump of 2000 records is about 1 MB)")
        data = path.read_bytes()
    except OSError as err:
        raise InputError(f"{path}: cannot read the dump ({err.strerror})") from None
    if not data:
        raise InputError(f"{path}: empty file, not a Flight Recorder dump")
    is_json = fmt == "json" or (fmt == "auto" and data.lstrip()[:1] in (b"{", b"["))
    if is_json:
        try:
            return json.loads(data)
        except RecursionError:
            raise InputError(f"{path}: JSON nested too deeply to be a Flight Recorder dump") \
                from None
        except ValueError as err:
            raise InputError(f"{path}: not valid JSON ({cut(str(err))}); truncated?") from None
    try:
        return loads_plain(data)
    except RefusedPickle as err:
        raise InputError(f"{path}: refused: {err}. A Flight Recorder dump holds only plain "
                         "containers, strings and numbers; nothing from this file was "
                         "executed") from None
    except Exception as err:  # noqa: BLE001 - a corrupt pickle fails in many ways
        raise InputError(f"{path}: not a complete pickle ({type(err).__name__}: "
                         f"{cut(str(err))}); "
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
    """A short description of any value, without walking it (it may be huge or deeply nested)."""
    if isinstance(value, (list, tuple, dict)):
        return f"a {type(value).__name__} of {len(value)}"
    text = repr(value[:60] if isinstance(value, str) else value)
    return text if len(text) <= 40 else text[:37] + "..."


def cut(text: str) -> str:
    """`text` for a report: at most MAX_TEXT characters and a note of the length."""
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"... ({len(text)} chars)"


def bounded_text(value: str, where: str) -> str:
    """`value` as kept: valid Unicode (else InputError), cut to MAX_TEXT characters. A cut string
    ends with its length and a digest of the whole, so two long names that differ stay apart."""
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InputError(f"{where}: not valid Unicode ({err.reason} at character {err.start}: "
                         f"{value[err.start]!r}); a dump holds UTF-8 text") from None
    if len(value) <= MAX_TEXT:
        return value
    digest = hashlib.blake2s(data, digest_size=4).hexdigest()
    return f"{value[:MAX_TEXT]}...({len(value)} chars, {digest})"


def _text(value, where: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where}: expected a string, got {type(value).__name__} {_short(value)}")
    return bounded_text(value, where)


class _Cache:
    """What one dump repeats, read once: lists a pickle's memo shares (by identity: the cache
    holds them, so their ids stay unique), strings (validated and cut once), frames and whole
    call stacks (by content)."""

    def __init__(self):
        self.lists, self.texts, self.frames, self.stacks = {}, {}, {}, {}
        self.shapes = {}  # the size and dtype lists, by content

    def text(self, value: str, where) -> str:
        """`value` through bounded_text; `where` is called for the error message only."""
        got = self.texts.get(value)
        if got is None:
            got = self.texts[value] = bounded_text(value, where())
        return got


def _sizes(value, where: str, cache: _Cache) -> list:
    cached = cache.lists.get(id(value))
    if cached is not None and cached[0] is value:
        return cached[1]
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(s, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool)
                                                 and 0 <= d <= MAX_ID for d in s) for s in value):
        raise InputError(f"{where}: expected a list of shapes (lists of non-negative integers), "
                         f"got {_short(value)}")
    key = tuple(map(tuple, value))  # equal shapes share one list: far less memory
    sizes = cache.shapes.get(key)
    if sizes is None:
        sizes = cache.shapes[key] = [list(s) for s in value]
    cache.lists[id(value)] = (value, sizes)
    return sizes


def _strings(value, where: str, cache: _Cache) -> list:
    if not isinstance(value, (list, tuple)) or not all(isinstance(s, str) for s in value):
        raise InputError(f"{where}: expected a list of strings, got {_short(value)}")
    key = tuple(value)
    got = cache.shapes.get(key)
    if got is None:
        got = cache.shapes[key] = [cache.text(s, lambda: f"{where}[{i}]")
                                   for i, s in enumerate(value)]
    return got


def _frame_text(value, where, cache: _Cache) -> str:
    return cache.text(value, where) if isinstance(value, str) else cut(_short(value))


def _frames(value, where: str, cache: _Cache) -> tuple[list, int]:
    """The first MAX_FRAMES frames and how many more there were. A list that a pickle's memo
    makes every entry share is read once."""
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{where}: expected a list of frames")
    cached = cache.lists.get(id(value))
    if cached is not None and cached[0] is value:
        return cached[1], cached[2]
    # Entries repeat the same call stacks: a stack read once is reused by content.
    try:
        content = tuple((f["name"], f["filename"], f["line"]) for f in value[:MAX_FRAMES])
        cached = cache.stacks.get(content)
    except (TypeError, KeyError):
        content = cached = None
    if cached is not None:
        return cached, max(len(value) - MAX_FRAMES, 0)
    frames = []
    for i, f in enumerate(value[:MAX_FRAMES]):
        if not isinstance(f, dict):
            raise InputError(f"{where}[{i}]: expected an object with name, filename, line")
        line = f.get("line", 0)
        if not (isinstance(line, int) and not isinstance(line, bool) and 0 <= line < 1 << 31):
            line = 0
        name = _frame_text(f.get("name", "?"), lambda: f"{where}[{i}].name", cache)
        filename = _frame_text(f.get("filename", "?"), lambda: f"{where}[{i}].filename", cache)
        key = (name, filename, line)
        frame = cache.frames.get(key)
        if frame is None:
            frame = cache.frames[key] = Frame(name=name, filename=filename, line=line)
        frames.append(frame)
    dropped = max(len(value) - MAX_FRAMES, 0)
    cache.lists[id(value)] = (value, frames, dropped)
    if content is not None:
        cache.stacks[content] = frames
    return frames, dropped


def parse_ranks(value, where: str) -> tuple:
    """pg_config ranks: PyTorch writes a string like "[0, 1]"; a list is accepted too."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except RecursionError:
            raise InputError(f"{where}: expected a rank list like \"[0, 1]\", got a list nested "
                             "too deeply") from None
        except ValueError:
            raise InputError(f"{where}: expected a rank list like \"[0, 1]\", got "
                             f"{_short(value)}") from None
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(r, int) and not isinstance(r, bool) and 0 <= r < MAX_RANK for r in value):
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


def _count(f: "_Fields", key: str, default=dataclasses.MISSING) -> int:
    """A non-negative id or counter that fits the program's 64-bit integers."""
    value = f.get(key, (int,), default)
    if not 0 <= value <= MAX_ID:
        raise InputError(f"{f.where}.{key}: expected an integer in 0..2^63-1, got {_short(value)}")
    return value


def _is_count(value) -> bool:
    return type(value) is int and 0 <= value <= MAX_ID


def _fast_record(entry, index: int, rank: int, cache: _Cache) -> Record | None:
    """The record of a well-formed entry, checked with plain lookups; None when anything is off,
    and then _record checks it field by field and says what is wrong."""
    get = entry.get
    pg, state, name = get("process_group"), get("state"), get("profiling_name")
    record_id, seq = get("record_id"), get("collective_seq_id")
    p2p_seq, op_id = get("p2p_seq_id", 0), get("op_id", 0)
    created, timeout = get("time_created_ns", 0), get("timeout_ms")
    duration, is_p2p = get("duration_ms"), get("is_p2p", False)
    ins, outs = get("input_sizes"), get("output_sizes", [])
    in_types, out_types = get("input_dtypes", []), get("output_dtypes", [])
    frames = get("frames", [])
    if not (type(pg) in (list, tuple) and pg and all(type(x) is str for x in pg)
            and state in STATES and type(state) is str and type(name) is str
            and _is_count(record_id) and _is_count(seq)
            and (p2p_seq is None or _is_count(p2p_seq)) and (op_id is None or type(op_id) is int)
            and (created is None or type(created) is int)
            and (timeout is None or type(timeout) is int)
            and (duration is None or type(duration) in (int, float))
            and (is_p2p is None or type(is_p2p) is bool)
            and type(ins) in (list, tuple) and (outs is None or type(outs) in (list, tuple))
            and (in_types is None or type(in_types) in (list, tuple))
            and (out_types is None or type(out_types) in (list, tuple))
            and (frames is None or type(frames) in (list, tuple))):
        return None
    try:
        text = cache.text
        return Record(
            rank=rank, index=index, record_id=record_id,
            pg_name=text(pg[0], str), pg_desc=text(pg[1], str) if len(pg) > 1 else "",
            collective_seq_id=seq, p2p_seq_id=p2p_seq or 0, op_id=op_id or 0,
            profiling_name=text(name, str),
            input_sizes=_sizes(ins, "", cache), input_dtypes=_strings(in_types or [], "", cache),
            output_sizes=_sizes(outs or [], "", cache),
            output_dtypes=_strings(out_types or [], "", cache),
            state=state, is_p2p=bool(is_p2p), time_created_ns=created or 0,
            timeout_ms=timeout, duration_ms=None if duration is None else float(duration),
            frames=(got := _frames(frames or [], "", cache))[0], frames_dropped=got[1])
    except InputError:
        return None


def _record(entry, index: int, rank: int, where: str, cache: _Cache) -> Record:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected an object, got {type(entry).__name__}")
    f = _Fields(entry, where)
    pg = f.get("process_group", (list, tuple))
    if len(pg) < 1 or not all(isinstance(p, str) for p in pg):
        raise InputError(f"{where}.process_group: expected [name, desc], got {_short(pg)}")
    state = f.get("state", (str,))
    if state not in STATES:
        raise InputError(f"{where}.state: expected one of {list(STATES)}, got {_short(state)}")
    duration = f.get("duration_ms", (int, float), None)
    frames, frames_dropped = _frames(f.get("frames", (list, tuple), []), f"{where}.frames", cache)
    return Record(
        rank=rank, index=index, record_id=_count(f, "record_id"),
        pg_name=cache.text(pg[0], lambda: f"{where}.process_group[0]"),
        pg_desc=cache.text(pg[1], lambda: f"{where}.process_group[1]") if len(pg) > 1 else "",
        collective_seq_id=_count(f, "collective_seq_id"),
        p2p_seq_id=_count(f, "p2p_seq_id", 0), op_id=f.get("op_id", (int,), 0),
        profiling_name=cache.text(f.get("profiling_name", (str,)),
                                  lambda: f"{where}.profiling_name"),
        input_sizes=_sizes(f.get("input_sizes", (list, tuple)), f"{where}.input_sizes", cache),
        input_dtypes=_strings(f.get("input_dtypes", (list, tuple), []), f"{where}.input_dtypes",
                              cache),
        output_sizes=_sizes(f.get("output_sizes", (list, tuple), []), f"{where}.output_sizes",
                            cache),
        output_dtypes=_strings(f.get("output_dtypes", (list, tuple), []),
                               f"{where}.output_dtypes", cache),
        state=state, is_p2p=bool(f.get("is_p2p", (bool,), False)),
        time_created_ns=f.get("time_created_ns", (int,), 0),
        timeout_ms=f.get("timeout_ms", (int,), None),
        duration_ms=None if duration is None else float(duration),
        frames=frames, frames_dropped=frames_dropped)


def rank_from_name(path: pathlib.Path) -> int | None:
    """PyTorch names dumps <prefix><rank> (default /tmp/nccl_trace_rank_<rank>)."""
    match = re.search(r"(\d+)(?:\.[A-Za-z]+)?$", path.name)
    return int(match[1]) if match and int(match[1]) < MAX_RANK else None


def _pg_config(value: dict, where: str) -> dict:
    pg_config = {}
    for name, pg in value.items():
        pw = f"{where}: pg_config[{_short(name)}]"
        if not isinstance(pg, dict):
            raise InputError(f"{pw}: expected an object with name, desc, ranks")
        fields = _Fields(pg, pw)
        own = _text(fields.get("name", (str,), str(name)), f"{pw}.name")
        key = bounded_text(str(name), pw)
        if key == "":  # gloo: one entry, for the last group created, keyed ''
            if not own:
                continue
            key = own
        pg_config[key] = ProcessGroup(
            name=own, desc=_text(fields.get("desc", (str,), ""), f"{pw}.desc"),
            ranks=parse_ranks(fields.get("ranks", (str, list, tuple)), f"{pw}.ranks"))
    return pg_config


def parse_dump(doc, path: pathlib.Path, fallback_rank: int) -> Dump:
    where = str(path)
    if not isinstance(doc, dict):
        raise InputError(f"{where}: expected a dict at the top level (a Flight Recorder dump), "
                         f"got {type(doc).__name__}")
    top = _Fields(doc, where)
    version = check_version(top.get("version", (str, int, float)), where)
    rank = doc.get("rank")
    if not (isinstance(rank, int) and not isinstance(rank, bool) and 0 <= rank < MAX_RANK):
        rank = rank_from_name(path)
    if rank is None:
        rank = fallback_rank
    pg_config = _pg_config(top.get("pg_config", (dict,), {}), where)
    entries = top.get("entries", (list, tuple))
    if len(entries) > MAX_ENTRIES:
        raise InputError(f"{where}: entries: {len(entries)} records, over the limit of "
                         f"{MAX_ENTRIES} (PyTorch keeps 2000 by default)")
    records, ignored, cache = [], set(), _Cache()
    known_keys = set()  # the key sets seen, each checked once for unknown fields
    for i, entry in enumerate(entries):
        record = _fast_record(entry, i, rank, cache) if type(entry) is dict else None
        records.append(record or _record(entry, i, rank, f"{where}: entries[{i}]", cache))
        keys = frozenset(entry)
        if keys not in known_keys:
            known_keys.add(keys)
            ignored.update(k for k in keys if k not in ENTRY_FIELDS)
    records.sort(key=lambda r: r.record_id)
    ids = [r.record_id for r in records]
    if len(set(ids)) != len(ids):
        raise InputError(f"{where}: entries: a record_id appears twice")
    return Dump(path=path, rank=rank, version=version, pg_config=pg_config, records=records,
                ignored_fields={cut(str(k)) for k in ignored})


def load_dumps(paths: list[pathlib.Path], fmt: str = "auto") -> list[Dump]:
    """All dumps, one per rank, sorted by rank; duplicate ranks are an error."""
    dumps = [parse_dump(read_document(p, fmt), p, i) for i, p in enumerate(paths)]
    by_rank: dict[int, Dump] = {}
    for d in dumps:
        if d.rank in by_rank:
            raise InputError(f"{d.path}: rank {d.rank} already comes from {by_rank[d.rank].path}")
        by_rank[d.rank] = d
    return [by_rank[r] for r in sorted(by_rank)]
