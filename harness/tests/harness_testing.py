"""Helpers shared by the harness tests: where the CLI is and how to run it as the launcher does."""

import os
import pathlib
import subprocess
import sys

HARNESS = pathlib.Path(__file__).resolve().parents[1]
CLI = HARNESS / "cli.py"


def run_cli(*args, cwd=None, env=None, timeout=120):
    """Runs `python3 harness/cli.py ARGS` as the launcher does; returns CompletedProcess."""
    return subprocess.run([sys.executable, str(CLI), *map(str, args)], cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)
