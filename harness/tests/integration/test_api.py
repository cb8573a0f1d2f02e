"""The amaxcheck package against the real program: typed results of check and suite, and the
assertions' readable failures. test_package_install.py runs this file again in a fresh venv
where the package was installed with pip (AMAXCHECK_EXPECT_INSTALLED names that venv)."""

import os
import pathlib

import pytest

import amaxcheck
from amaxcheck.testing import assert_clean, assert_hazard, assert_suite_met

pytestmark = pytest.mark.integration

REPO = pathlib.Path(os.environ.get("AMAXCHECK_ROOT") or pathlib.Path(__file__).resolve().parents[3])
SMALL = {"dp": 2, "modules": 1, "iters": 1}


def test_the_package_is_the_expected_copy():
    prefix = os.environ.get("AMAXCHECK_EXPECT_INSTALLED")
    if prefix:
        assert pathlib.Path(amaxcheck.__file__).resolve().is_relative_to(pathlib.Path(prefix).resolve())
        assert (pathlib.Path(amaxcheck.__file__).parent / "py.typed").is_file()


def test_check_returns_a_typed_hazard_with_participants_and_replay(real_bin, tmp_path):
    result = amaxcheck.check("te-async", knobs={**SMALL, "wait": "after-copy"}, runs=20,
                             trace_out=tmp_path / "race.jsonl")
    assert result.verdict == "hazard" and result.exit_code == 1
    assert "data_race" in result.hazard_kinds
    race = result.hazards[0]
    assert race.kind == "data_race" and race.subject and len(race.participants) == 2
    assert {p.op for p in race.participants} == {"amax_reduce_fwd", "copy_back_fwd"}
    assert result.replay == f"amaxcheck replay {tmp_path / 'race.jsonl'}"
    assert result.wall_s > 0 and result.seconds >= 0 and result.runs == 1
    with pytest.raises(AssertionError) as failed:
        assert_clean(result)
    message = str(failed.value)
    assert message.startswith("expected proven clean or no hazard found, got HAZARD")
    assert "data_race: RAW race on rank" in message and "replay: amaxcheck replay" in message
    assert_hazard(result, "data_race")


def test_check_proves_a_clean_design_and_the_assertion_passes(real_bin):
    result = amaxcheck.check("te-async", knobs={**SMALL, "comm": "separate"}, strategy="exhaustive")
    assert result.verdict == "proven_clean" and result.complete and result.replay is None
    assert_clean(result, proven=True)
    with pytest.raises(AssertionError, match="expected data_race, got proven clean|expected HAZARD"):
        assert_hazard(result, "data_race")


def test_an_inconclusive_check_is_a_result_and_bad_input_raises(real_bin):
    cut = amaxcheck.check("te-async", "--max-steps", "4", knobs=SMALL, runs=3)
    assert cut.verdict == "inconclusive" and cut.cut_short == ["step_cap"] and cut.exit_code == 4
    with pytest.raises(amaxcheck.InputError, match="not a protocol"):
        amaxcheck.check("no-such-protocol")


def test_suite_returns_every_case_and_the_assertion_names_the_failing_one(real_bin, tmp_path):
    seed = amaxcheck.suite(REPO / "traces" / "suites" / "seed_designs.toml", out=tmp_path / "seed")
    assert seed.passed and seed.exit_code == 0 and len(seed.cases) == 9
    assert_suite_met(seed)
    deadlock = next(c for c in seed.cases if "serialized" in c.name)
    assert deadlock.verdict == "hazard" and deadlock.expected.kinds == ["deadlock"]
    assert deadlock.command.startswith("amaxcheck replay ")
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"suite": "wrong", "cases": [{"name": "claims no race", "runs": 10,'
                     ' "scenario": {"protocol": "te-async", "knobs": {"dp": 2, "modules": 1,'
                     ' "iters": 1, "wait": "after-copy"}}, "expect": {"verdict": "no_hazard_found"}}]}')
    result = amaxcheck.suite(wrong, out=tmp_path / "wrong")
    assert result.exit_code == 1 and [c.name for c in result.unmet] == ["claims no race"]
    with pytest.raises(AssertionError) as failed:
        assert_suite_met(result)
    assert "claims no race: expected no_hazard_found, got HAZARD data_race" in str(failed.value)
    assert "replay: amaxcheck replay" in str(failed.value)
