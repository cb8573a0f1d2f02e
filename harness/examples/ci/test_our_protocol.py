"""Our FP8 amax protocol, checked in CI. Run: AMAXCHECK_BIN=path/to/amaxcheck pytest ci/ --junit-xml=amaxcheck.xml"""

import pathlib

import amaxcheck
from amaxcheck.testing import assert_clean, assert_hazard

HERE = pathlib.Path(__file__).parent


def test_our_protocol_is_proven_free_of_races_and_divergence(tmp_path):
    result = amaxcheck.check(HERE / "our_protocol.json", strategy="exhaustive", time_budget_s=60,
                             trace_out=tmp_path / "counterexample.jsonl")
    # On failure: the hazard, its ranks and ops, and the command that replays it.
    assert_clean(result, proven=True)


def test_the_first_version_still_shows_the_race_we_fixed(tmp_path):
    result = amaxcheck.check(HERE / "our_protocol_v1.json", strategy="exhaustive",
                             trace_out=tmp_path / "race.jsonl")
    assert_hazard(result, "data_race")
