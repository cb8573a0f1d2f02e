"""The sweep says exactly what it knows: a proof only from a complete exhaustive search, a sample
with its run count, a check cut short (by a cap, the time budget or the deadline) inconclusive
with its cause, cost figures labelled as the cost model's, and nothing of designs never run.
All against the fake program (fake_amaxcheck.py)."""

import csv
import json
import os
import re

SAFETY = [{"when": {"dp": {"<=": 8}}, "strategy": "exhaustive", "runs": 100},
          {"when": {"dp": {"<=": 16}}, "strategy": "exhaustive", "runs": 50},
          {"strategy": "pct", "runs": 20}]


def sweep(cli, tmp_path, grid, *extra, env=None):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(grid))
    out = tmp_path / "out"
    done = cli("sweep", "--grid", path, "--out", out, "--no-progress", "--jobs", "2", *extra,
               env=env)
    return done, out


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def section(report: str, title: str) -> str:
    """One '## title' section of report.md, up to the next heading."""
    match = re.search(rf"^## {title}\n(.*?)(?=^## |\Z)", report, re.S | re.M)
    return match.group(1) if match else ""


def svg_text(path) -> str:
    """The texts of a matplotlib SVG (it writes each as a comment beside its glyphs)."""
    return "\n".join(re.findall(r"<!-- (.*?) -->", path.read_text()))


def check_calls(fake):
    return [c for c in fake.calls() if c[0] == "check"]


# ---- A1: the answer speaks only of designs that ran, in the words their verdicts allow ------

def test_the_answer_leaves_out_designs_the_grid_never_ran(tmp_path, fake_bin, cli):
    grid = {"name": "ans", "x": "dp",
            "axes": {"protocol": ["te-async"], "comm": ["separate"], "wait": ["before-copy"],
                     "kernels": ["concurrent", "serialized"], "dp": [2]},
            "safety": [{"strategy": "exhaustive", "runs": 0}],
            "answer": {"x": 2, "order_concurrent": {"kernels": "concurrent"},
                       "order_serialized": {"kernels": "serialized"}}}
    done, out = sweep(cli, tmp_path, grid)
    assert done.returncode == 0, done.stderr
    answer = section((out / "report.md").read_text(), "The answer")
    # no shared communicator, after-copy wait, rank-dependent order or te-sync ran
    for never_ran in ("shared", "after the copy-back", "rank-dependent", "te-sync",
                      "on any communicator"):
        assert never_ran not in answer, never_ran
    assert "concurrent kernels (NCCL >= 2.26, CUDA >= 12.3): proven clean at dp=2 by a " \
           "complete exhaustive search (1 schedule)" in answer
    assert "serialized kernels: proven clean at dp=2" in answer


def test_the_answer_words_each_verdict_with_its_runs_and_dp_range(tmp_path, fake_bin, cli):
    grid = {"name": "ans", "x": "dp",
            "axes": {"protocol": ["te-async"], "comm": ["shared", "separate"],
                     "amax-order": ["same", "rank-dependent"], "dp": [2, 16, 64]},
            "safety": SAFETY,
            "answer": {"x": 64, "shared": {"comm": "shared", "amax-order": "same"},
                       "separate": {"comm": "separate", "amax-order": "same"},
                       "order_concurrent": {"comm": "separate", "amax-order": "rank-dependent"},
                       "shared_order": {"comm": "shared", "amax-order": "rank-dependent"}}}
    done, out = sweep(cli, tmp_path, grid)
    assert done.returncode == 4, done.stderr  # dp=16's exhaustive search hit its schedule cap
    answer = section((out / "report.md").read_text(), "The answer")
    # the grid has no serialized kernels, te-sync or after-copy wait: nothing is said of them
    for never_ran in ("serialized", "te-sync", "after the copy-back", "clean in every"):
        assert never_ran not in answer, never_ran
    assert ("- For a separate amax communicator and a rank-dependent launch order of the "
            "backward amax reduction: proven clean at dp=2 by a complete exhaustive search "
            "(100 schedules); no hazard found in 20 sampled runs at dp=64; inconclusive at "
            "dp=16 (cut short: schedule_cap).") in answer
    assert "- For the shared communicator and a rank-dependent launch order of the backward " \
           "amax reduction: hazardous (ordering_hazard) at dp=2–64." in answer
    assert ("at dp 64, with the same launch order on every rank: a separate amax communicator "
            "instead of the shared communicator changes the exposed amax latency from 40.0 µs "
            "to 20.0 µs") in answer


