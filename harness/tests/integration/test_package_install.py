"""`pip install ./harness` into a fresh venv, offline, and the package's tests pass there.

The venv sees the machine's site packages (pytest, setuptools, wheel: harness/requirements.txt)
so nothing is downloaded; the package itself comes only from the copy of harness/ it is given.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

HARNESS = pathlib.Path(__file__).resolve().parents[2]


def test_the_package_installs_into_a_fresh_venv_and_its_tests_pass_there(tmp_path, real_bin):
    source = tmp_path / "harness"
    source.mkdir()
    shutil.copy(HARNESS / "pyproject.toml", source)
    for package in ("amaxcheck", "amaxharness"):
        shutil.copytree(HARNESS / package, source / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-index",
                              "--no-build-isolation", "--disable-pip-version-check", "./harness"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    where = subprocess.run([str(python), "-c", "import amaxcheck, amaxharness.program; print(amaxcheck.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert pathlib.Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    tests = tmp_path / "tests"
    tests.mkdir()
    for name in ("conftest.py", "test_api.py"):
        shutil.copy(pathlib.Path(__file__).with_name(name), tests)
    env = dict(os.environ, AMAXCHECK_BIN=str(real_bin), AMAXCHECK_EXPECT_INSTALLED=str(venv),
               AMAXCHECK_ROOT=str(HARNESS.parent), PYTHONDONTWRITEBYTECODE="1")
    ran = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "5 passed" in ran.stdout, ran.stdout
