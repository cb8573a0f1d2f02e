"""The README's CI example (harness/examples/ci) runs green with a valid JUnit report, and fails
readably, naming the hazard and its replay command, when the protocol it guards regresses."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import junit_schema

pytestmark = pytest.mark.integration

HARNESS = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = HARNESS / "examples" / "ci"


def run_example(folder: pathlib.Path, real_bin: pathlib.Path, xml: pathlib.Path):
    env = dict(os.environ, AMAXCHECK_BIN=str(real_bin), PYTHONPATH=str(HARNESS),
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"--junit-xml={xml}", str(folder)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_readme_shows_the_example_as_it_is():
    readme = (HARNESS.parent / "README.md").read_text()
    assert (EXAMPLE / "test_our_protocol.py").read_text() in readme


def test_the_ci_example_passes_and_writes_a_valid_junit_report(tmp_path, real_bin):
    ran = run_example(EXAMPLE, real_bin, tmp_path / "amaxcheck.xml")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 passed" in ran.stdout
    assert junit_schema.problems((tmp_path / "amaxcheck.xml").read_text()) == []


def test_the_ci_example_fails_with_the_hazard_and_its_replay_when_the_protocol_regresses(tmp_path, real_bin):
    # The example folder, with our protocol reverted to its first version (wait after the copy).
    folder = tmp_path / "ci"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(folder / "our_protocol_v1.json", folder / "our_protocol.json")
    xml = tmp_path / "amaxcheck.xml"
    ran = run_example(folder, real_bin, xml)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "1 failed, 1 passed" in ran.stdout
    assert "expected proven clean, got HAZARD" in ran.stdout
    assert "data_race: WAR race on rank 0 buffer amax_global" in ran.stdout and "replay: amaxcheck replay" in ran.stdout
    report = xml.read_text()
    assert junit_schema.problems(report) == [] and 'failures="1"' in report