# ---- A2: a cell of several points shows the worst verdict and says how many it merges ------

def test_a_safety_map_cell_of_several_points_shows_the_worst_verdict(tmp_path, fake_bin, cli):
    grid = {"name": "d2", "x": "dp", "design": ["comm"],
            "axes": {"protocol": ["te-async"], "comm": ["separate"],
                     "wait": ["after-copy", "before-copy"], "dp": [2]},
            "safety": [{"strategy": "exhaustive", "runs": 0}], "timed": False}
    done, out = sweep(cli, tmp_path, grid)
    assert done.returncode == 0, done.stderr
    verdicts = {r["wait"]: r["verdict"] for r in read_csv(out / "results.csv")}
    assert verdicts == {"after-copy": "hazard", "before-copy": "proven_clean"}
    cells = svg_text(out / "safety_map.svg")
    assert "race" in cells and "(worst of 2)" in cells
    assert "proof" not in cells  # the clean point, written last, no longer paints over the race


# ---- B1: inconclusive points make the sweep exit 4 and are named -----------------------------

def test_a_sweep_with_an_inconclusive_point_exits_4_and_names_it(tmp_path, fake_bin, cli):
    grid = {"name": "inc", "x": "dp", "axes": {"protocol": ["te-async"], "dp": [2, 16]},
            "safety": SAFETY, "timed": False}
    done, out = sweep(cli, tmp_path, grid)
    assert done.returncode == 4, done.stderr
    assert "1 point(s) inconclusive" in done.stderr
    assert "dp=16: safety: schedule_cap (limit 50, raise with --max-schedules)" in done.stderr
    assert "dp=2:" not in done.stderr


def test_a_failed_point_outranks_an_inconclusive_one_exit_3(tmp_path, fake_bin, cli):
    grid = {"name": "inc", "x": "dp", "axes": {"protocol": ["te-async"], "dp": [2, 16, 64]},
            "safety": SAFETY, "timed": False}
    done, _ = sweep(cli, tmp_path, grid, env={"FAKE_CRASH_DP": "64"})
    assert done.returncode == 3, done.stderr
    assert "dp=16: safety: schedule_cap" in done.stderr


# ---- B2: a timed run cut short is inconclusive, not a failed run -----------------------------

def test_a_timed_run_cut_short_is_inconclusive_not_failed(tmp_path, fake_bin, cli):
    grid = {"name": "tinc", "x": "dp", "axes": {"protocol": ["te-async"], "dp": [2, 4]},
            "safety": [{"strategy": "exhaustive", "runs": 0}],
            "timed": [{"when": {"dp": 2}, "args": ["--max-steps", "10"]}]}
    done, out = sweep(cli, tmp_path, grid)
    assert done.returncode == 4, done.stderr
    rows = {r["dp"]: r for r in read_csv(out / "results.csv")}
    cut = rows["2"]
    assert cut["verdict"] == "proven_clean" and cut["timed_verdict"] == "inconclusive"
    assert cut["error"] == "" and cut["iteration_time_us"] == ""
    assert cut["cut_short"] == "timed: step_cap (limit 10, raise with --max-steps)"
    report = (out / "report.md").read_text()
    assert "## Failed runs" not in report and "no timing figures" not in report
    assert "| 2 | proven clean | – | 1 | yes | cut short | cut short |" in report


