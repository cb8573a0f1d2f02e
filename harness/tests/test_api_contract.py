"""amaxcheck.check holds the program to its contract: a report whose verdict and exit code
disagree is the program's error, not a result (suite() checks the same)."""

import pytest

import amaxcheck


def test_a_check_whose_exit_code_contradicts_its_verdict_raises(fake_bin, monkeypatch):
    racy = amaxcheck.check("te-async", knobs={"wait": "after-copy"})
    assert racy.verdict == "hazard" and racy.exit_code == 1
    monkeypatch.setenv("FAKE_WRONG_EXIT", "1")
    with pytest.raises(amaxcheck.ProgramError, match="the report says hazard \\(exit 1\\), the program exited 0"):
        amaxcheck.check("te-async", knobs={"wait": "after-copy"})
    with pytest.raises(amaxcheck.ProgramError, match="exited 1"):
        amaxcheck.check("te-async")
