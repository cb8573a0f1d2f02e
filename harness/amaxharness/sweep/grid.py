"""A sweep grid: axes whose cartesian product are the points, plus per-point run settings.

A grid file (JSON or TOML) looks like:

    name = "seed_question"                      # names the output folder's report
    title = "..."                               # the report's heading
    description = "..."                         # a paragraph under it
    x = "dp"                                    # the plots' horizontal axis
    design = ["comm", "wait"]                   # the knobs that make a "design" (a plot line)
    [axes]                                      # each key: a list, or "lo..hi" / "lo..hi*k"
    protocol = ["te-async"]
    comm = ["shared", "separate"]
    dp = "2..1024*2"                            # 2, 4, 8, ..., 1024
    "cost.alpha-us" = [5, 10]                   # cost-model knobs: only passed to timed runs
    [fixed]                                     # single-valued knobs
    modules = 2
    exclude = [{ comm = "separate", amax-order = "same" }]   # points to leave out
    [[safety]]                                  # first rule whose `when` matches a point wins
    when = { dp = { "<=" = 8 } }
    strategy = "exhaustive"                     # runs caps the schedules (--max-schedules)
    runs = 2000
    [[safety]]
    when = { dp = { "<=" = 256 } }
    strategy = "pct"                            # random | pct: runs is --runs
    runs = 50
    keep_going = true                           # every distinct hazard, not just the first run's
    [[safety]]
    strategy = "timed"                          # the timed run is the safety run (one schedule)
    [[timed]]                                   # same rule shape; `skip = true` drops the run
    when = { dp = { ">" = 512 } }
    skip = true

Every key of a point other than `protocol` becomes `--key value` on the program's command line;
`cost.NAME` keys become `--NAME value` on timed runs only.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import pathlib
import re
import tomllib

from ..errors import InputError

PROTOCOL = "protocol"
COST_PREFIX = "cost."
SETTING_KEYS = ("strategy", "runs", "seed", "keep_going", "args", "skip")
COMPARISONS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
               ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
DEFAULT_SAFETY = {"strategy": "random", "runs": 100, "seed": 1, "keep_going": False, "args": [],
                  "skip": False}
DEFAULT_TIMED = {"strategy": "timed", "runs": 1, "seed": 1, "keep_going": False, "args": [],
                 "skip": False}
TOP_LEVEL_KEYS = {"name", "title", "description", "x", "design", "axes", "fixed", "exclude",
                  "safety", "timed", "point_timeout_s", "answer"}


@dataclasses.dataclass
class Rule:
    when: dict
    settings: dict  # a subset of SETTING_KEYS

    def matches(self, point: dict, where: str) -> bool:
        for key, condition in self.when.items():
            if key not in point:
                raise InputError(f"{where}: `when` names '{key}', which is not a knob of the grid")
            value = point[key]
            if isinstance(condition, list):
                if value not in condition:
                    return False
            elif isinstance(condition, dict):
                for op, bound in condition.items():
                    try:
                        if not COMPARISONS[op](value, bound):
                            return False
                    except TypeError:
                        raise InputError(f"{where}: cannot compare {key}={value!r} {op} "
                                         f"{bound!r}") from None
            elif value != condition:
                return False
        return True


@dataclasses.dataclass
class Grid:
    name: str
    title: str
    description: str
    axes: dict  # key -> list of values, in the order given (insertion order is kept)
    x: str | None
    design: list
    safety: list
    timed: list
    point_timeout_s: float
    source: str
    exclude: list = dataclasses.field(default_factory=list)  # Rules whose `when` drops a point
    # The seed question's answer (report.answer): `x` (the x value it is stated at), `bucket`
    # (the bucket-size knob) and named design conditions; empty = no answer section.
    answer: dict = dataclasses.field(default_factory=dict)

    def points(self) -> list[dict]:
        """The cartesian product of the axes, first axis slowest, in a stable order, less the
        points an `exclude` condition matches."""
        keys = list(self.axes)
        points = [dict(zip(keys, combo)) for combo in itertools.product(*self.axes.values())]
        return [p for p in points if not any(
            rule.matches(p, f"{self.source}: exclude[{i}]") for i, rule in enumerate(self.exclude))]

    def varying(self) -> list[str]:
        return [k for k, values in self.axes.items() if len(values) > 1]

    def settings_for(self, point: dict, kind: str) -> dict:
        """The run settings of one point: the first matching rule over the defaults."""
        rules, defaults = (self.safety, DEFAULT_SAFETY) if kind == "safety" else \
            (self.timed, DEFAULT_TIMED)
        settings = dict(defaults)
        for i, rule in enumerate(rules):
            if rule.matches(point, f"{self.source}: {kind}[{i}]"):
                settings.update(rule.settings)
                break
        return settings


# ---- values ------------------------------------------------------------------------------

_RANGE = re.compile(r"^\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*(?:([*+])\s*(\d+))?\s*$")


def expand_range(text: str, where: str) -> list[int] | None:
    """"lo..hi" (step 1), "lo..hi+k" (step k) or "lo..hi*k" (times k); None if not a range."""
    match = _RANGE.match(text)
    if not match:
        return None
    lo, hi, op, k = int(match[1]), int(match[2]), match[3], int(match[4] or 1)
    if hi < lo:
        raise InputError(f"{where}: range {text!r} is empty (hi < lo)")
    if (op == "*" and (k < 2 or lo <= 0)) or (op == "+" and k < 1):
        raise InputError(f"{where}: range {text!r} never grows: use lo..hi*k with lo>0, k>=2, "
                         "or lo..hi+k with k>=1")
    values, v = [], lo
    while v <= hi:
        values.append(v)
        v = v * k if op == "*" else v + k
        if len(values) > 100_000:
            raise InputError(f"{where}: range {text!r} has more than 100000 values")
    return values


def parse_scalar(text: str):
    """Command-line text to int, float or string, so that dp=8 compares as a number."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def _check_scalar(value, where: str):
    if isinstance(value, (dict, list)) or value is None:
        raise InputError(f"{where}: expected a number, string or boolean, got {json.dumps(value)}")
    return value


