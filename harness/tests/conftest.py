"""Shared fixtures: the harness on sys.path, a fake program, and a way to run the CLI."""

import json
import os
import pathlib
import stat
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from harness_testing import run_cli  # noqa: E402  (needs the path above)


@pytest.fixture
def fake_bin(tmp_path, monkeypatch):
    """Executable stand-ins for amaxcheck and amaxcheck-mpi next to it (see fake_amaxcheck.py);
    both log their invocations."""
    source = pathlib.Path(__file__).with_name("fake_amaxcheck.py").read_text()
    path = tmp_path / "bin" / "amaxcheck"
    path.parent.mkdir()
    for program in (path, path.with_name("amaxcheck-mpi")):
        program.write_text(f"#!{sys.executable}\n{source}")
        program.chmod(program.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    log = tmp_path / "invocations.jsonl"
    monkeypatch.setenv("FAKE_AMAXCHECK_REAL", os.environ.get("AMAXCHECK_BIN", ""))
    monkeypatch.setenv("AMAXCHECK_BIN", str(path))
    monkeypatch.setenv("FAKE_AMAXCHECK_LOG", str(log))
    return FakeProgram(path, log)


class FakeProgram:
    def __init__(self, path, log):
        self.path, self.log = path, log

    def calls(self) -> list:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def cli():
    return run_cli
