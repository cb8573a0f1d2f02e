"""Grid parsing: axes, ranges, rules, and how points become program arguments."""

import json

import pytest

from amaxharness.errors import InputError
from amaxharness.sweep import grid as grid_mod
from amaxharness.sweep import plan as plan_mod
from amaxharness.sweep.command import DEFAULT_GRID


def build(doc, overrides=()):
    return grid_mod.build_grid(doc, "test.json", [grid_mod.parse_assignment(o) for o in overrides])


def test_geometric_and_stepped_ranges_expand_inclusively():
    assert grid_mod.expand_range("2..1024*2", "x") == [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    assert grid_mod.expand_range("1..4", "x") == [1, 2, 3, 4]
    assert grid_mod.expand_range("0..10+5", "x") == [0, 5, 10]
    assert grid_mod.expand_range("shared", "x") is None


@pytest.mark.parametrize("text", ["4..2", "0..8*2", "1..8*1", "1..8+0"])
def test_ranges_that_cannot_grow_or_are_empty_are_refused(text):
    with pytest.raises(InputError, match="range"):
        grid_mod.expand_range(text, "axes.dp")


def test_command_line_assignment_parses_numbers_lists_and_ranges():
    assert grid_mod.parse_assignment("comm=shared,separate") == ("comm", ["shared", "separate"])
    assert grid_mod.parse_assignment("dp=2..8*2,64") == ("dp", [2, 4, 8, 64])
    assert grid_mod.parse_assignment("--cost.alpha-us=2.5") == ("cost.alpha-us", [2.5])
    with pytest.raises(InputError, match="key=value"):
        grid_mod.parse_assignment("dp")


def test_points_are_the_cartesian_product_in_axis_order():
    g = build({"axes": {"protocol": ["te-async"], "comm": ["shared", "separate"],
                        "dp": [2, 4]}, "fixed": {"modules": 2}})
    points = g.points()
    assert [(p["comm"], p["dp"]) for p in points] == [
        ("shared", 2), ("shared", 4), ("separate", 2), ("separate", 4)]
    assert all(p["modules"] == 2 for p in points)
    assert g.x == "dp" and g.design == ["comm"]


def test_first_matching_rule_sets_the_safety_strategy():
    g = build({"axes": {"protocol": ["p"], "dp": "2..64*2"},
               "safety": [{"when": {"dp": {"<=": 8}}, "strategy": "exhaustive", "runs": 500},
                          {"when": {"dp": [16, 32]}, "strategy": "pct", "runs": 40},
                          {"strategy": "random", "runs": 5}]})
    by_dp = {p["dp"]: g.settings_for(p, "safety") for p in g.points()}
    assert by_dp[8]["strategy"] == "exhaustive" and by_dp[8]["runs"] == 500
    assert by_dp[32]["strategy"] == "pct" and by_dp[32]["runs"] == 40
    assert by_dp[64]["strategy"] == "random" and by_dp[64]["runs"] == 5


def test_cost_knobs_reach_only_the_timed_run_and_runs_only_the_safety_run():
    g = build({"axes": {"protocol": ["te-async"], "cost.alpha-us": [5, 10]},
               "fixed": {"dp": 4}, "safety": {"runs": 7}})
    planned = plan_mod.plan(g)
    assert len(planned) == 2
    safety = planned[0].safety.args
    timed = planned[0].timed.args
    assert "--alpha-us" not in safety and ("--runs", "7") == safety[safety.index("--runs"):][:2]
    assert timed[timed.index("--alpha-us") + 1] == "5" and "--runs" not in timed
    assert timed[timed.index("--strategy") + 1] == "timed" and timed[-1] == "--json"
    # points that differ only in a cost knob share one safety run
    assert planned[0].safety == planned[1].safety
    assert len(plan_mod.distinct_jobs(planned)) == 3


def test_exhaustive_runs_cap_the_schedules_and_keep_going_collects_every_hazard():
    g = build({"axes": {"protocol": ["p"], "dp": [2, 64]},
               "safety": [{"when": {"dp": 2}, "strategy": "exhaustive", "runs": 500},
                          {"strategy": "pct", "runs": 9, "keep_going": True}]})
    small, large = (p.safety.args for p in plan_mod.plan(g))
    assert "--max-schedules" in small and "--runs" not in small
    assert small[small.index("--max-schedules") + 1] == "500"
    assert "--keep-going" in large and large[large.index("--runs") + 1] == "9"


def test_a_timed_safety_strategy_reuses_the_timed_run():
    g = build({"axes": {"protocol": ["p"], "dp": [2, 1024]},
               "safety": [{"when": {"dp": 1024}, "strategy": "timed"}, {"runs": 5}]})
    small, large = plan_mod.plan(g)
    assert small.safety != small.timed
    assert large.safety is large.timed
    assert len(plan_mod.distinct_jobs([small, large])) == 3


def test_command_line_overrides_replace_an_axis_and_every_safety_rule():
    g = build({"axes": {"protocol": ["p"], "dp": [2, 4, 8]},
               "safety": [{"when": {"dp": 2}, "strategy": "exhaustive", "runs": 100}]},
              overrides=["dp=16,32", "runs=3", "timed=off"])
    assert g.axes["dp"] == [16, 32]
    for p in g.points():
        assert g.settings_for(p, "safety")["runs"] == 3
        assert g.settings_for(p, "timed")["skip"] is True
    assert all(pp.timed is None for pp in plan_mod.plan(g))


@pytest.mark.parametrize("doc, message", [
    ({"axes": {"dp": [2]}}, "no protocol"),
    ({"axes": {"protocol": ["p"]}, "colour": 1}, "unknown key"),
    ({"axes": {"protocol": ["p"], "dp": []}}, "at least one value"),
    ({"axes": {"protocol": ["p"], "dp": [2, 2]}}, "repeated"),
    ({"axes": {"protocol": ["p"]}, "safety": [{"strategy": "pct", "rnus": 3}]}, "unknown key"),
    ({"axes": {"protocol": ["p"]}, "safety": [{"runs": -1}]}, "non-negative"),
    ({"axes": {"protocol": ["p"]}, "safety": [{"when": {"dp": {"~": 2}}}]}, "comparison"),
    ({"axes": {"protocol": ["p"]}, "x": "dp"}, "not a knob"),
    ({"axes": {"protocol": ["p"], "dp": [{"a": 1}]}}, "expected a number"),
    ({"axes": {"protocol": ["p"]}, "fixed": {"protocol": "q"}}, "both axes and fixed"),
])
def test_malformed_grids_name_what_is_wrong(doc, message):
    with pytest.raises(InputError, match=message):
        build(doc)


def test_a_rule_on_an_unknown_knob_is_an_input_error():
    g = build({"axes": {"protocol": ["p"]}, "safety": [{"when": {"tp": 2}, "runs": 1}]})
    with pytest.raises(InputError, match="'tp'"):
        g.settings_for(g.points()[0], "safety")


def test_toml_and_json_grid_files_load_the_same_grid(tmp_path):
    toml = tmp_path / "g.toml"
    toml.write_text('name = "t"\n[axes]\nprotocol = ["te-async"]\ndp = "2..8*2"\n'
                    '[[safety]]\nwhen = { dp = { "<=" = 4 } }\nstrategy = "exhaustive"\n')
    js = tmp_path / "g.json"
    js.write_text(json.dumps({"name": "t", "axes": {"protocol": ["te-async"], "dp": "2..8*2"},
                              "safety": [{"when": {"dp": {"<=": 4}},
                                          "strategy": "exhaustive"}]}))
    a, b = grid_mod.load_grid(toml, []), grid_mod.load_grid(js, [])
    assert a.axes == b.axes == {"protocol": ["te-async"], "dp": [2, 4, 8]}
    assert [a.settings_for(p, "safety") for p in a.points()] == \
        [b.settings_for(p, "safety") for p in b.points()]


def test_a_json_syntax_error_names_the_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{\n "axes": {\n  "dp": [2,\n }\n}\n')
    with pytest.raises(InputError, match=r"bad.json:4"):
        grid_mod.load_grid(bad, [])


def test_the_shipped_seed_question_covers_both_knobs_over_dp_2_to_1024():
    g = grid_mod.load_grid(DEFAULT_GRID, [])
    assert set(g.axes["comm"]) == {"shared", "separate"}
    assert set(g.axes["wait"]) == {"before-copy", "after-copy"}
    assert set(g.axes["kernels"]) == {"concurrent", "serialized"}
    assert g.axes["dp"] == [2 ** k for k in range(1, 11)]
    assert set(g.axes["protocol"]) == {"te-async", "te-sync"}
    planned = plan_mod.plan(g)
    # te-async: comm x amax order x wait x kernels x bucket size x 10 DP sizes; te-sync has no
    # wait to move, so only its before-copy half
    assert len(planned) == 2 * 2 * 2 * 2 * 2 * 10 + 2 * 2 * 2 * 2 * 10
    assert not any(p.point["protocol"] == "te-sync" and p.point["wait"] == "after-copy" for p in planned)
    for p in planned:
        # safety runs sample up to DP 64 (te-sync, whose hazards are the same: up to DP 16)
        assert (p.safety is not None) == (p.point["dp"] <= (64 if p.point["protocol"] == "te-async" else 16))
        # timed runs for the designs that neither hang nor race
        hangs = p.point["amax-order"] == "rank-dependent" and (
            p.point["comm"] == "shared" or p.point["kernels"] == "serialized")
        races = p.point["wait"] == "after-copy"
        assert (p.timed is not None) == (not hangs and not races)


def test_excluded_points_are_left_out_of_the_product():
    g = build({"axes": {"protocol": ["p"], "comm": ["shared", "separate"],
                        "order": ["same", "rank-dependent"]},
               "exclude": [{"comm": "separate", "order": "same"}]})
    assert [(p["comm"], p["order"]) for p in g.points()] == [
        ("shared", "same"), ("shared", "rank-dependent"), ("separate", "rank-dependent")]
    with pytest.raises(InputError, match="exclude"):
        build({"axes": {"protocol": ["p"]}, "exclude": [{}]})
