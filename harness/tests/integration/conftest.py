"""The real amaxcheck program for integration tests, or a skip that says why."""

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
# Read at import, before any test's fake program replaces AMAXCHECK_BIN.
CANDIDATE = pathlib.Path(os.environ.get("AMAXCHECK_BIN") or REPO / "build" / "sim" / "amaxcheck")


def _usable(path: pathlib.Path) -> str | None:
    """None when `path` runs `check --help`; else why not."""
    if not path.is_file():
        return f"amaxcheck is not built ({path} does not exist)"
    try:
        done = subprocess.run([str(path), "check", "--help"], capture_output=True, text=True,
                              timeout=60)
    except OSError as err:
        return f"{path} does not run: {err}"
    if done.returncode != 0 or "--strategy" not in done.stdout:
        return f"{path} has no `check` command with --strategy yet"
    return None


WHY_NOT = _usable(CANDIDATE)


@pytest.fixture
def real_bin(monkeypatch):
    if WHY_NOT:
        pytest.skip(WHY_NOT)
    monkeypatch.setenv("AMAXCHECK_BIN", str(CANDIDATE))
    return CANDIDATE