def test_a_timed_run_cut_short_after_a_hazard_is_inconclusive_with_its_cause(tmp_path, fake_bin, cli):
    # the program keeps a hazard's verdict when a cap cut the run after it, and gives no figures
    grid = {"name": "thaz", "x": "dp", "axes": {"protocol": ["te-async"], "wait": ["after-copy"], "dp": [2]},
            "safety": [{"strategy": "random", "runs": 5}],
            "timed": [{"args": ["--max-steps", "10"]}]}
    done, out = sweep(cli, tmp_path, grid)
    assert done.returncode == 4, done.stderr
    (row,) = read_csv(out / "results.csv")
    assert row["verdict"] == "hazard" and row["timed_verdict"] == "inconclusive"
    assert row["error"] == ""
    assert row["cut_short"] == "timed: step_cap (limit 10, raise with --max-steps)"


# ---- B3: the per-point deadline is a time cap: inconclusive, never an error, never cached ----

def test_the_program_gets_a_time_budget_under_the_deadline_and_stops_inconclusive(
        tmp_path, fake_bin, cli):
    grid = {"name": "slow", "axes": {"protocol": ["te-async"], "dp": [2]},
            "safety": [{"strategy": "pct", "runs": 5}], "timed": False}
    # the fake would sleep 30 s; the budget (1 s under the 3 s deadline) stops it at 2 s
    done, out = sweep(cli, tmp_path, grid, "--point-timeout", "3", env={"FAKE_SLEEP_S": "30"})
    assert done.returncode == 4, done.stderr
    (call,) = check_calls(fake_bin)
    assert call[call.index("--time-budget") + 1] == "2"
    (row,) = read_csv(out / "results.csv")
    assert row["verdict"] == "inconclusive" and row["error"] == ""
    # the sweep's deadline is what raises the budget it passes on
    assert row["cut_short"] == "safety: time_budget (limit 2 s, raise with --point-timeout)"
    # a run cut short by the clock is not the same run next time: not cached
    again, _ = sweep(cli, tmp_path, grid)
    assert again.returncode == 0, again.stderr
    assert len(check_calls(fake_bin)) == 2


def test_a_run_killed_at_the_deadline_is_inconclusive_point_timeout(tmp_path, fake_bin, cli):
    grid = {"name": "hang", "axes": {"protocol": ["te-async"], "dp": [2]},
            "safety": [{"strategy": "pct", "runs": 5}], "timed": False}
    done, out = sweep(cli, tmp_path, grid, "--point-timeout", "1",
                      env={"FAKE_SLEEP_S": "30", "FAKE_IGNORE_BUDGET": "1"})
    assert done.returncode == 4, done.stderr
    (row,) = read_csv(out / "results.csv")
    assert row["verdict"] == "inconclusive" and row["error"] == ""
    assert row["cut_short"] == "safety: point_timeout (limit 1 s, raise with --point-timeout)"
    assert "## Failed runs" not in (out / "report.md").read_text()
    assert not list((out / "cache").glob("*.json"))


# ---- C2: cost figures are labelled as the cost model's estimates, with the preset ------------

def test_cost_figures_are_labelled_modelled_with_their_preset(tmp_path, fake_bin, cli):
    grid = {"name": "cost", "x": "dp", "axes": {"protocol": ["te-async"], "dp": [2, 4]},
            "safety": [{"strategy": "exhaustive", "runs": 0}]}
    done, out = sweep(cli, tmp_path, grid)
    assert done.returncode == 0, done.stderr
    label = "modelled (cost model, preset h100-8x-nvlink-ib400)"
    report = (out / "report.md").read_text()
    assert f"are {label}: one timed run per point" in report
    assert "| modelled exposed amax latency (µs) (dp = 2 → 4) |" in report
    assert "modelled iteration (µs)" in section(report, "Every point")
    assert label in svg_text(out / "exposed_latency.svg")
    # CSV columns keep their names
    assert "exposed_amax_latency_us" in read_csv(out / "results.csv")[0]
    flat, flat_out = sweep(cli, tmp_path, grid, "cost.alpha-us=5")
    assert flat.returncode == 0, flat.stderr
    assert "modelled (cost model, preset flat)" in (flat_out / "report.md").read_text()


