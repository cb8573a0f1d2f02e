"""The harness against the real amaxcheck program (skipped, with the reason, until it is built).

These check what the fake program cannot: that the contract the harness was written against is
the one the program implements, and that the verdicts match the design notes.
"""

import csv
import json
import pathlib
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.integration

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "traces" / "fr"


def test_the_hazard_kinds_are_the_programs_own_table(real_bin):
    from amaxharness import program
    kinds = program.hazard_kinds()
    names = [k.name for k in kinds]
    assert names[0] == "data_race" and "replica_divergence" in names and len(set(names)) == len(names)
    assert all(k.short and k.description for k in kinds)
    assert program.short_kind("collective_mismatch") == "mismatch"


def test_a_small_seed_sweep_gives_the_predicted_verdicts_and_cost_figures(tmp_path, real_bin,
                                                                         cli):
    out = tmp_path / "out"
    done = cli("sweep", "--out", out, "--no-progress", "protocol=te-async",
               "comm=shared,separate", "wait=before-copy,after-copy", "dp=2",
               "amax-order=rank-dependent", "modules=2", "iters=2", "strategy=pct", "runs=200",
               timeout=600)
    assert done.returncode == 0, done.stderr
    with open(out / "results.csv") as f:
        rows = {(r["comm"], r["wait"]): r for r in csv.DictReader(f)}
    assert "data_race" in rows[("separate", "after-copy")]["hazard_kinds"]
    assert "data_race" in rows[("shared", "after-copy")]["hazard_kinds"]
    assert rows[("separate", "before-copy")]["verdict"] == "no_hazard_found"  # pct: a sample
    assert rows[("shared", "before-copy")]["verdict"] == "hazard"
    # the shared communicator with a rank-dependent order hangs: its timed run measures nothing
    assert rows[("shared", "before-copy")]["timed_verdict"] == "hung"
    assert rows[("shared", "before-copy")]["iteration_time_us"] == ""
    for key in (("separate", "before-copy"), ("separate", "after-copy")):
        assert float(rows[key]["iteration_time_us"]) > 0
        assert float(rows[key]["exposed_amax_latency_us"]) >= 0
    assert int(rows[("separate", "before-copy")]["extra_comm_memory_bytes"]) > 0


def test_the_converted_flight_recorder_scenario_is_accepted_and_checked(tmp_path, real_bin, cli):
    ok = cli("import-fr", *sorted((EXAMPLES / "consistent").iterdir()), "--out", tmp_path / "a",
             "--json", timeout=300)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert json.loads(ok.stdout)["simulator"]["verdict"] == "no_hazard_found"
    bad = cli("import-fr", *sorted((EXAMPLES / "shared_comm_swapped").iterdir()), "--out",
              tmp_path / "b", "--json", timeout=300)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    sim = json.loads(bad.stdout)["simulator"]
    assert sim["verdict"] == "hazard"
    assert set(sim["hazard_kinds"]) & {"collective_mismatch", "deadlock", "unjoined_collective"}
    assert pathlib.Path(sim["trace"]).exists() and pathlib.Path(sim["perfetto"]).exists()


def test_repro_turns_a_counterexample_into_a_shrunk_trace_and_a_perfetto_file(tmp_path, real_bin,
                                                                             cli):
    trace = tmp_path / "race.jsonl"
    check = subprocess.run([str(real_bin), "check", "te-async", "--wait", "after-copy", "--dp",
                            "4", "--modules", "2", "--strategy", "pct", "--runs", "200",
                            "--trace-out", str(trace)], capture_output=True, text=True,
                           timeout=300)
    assert check.returncode == 1, check.stdout + check.stderr
    assert trace.exists()
    done = cli("repro", trace, "--out", tmp_path / "repro", "--json", timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert "data_race" in summary["hazard_kinds"]
    assert pathlib.Path(summary["shrunk"]).exists()
    assert summary["shrunk_steps"] <= summary["steps"]
    perfetto = json.loads(pathlib.Path(summary["perfetto"]).read_text())
    assert perfetto.get("traceEvents") or isinstance(perfetto, list)


def test_a_launch_on_a_machine_without_a_gpu_names_the_drivers_reason_for_every_rank(
        tmp_path, real_bin, cli):
    if shutil.which("mpirun") is None:
        pytest.skip("OpenMPI's mpirun is not installed")
    if not real_bin.with_name("amaxcheck-mpi").is_file():
        pytest.skip("amaxcheck-mpi is not built (meson found no MPI)")
    probe = subprocess.run([str(real_bin), "check", "te-sync", "--dp", "2", "--backend", "gpu"],
                           capture_output=True, text=True, timeout=300)
    if "no usable CUDA device" not in probe.stderr:
        pytest.skip("a CUDA device is usable here: the launch would really run")
    # OpenMPI keeps allocations until exit: under CI's AddressSanitizer pass LeakSanitizer
    # would report them after each rank's own report (as in tests/cuda/meson.build).
    done = cli("launch", "--gpus", "2", "--out", tmp_path / "o", "--json", "--", "te-sync",
               "--dp", "2", env={"OMPI_MCA_btl": "self,tcp", "ASAN_OPTIONS": "detect_leaks=0"},
               timeout=300)
    assert done.returncode == 3, done.stdout + done.stderr
    merged = json.loads(done.stdout)
    assert [m["rank"] for m in merged["missing"]] == [0, 1]
    for m in merged["missing"]:
        assert f"process {m['rank']} of 2 (openmpi): no usable CUDA device" in m["stderr"]
