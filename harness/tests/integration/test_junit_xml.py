"""The JUnit XML that `amaxcheck suite --junit-xml` and `check --junit-xml` write is what CI tools
read, checked with junit_schema against pytest's own `--junit-xml` output as the reference."""

import pathlib
import subprocess
import sys

import pytest

import junit_schema

PYTEST_SAMPLE = '''
import pytest
def test_passes():
    print("to system-out")
def test_fails():
    assert 1 == 2, "a <failure> & more"
@pytest.mark.skip(reason="skipped")
def test_skipped():
    pass
@pytest.fixture
def broken():
    raise RuntimeError("fixture error")
def test_errors(broken):
    pass
'''


def pytest_report(tmp_path: pathlib.Path) -> str:
    (tmp_path / "test_sample.py").write_text(PYTEST_SAMPLE)
    xml = tmp_path / "pytest.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o",
                    "junit_logging=system-out", f"--junit-xml={xml}", str(tmp_path / "test_sample.py")],
                   cwd=tmp_path, capture_output=True, text=True, timeout=120)
    return xml.read_text()


def test_pytests_own_report_is_valid_so_the_checker_accepts_the_reference(tmp_path):
    text = pytest_report(tmp_path)
    assert "<failure" in text and "<error" in text and "<skipped" in text and "<system-out>" in text
    assert junit_schema.problems(text) == []


@pytest.mark.parametrize("change, problem", [
    (lambda t: t.replace('tests="4"', 'tests="5"'), "tests=5 but it holds 4"),
    (lambda t: t.replace('failures="1"', 'failures="x"'), "is not a count"),
    (lambda t: t.replace("<testcase ", '<testcase colour="red" ', 1), "unknown attribute 'colour'"),
    (lambda t: t.replace('classname="test_sample" ', "", 1), "missing attribute 'classname'"),
    (lambda t: t.replace("<system-out>", "<stdout>", 1).replace("</system-out>", "</stdout>", 1),
     "unknown element <stdout>"),
    (lambda t: t.replace("</testsuite>", "<testcase/></testsuite>"), "missing attribute"),
    (lambda t: t[: len(t) // 2], "not well-formed"),
])
def test_the_checker_rejects_broken_reports(tmp_path, change, problem):
    found = junit_schema.problems(change(pytest_report(tmp_path)))
    assert any(problem in p for p in found), found




@pytest.mark.integration
def test_a_suites_junit_report_is_valid_with_one_testcase_per_case(tmp_path, real_bin):
    suite = tmp_path / "s.json"
    suite.write_text('''{"suite": "ci", "defaults": {"scenario": {"protocol": "te-async",
        "knobs": {"dp": 2, "modules": 1, "iters": 1}}, "runs": 20},
      "cases": [
        {"name": "clean", "expect": {"verdict": "no_hazard_found"}},
        {"name": "race expected", "scenario": {"knobs": {"wait": "after-copy"}},
         "expect": {"verdict": "hazard", "kinds": ["data_race"]}},
        {"name": "race <unexpected> & \\"quoted\\"", "scenario": {"knobs": {"wait": "after-copy"}},
         "expect": {"verdict": "no_hazard_found"}},
        {"name": "cut short", "max_steps": 4, "expect": {"verdict": "no_hazard_found"}}]}''')
    xml = tmp_path / "out" / "junit.xml"
    done = subprocess.run([str(real_bin), "suite", str(suite), "--out", str(tmp_path / "out"),
                           "--junit-xml", str(xml)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    text = xml.read_text()
    assert junit_schema.problems(text) == []
    import xml.etree.ElementTree as ET
    cases = ET.fromstring(text).findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == ["clean", "race expected",
                                              'race <unexpected> & "quoted"', "cut short"]
    assert [[r.tag for r in c if r.tag != "system-out"] for c in cases] == [[], [], ["failure"], ["error"]]
    failure = cases[2].find("failure")
    assert "RAW race on rank" in failure.get("message")
    # system-out: what the case rests on (a sample is no proof), then its replay or rerun command.
    assert cases[2].find("system-out").text.splitlines()[-1].startswith("amaxcheck replay ")
    clean_out = cases[0].find("system-out").text
    assert clean_out.startswith("expected: no hazard found\ngot: no hazard found (20 runs, ")
    assert "sampled: 20 random run(s)" in clean_out
    assert clean_out.splitlines()[-1].startswith("amaxcheck check te-async")
    assert sorted(p.name for p in xml.parent.iterdir() if p.suffix == ".xml") == ["junit.xml"]


@pytest.mark.integration
def test_a_checks_junit_report_is_valid(tmp_path, real_bin):
    xml = tmp_path / "check.xml"
    done = subprocess.run([str(real_bin), "check", "te-async", "--wait", "after-copy", "--modules", "1",
                           "--iters", "1", "--trace-out", str(tmp_path / "t.jsonl"), "--junit-xml", str(xml)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    text = xml.read_text()
    assert junit_schema.problems(text) == []
    assert 'failures="1"' in text and f"amaxcheck replay {tmp_path / 't.jsonl'}" in text