def axis_values(value, where: str) -> list:
    """A grid-file axis: a list of scalars, one scalar, or a range string."""
    if isinstance(value, str):
        expanded = expand_range(value, where)
        return expanded if expanded is not None else [value]
    if isinstance(value, list):
        if not value:
            raise InputError(f"{where}: an axis needs at least one value")
        out = []
        for i, v in enumerate(value):
            if isinstance(v, str) and (expanded := expand_range(v, f"{where}[{i}]")) is not None:
                out.extend(expanded)
            else:
                out.append(_check_scalar(v, f"{where}[{i}]"))
        if len(set(map(repr, out))) != len(out):
            raise InputError(f"{where}: repeated values in {out}")
        return out
    return [_check_scalar(value, where)]


def parse_assignment(text: str) -> tuple[str, list]:
    """`key=v1,v2` / `key=lo..hi*k` from the command line."""
    key, sep, rest = text.partition("=")
    key = key.strip().removeprefix("--")
    if not sep or not key or not rest:
        raise InputError(f"command line: expected key=value[,value...], got {text!r}")
    values = []
    for part in rest.split(","):
        expanded = expand_range(part, f"command line: {key}")
        values.extend(expanded if expanded is not None else [parse_scalar(part.strip())])
    return key, values


# ---- rules and files ---------------------------------------------------------------------

def _parse_rules(doc, where: str) -> list[Rule]:
    if doc is None:
        return []
    if isinstance(doc, bool):  # `timed = true` keeps the defaults; build_grid handles false
        return []
    if isinstance(doc, dict):
        doc = [doc]
    if not isinstance(doc, list):
        raise InputError(f"{where}: expected a list of rules")
    rules = []
    for i, rule in enumerate(doc):
        rw = f"{where}[{i}]"
        if not isinstance(rule, dict):
            raise InputError(f"{rw}: expected an object")
        unknown = set(rule) - set(SETTING_KEYS) - {"when"}
        if unknown:
            raise InputError(f"{rw}: unknown key(s) {sorted(unknown)}; expected 'when' and any of "
                             f"{list(SETTING_KEYS)}")
        when = rule.get("when", {})
        if not isinstance(when, dict):
            raise InputError(f"{rw}.when: expected an object of knob: condition")
        for key, cond in when.items():
            if isinstance(cond, dict):
                bad = set(cond) - set(COMPARISONS)
                if bad:
                    raise InputError(f"{rw}.when.{key}: unknown comparison(s) {sorted(bad)}; "
                                     f"expected {list(COMPARISONS)}")
        settings = {k: rule[k] for k in SETTING_KEYS if k in rule}
        _check_settings(settings, rw)
        rules.append(Rule(when=when, settings=settings))
    return rules


def _check_settings(settings: dict, where: str):
    if "strategy" in settings and not isinstance(settings["strategy"], str):
        raise InputError(f"{where}.strategy: expected a string")
    for key in ("runs", "seed"):
        if key in settings and (not isinstance(settings[key], int) or settings[key] < 0
                                or isinstance(settings[key], bool)):
            raise InputError(f"{where}.{key}: expected a non-negative integer")
    if "args" in settings and (not isinstance(settings["args"], list)
                               or not all(isinstance(a, str) for a in settings["args"])):
        raise InputError(f"{where}.args: expected a list of strings")
    for key in ("skip", "keep_going"):
        if key in settings and not isinstance(settings[key], bool):
            raise InputError(f"{where}.{key}: expected true or false")