# ---- C5: an inconclusive point keeps its cause in results.csv and report.md ------------------

def test_inconclusive_points_keep_their_cause_in_the_csv_and_the_report(tmp_path, fake_bin, cli):
    grid = {"name": "inc", "x": "dp", "axes": {"protocol": ["te-async"], "dp": [2, 16]},
            "safety": SAFETY, "timed": False}
    done, out = sweep(cli, tmp_path, grid)
    assert done.returncode == 4, done.stderr
    rows = {r["dp"]: r for r in read_csv(out / "results.csv")}
    assert rows["16"]["cut_short"] == "safety: schedule_cap (limit 50, raise with --max-schedules)"
    assert rows["2"]["cut_short"] == ""
    cut = section((out / "report.md").read_text(), "Inconclusive points")
    assert "- dp=16: safety: schedule_cap (limit 50, raise with --max-schedules)" in cut
    assert "dp=2" not in cut


def test_an_inconclusive_report_that_names_no_cause_says_so(tmp_path, fake_bin, cli):
    # an inconclusive point always says why, in the csv and the report, even when the program's
    # report does not
    grid = {"name": "nocause", "x": "dp", "axes": {"protocol": ["te-async"], "dp": [16]},
            "safety": SAFETY, "timed": False}
    done, out = sweep(cli, tmp_path, grid, env={**os.environ, "FAKE_NO_CAUSE": "1"})
    assert done.returncode == 4, done.stderr
    (row,) = read_csv(out / "results.csv")
    assert row["verdict"] == "inconclusive"
    assert row["cut_short"] == "safety: cause not reported"
    assert "dp=16: safety: cause not reported" in section((out / "report.md").read_text(), "Inconclusive points")


def test_a_timed_run_that_hangs_gives_no_cost_figures(tmp_path, fake_bin, cli):
    # a hung run's times measure nothing: the point's cost is "hung", not the times it reached
    grid = {"name": "hang", "x": "dp", "axes": {"protocol": ["te-async"], "dp": [2]},
            "safety": [{"strategy": "exhaustive", "runs": 0}], "timed": [{"args": []}]}
    done, out = sweep(cli, tmp_path, grid, env={**os.environ, "FAKE_TIMED_HANG": "1"})
    (row,) = read_csv(out / "results.csv")
    assert row["verdict"] == "proven_clean" and row["timed_verdict"] == "hung", done.stderr
    assert row["iteration_time_us"] == "" and row["exposed_amax_latency_us"] == ""
    assert row["error"] == ""


# ---- D1: a figure range names the points it has ----------------------------------------------

def test_a_figure_range_names_its_points_when_it_has_fewer_than_the_header(
        tmp_path, fake_bin, cli):
    grid = {"name": "gap", "x": "dp", "axes": {"protocol": ["te-async"], "dp": [2, 4, 8]},
            "safety": [{"strategy": "exhaustive", "runs": 0}],
            "timed": [{"when": {"dp": [2, 8]}, "skip": True}]}
    done, out = sweep(cli, tmp_path, grid)
    assert done.returncode == 0, done.stderr
    findings = section((out / "report.md").read_text(), "Findings per design")
    assert "(dp = 2 → 8)" in findings  # the header's range ...
    assert "| 12.0 (dp=4) | 0.0 (dp=4) | 1004.0 (dp=4) | 512.0 MiB (dp=4) |" in findings
    full, full_out = sweep(cli, tmp_path, {**grid, "timed": True})
    assert full.returncode == 0, full.stderr
    # ... which a range with every point needs no note for
    assert "| 10.0 → 14.0 | 0.0 | 1002.0 → 1008.0 | 512.0 MiB |" in \
        section((full_out / "report.md").read_text(), "Findings per design")
