"""Finding and running the built amaxcheck program.

Where it is: the `program` argument, else AMAXCHECK_BIN, else an `amaxcheck` executable in the
package's `bin/` folder (a wheel that ships the program), else the checkout's build
(`build/sim/amaxcheck` next to `harness/`), else `amaxcheck` on PATH.
"""

from __future__ import annotations

import functools
import os
import pathlib
import shutil
import subprocess
import time
from typing import Sequence

from .errors import InputError, ProgramError

StrPath = str | os.PathLike[str]


def _executable(path: pathlib.Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_program(program: StrPath | None = None) -> pathlib.Path:
    """The program to run; InputError saying where it looked when there is none."""
    if program is not None:
        path = pathlib.Path(program)
        if not _executable(path):
            raise InputError(f"{path} is not an executable file")
        return path
    value = os.environ.get("AMAXCHECK_BIN")
    if value:
        path = pathlib.Path(value)
        if not _executable(path):
            raise InputError(f"AMAXCHECK_BIN={value} is not an executable file: build it first "
                             "(./amaxcheck build)")
        return path
    here = pathlib.Path(__file__).resolve().parent
    for candidate in (here / "bin" / "amaxcheck", here.parents[1] / "build" / "sim" / "amaxcheck"):
        if _executable(candidate):
            return candidate
    found = shutil.which("amaxcheck")
    if found:
        return pathlib.Path(found)
    raise InputError("the amaxcheck program was not found: set AMAXCHECK_BIN to the built program "
                     "(build/sim/amaxcheck), or put it on PATH")


def run_program(argv: Sequence[StrPath], timeout_s: float | None = None,
                cwd: StrPath | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    """Runs argv, capturing its output; ProgramError past `timeout_s`. Returns the finished
    process and its wall time in seconds."""
    start = time.monotonic()
    args = [str(a) for a in argv]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout_s, cwd=cwd,
                              check=False)
    except subprocess.TimeoutExpired:
        raise ProgramError(f"timed out after {timeout_s:g} s: {' '.join(args)}") from None
    return done, time.monotonic() - start


@functools.lru_cache(maxsize=None)
def hazard_kind_names(program: str) -> tuple[str, ...]:
    """Every hazard kind's name, in the program's report order (`hazard-kinds --json`)."""
    done, _ = run_program([program, "hazard-kinds", "--json"], timeout_s=60)
    if done.returncode != 0:
        raise ProgramError(f"exit {done.returncode}: {program} hazard-kinds --json")
    import json
    try:
        return tuple(str(k["name"]) for k in json.loads(done.stdout)["hazard_kinds"])
    except (ValueError, KeyError, TypeError) as err:
        raise ProgramError(f"unreadable hazard kinds ({err!r}) from {program}") from None
