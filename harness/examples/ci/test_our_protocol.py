"""CI check of our FP8 amax protocol (README, "amaxcheck in CI"): run with
`AMAXCHECK_BIN=build/sim/amaxcheck pytest harness/examples/ci --junit-xml=amaxcheck.xml`."""

import pathlib

import amaxcheck
from amaxcheck.testing import assert_clean, assert_hazard

HERE = pathlib.Path(__file__).parent
OLD_DESIGN = HERE.parents[2] / "traces" / "scenarios" / "custom-wait-after-copy.json"


def test_our_protocol_is_proven_free_of_races_and_divergence(tmp_path):
    result = amaxcheck.check(HERE / "our_protocol.json", strategy="exhaustive", time_budget_s=60,
                             trace_out=tmp_path / "counterexample.jsonl")
    assert_clean(result, proven=True)  # on failure: the hazard, its ranks and ops, the replay command


def test_the_old_design_still_shows_the_race_we_fixed(tmp_path):
    result = amaxcheck.check(OLD_DESIGN, strategy="exhaustive", trace_out=tmp_path / "race.jsonl")
    assert_hazard(result, "data_race")
