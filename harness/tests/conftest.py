"""Shared fixtures: the harness on sys.path, a fake program, and a way to run the CLI."""

import json
import os
import pathlib
import stat
import subprocess
import sys

import pytest

HARNESS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HARNESS))
CLI = HARNESS / "cli.py"


@pytest.fixture
def fake_bin(tmp_path, monkeypatch):
    """An executable stand-in for amaxcheck (see fake_amaxcheck.py); logs its invocations."""
    source = pathlib.Path(__file__).with_name("fake_amaxcheck.py").read_text()
    path = tmp_path / "bin" / "amaxcheck"
    path.parent.mkdir()
    path.write_text(f"#!{sys.executable}\n{source}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    log = tmp_path / "invocations.jsonl"
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


def run_cli(*args, cwd=None, env=None, timeout=120):
    """Runs `python3 harness/cli.py ARGS` as the launcher does; returns CompletedProcess."""
    return subprocess.run([sys.executable, str(CLI), *map(str, args)], cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def cli():
    return run_cli