def load_document(path: pathlib.Path) -> dict:
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise InputError(f"{path}: cannot read the grid file ({err.strerror})") from None
    try:
        if path.suffix == ".toml":
            doc = tomllib.loads(raw.decode("utf-8"))
        else:
            doc = json.loads(raw)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: not valid TOML: {err}") from None
    except json.JSONDecodeError as err:
        raise InputError(f"{path}:{err.lineno}: not valid JSON: {err.msg}") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected an object at the top level")
    return doc


def build_grid(doc: dict, source: str, overrides: list[tuple[str, list]]) -> Grid:
    """A grid from a parsed document (may be empty) and command-line `key=values` overrides."""
    unknown = set(doc) - TOP_LEVEL_KEYS
    if unknown:
        raise InputError(f"{source}: unknown key(s) {sorted(unknown)}; expected any of "
                         f"{sorted(TOP_LEVEL_KEYS)}")
    axes: dict = {}
    for section in ("axes", "fixed"):
        part = doc.get(section, {})
        if not isinstance(part, dict):
            raise InputError(f"{source}: {section}: expected an object of knob: value(s)")
        for key, value in part.items():
            if key in axes:
                raise InputError(f"{source}: knob '{key}' is given in both axes and fixed")
            axes[key] = axis_values(value, f"{source}: {section}.{key}") if section == "axes" \
                else [_check_scalar(value, f"{source}: fixed.{key}")]
    safety = _parse_rules(doc.get("safety"), f"{source}: safety")
    exclude = doc.get("exclude", [])
    if not isinstance(exclude, list) or not all(isinstance(e, dict) and e for e in exclude):
        raise InputError(f"{source}: exclude: expected a list of knob: condition objects")
    exclude = _parse_rules([{"when": e} for e in exclude], f"{source}: exclude")
    timed_doc = doc.get("timed")
    timed = _parse_rules(timed_doc, f"{source}: timed")
    if timed_doc is False:
        timed = [Rule(when={}, settings={"skip": True})]
    cli_settings = {}
    for key, values in overrides:
        if key in ("strategy", "runs", "seed", "timed"):
            if len(values) != 1:
                raise InputError(f"command line: {key} takes one value, got {values}")
            cli_settings[key] = values[0]
        else:
            axes[key] = values  # a command-line axis replaces the file's
    if "timed" in cli_settings:
        flag = str(cli_settings.pop("timed")).lower()
        if flag not in ("on", "off", "true", "false", "1", "0"):
            raise InputError("command line: timed=on|off")
        if flag in ("off", "false", "0"):
            timed = [Rule(when={}, settings={"skip": True})]
    if cli_settings:  # strategy/runs/seed on the command line win over every safety rule
        _check_settings(cli_settings, "command line")
        safety = [Rule(when=r.when, settings={**r.settings, **cli_settings}) for r in safety] + \
                 [Rule(when={}, settings=cli_settings)]
    if PROTOCOL not in axes:
        raise InputError(f"{source}: no protocol: give axes.protocol (or protocol=NAME)")
    x = doc.get("x")
    if x is not None and x not in axes:
        raise InputError(f"{source}: x names '{x}', which is not a knob of the grid")
    if x is None:
        numeric = [k for k, v in axes.items() if len(v) > 1 and
                   all(isinstance(i, (int, float)) and not isinstance(i, bool) for i in v)]
        x = "dp" if "dp" in numeric else (numeric[0] if numeric else None)
    design = doc.get("design")
    if design is None:
        design = [k for k, v in axes.items() if len(v) > 1 and k != x]
    elif not isinstance(design, list) or any(k not in axes for k in design):
        raise InputError(f"{source}: design: expected a list of knobs of the grid")
    timeout = doc.get("point_timeout_s", 600)
    if not isinstance(timeout, (int, float)) or timeout <= 0:
        raise InputError(f"{source}: point_timeout_s: expected a positive number of seconds")
    for key in ("name", "title", "description"):
        if key in doc and not isinstance(doc[key], str):
            raise InputError(f"{source}: {key}: expected a string")
    answer = doc.get("answer", {})
    if not isinstance(answer, dict):
        raise InputError(f"{source}: answer: expected a table of design conditions")
    name = doc.get("name", "sweep")
    return Grid(answer=answer, name=name, title=doc.get("title", name), description=doc.get("description", ""),
                axes=axes, x=x, design=design, safety=safety, timed=timed,
                point_timeout_s=float(timeout), source=source, exclude=exclude)


def load_grid(path: pathlib.Path | None, overrides: list[str]) -> Grid:
    parsed = [parse_assignment(text) for text in overrides]
    if path is None:
        return build_grid({}, "command line", parsed)
    return build_grid(load_document(path), str(path), parsed)
