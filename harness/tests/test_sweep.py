"""The sweep end to end against the fake program: outputs, cache, failures, interruption."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

from harness_testing import CLI

GRID = {"name": "t", "title": "Test sweep", "x": "dp", "design": ["comm", "wait"],
        "axes": {"protocol": ["te-async"], "comm": ["shared", "separate"],
                 "wait": ["before-copy", "after-copy"], "dp": [2, 8, 64]},
        "fixed": {"amax-order": "rank-dependent"},
        "safety": [{"when": {"dp": {"<=": 8}}, "strategy": "exhaustive", "runs": 100},
                   {"strategy": "pct", "runs": 20}]}


def write_grid(tmp_path, grid=None):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(grid or GRID))
    return path


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def check_calls(fake):
    return [c for c in fake.calls() if c[0] == "check"]


def test_sweep_writes_csv_report_and_plots_with_each_points_verdict(tmp_path, fake_bin, cli):
    out = tmp_path / "out"
    done = cli("sweep", "--grid", write_grid(tmp_path), "--out", out, "--jobs", "2")
    assert done.returncode == 0, done.stderr
    for name in ("results.csv", "report.md", "exposed_latency.png", "exposed_latency.svg",
                 "safety_map.png", "safety_map.svg"):
        assert (out / name).stat().st_size > 0, name
    rows = read_csv(out / "results.csv")
    assert len(rows) == 12
    by = {(r["comm"], r["wait"], r["dp"]): r for r in rows}
    assert by[("separate", "before-copy", "8")]["verdict"] == "proven_clean"
    assert by[("separate", "before-copy", "64")]["verdict"] == "no_hazard_found"
    assert by[("separate", "before-copy", "8")]["complete"] == "true"
    assert by[("separate", "before-copy", "64")]["complete"] == "false"
    assert by[("separate", "after-copy", "2")]["hazard_kinds"] == "data_race"
    assert by[("shared", "after-copy", "2")]["hazard_kinds"] == "data_race;ordering_hazard"
    assert by[("shared", "before-copy", "64")]["strategy"] == "pct"
    assert float(by[("shared", "before-copy", "64")]["exposed_amax_latency_us"]) == 8 + 12 + 20
    assert by[("separate", "before-copy", "2")]["extra_comm_memory_bytes"] == str(512 * 2 ** 20)
    report = (out / "report.md").read_text()
    assert "## Findings per design" in report
    assert "comm=separate, wait=before-copy | proven clean at dp=2–8; no hazard found " \
           "(sampled) at dp=64" in report
    assert "comm=shared, wait=after-copy | **hazard** (data_race, ordering_hazard) at dp=2–64" \
        in report
    assert "![exposed_latency.svg](exposed_latency.svg)" in report
    assert "comm=separate, wait=before-copy: proven clean at dp=2–8" in done.stdout
    # the progress bar reached the total on stderr
    assert "24/24" in done.stderr


def test_a_rerun_is_served_from_the_cache_with_identical_outputs(tmp_path, fake_bin, cli):
    out, grid = tmp_path / "out", write_grid(tmp_path)
    assert cli("sweep", "--grid", grid, "--out", out).returncode == 0
    first = {n: (out / n).read_bytes() for n in ("results.csv", "report.md", "safety_map.svg")}
    calls = len(check_calls(fake_bin))
    assert calls == 24
    again = cli("sweep", "--grid", grid, "--out", out)
    assert again.returncode == 0
    assert len(check_calls(fake_bin)) == calls
    assert "24 cached, 0 to run" in again.stderr
    assert {n: (out / n).read_bytes() for n in first} == first


def test_new_points_run_alone_and_fresh_reruns_everything(tmp_path, fake_bin, cli):
    out, grid = tmp_path / "out", write_grid(tmp_path)
    assert cli("sweep", "--grid", grid, "--out", out).returncode == 0
    before = len(check_calls(fake_bin))
    wider = cli("sweep", "--grid", grid, "--out", out, "dp=2,8,64,128")
    assert wider.returncode == 0
    new = check_calls(fake_bin)[before:]
    assert len(new) == 8 and all(c[c.index("--dp") + 1] == "128" for c in new)
    assert len(read_csv(out / "results.csv")) == 16
    fresh = cli("sweep", "--grid", grid, "--out", out, "--fresh")
    assert fresh.returncode == 0 and len(check_calls(fake_bin)) == before + 8 + 24


def test_a_crashing_point_is_reported_and_retried_not_cached(tmp_path, fake_bin, cli):
    out, grid = tmp_path / "out", write_grid(tmp_path)
    done = cli("sweep", "--grid", grid, "--out", out, env={"FAKE_CRASH_DP": "64"})
    assert done.returncode == 3
    rows = read_csv(out / "results.csv")
    crashed = [r for r in rows if r["dp"] == "64"]
    assert crashed and all(r["verdict"] == "error" and "exit 3" in r["error"] for r in crashed)
    assert "## Failed runs" in (out / "report.md").read_text()
    before = len(check_calls(fake_bin))
    healed = cli("sweep", "--grid", grid, "--out", out)
    assert healed.returncode == 0
    assert len(check_calls(fake_bin)) - before == 8  # only the dp=64 runs again


def test_bad_input_from_the_program_fails_the_sweep_with_exit_2(tmp_path, fake_bin, cli):
    out = tmp_path / "out"
    done = cli("sweep", "--out", out, "protocol=te-async", "bogus=1", "timed=off")
    assert done.returncode == 2
    assert "unknown option --bogus" in (out / "report.md").read_text()


def test_a_bad_grid_file_exits_2_before_running_anything(tmp_path, fake_bin, cli):
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps({"axes": {"dp": [2]}}))
    done = cli("sweep", "--grid", grid, "--out", tmp_path / "o")
    assert done.returncode == 2 and "no protocol" in done.stderr
    assert fake_bin.calls() == []


def test_a_missing_program_is_a_clear_error(tmp_path, cli):
    done = cli("sweep", "protocol=x", "--out", tmp_path / "o",
               env={"AMAXCHECK_BIN": str(tmp_path / "nope")})
    assert done.returncode == 2 and "not an executable file" in done.stderr


def test_an_interrupted_sweep_keeps_finished_runs_and_resumes(tmp_path, fake_bin):
    out, grid = tmp_path / "out", write_grid(tmp_path)
    env = {**os.environ, "FAKE_SLEEP_S": "0.3"}
    # SIGINT restored to its default in the child: a test run started in the background (`cmd &`
    # in a script) inherits it ignored, and the sweep would never see the interrupt.
    proc = subprocess.Popen([sys.executable, str(CLI), "sweep", "--grid", str(grid), "--out",
                             str(out), "--jobs", "1", "timed=off"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        cached = list((out / "cache").glob("*.json")) if (out / "cache").exists() else []
        if len(cached) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Rerun the same command to continue" in err
    finished = len(list((out / "cache").glob("*.json")))
    assert 3 <= finished < 12
    assert not (out / "results.csv").exists()
    before = len(check_calls(fake_bin))
    done = subprocess.run([sys.executable, str(CLI), "sweep", "--grid", str(grid), "--out",
                           str(out), "timed=off"], env=os.environ, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"{finished} cached, {12 - finished} to run" in done.stderr
    assert len(check_calls(fake_bin)) - before == 12 - finished
