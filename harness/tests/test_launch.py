"""`launch`: the mpirun/srun command line, and the per-rank reports merged into one."""

import json
import pathlib
import shutil

import pytest

from amaxharness.errors import InputError
from amaxharness.launch import collect, command_line

BIN = pathlib.Path("/opt/amaxcheck")
OUT = pathlib.Path("/tmp/reports")


def build(args=("te-async", "--dp", "4"), gpus=4, hosts=None, environ=None, is_root=False,
          **kw):
    return command_line.build(BIN, gpus, hosts, list(args), OUT, environ=environ or {},
                              is_root=is_root, **kw)


def test_mpirun_as_a_user_runs_one_process_per_gpu_with_per_rank_output():
    plan = build(environ={"LD_LIBRARY_PATH": "/nccl/lib", "NCCL_DEBUG": "INFO", "HOME": "/h"})
    assert plan.mode == "mpirun"
    assert plan.argv == ["mpirun", "-np", "4", "--mca", "orte_abort_on_non_zero_status", "0",
                         "--output-filename", "/tmp/reports", "-x", "LD_LIBRARY_PATH",
                         "-x", "NCCL_DEBUG", "/opt/amaxcheck-mpi", "check", "te-async", "--dp",
                         "4", "--backend", "gpu", "--json"]


def test_mpirun_as_root_allows_root_and_oversubscription():
    argv = build(is_root=True).argv
    assert argv[3:5] == ["--allow-run-as-root", "--oversubscribe"]


def test_hosts_get_slots_split_evenly_unless_given():
    assert "--host" in (argv := build(gpus=8, hosts="a,b").argv)
    assert argv[argv.index("--host") + 1] == "a:4,b:4"
    argv = build(gpus=6, hosts="a:2,b:4").argv
    assert argv[argv.index("--host") + 1] == "a:2,b:4"
    with pytest.raises(InputError, match="2 slot"):
        build(gpus=6, hosts="a:1,b:1")
    with pytest.raises(InputError, match="bad entry"):
        build(hosts="a:x")


def test_inside_a_slurm_allocation_srun_is_used():
    plan = build(environ={"SLURM_JOB_ID": "42"}, hosts="n1,n2", is_root=True)
    assert plan.mode == "srun"
    assert plan.argv[:6] == ["srun", "--ntasks=4", "--gpus-per-task=1", "--kill-on-bad-exit=0",
                             "--output=/tmp/reports/rank-%t.out",
                             "--error=/tmp/reports/rank-%t.err"]
    assert "--nodelist=n1,n2" in plan.argv
    assert "--allow-run-as-root" not in plan.argv
    assert "/opt/amaxcheck-mpi" in plan.argv and "/opt/amaxcheck" not in plan.argv


def test_the_mpi_program_must_be_built_next_to_amaxcheck(tmp_path):
    plain = tmp_path / "amaxcheck"
    plain.write_text("")
    with pytest.raises(InputError, match=r"amaxcheck-mpi is not built.*finds MPI"):
        command_line.require_mpi_program(plain)
    (tmp_path / "amaxcheck-mpi").write_text("")
    (tmp_path / "amaxcheck-mpi").chmod(0o755)
    assert command_line.require_mpi_program(plain) == tmp_path / "amaxcheck-mpi"


def test_a_launch_without_amaxcheck_mpi_stops_before_running_anything(tmp_path, fake_bin, cli):
    fake_bin.path.with_name("amaxcheck-mpi").unlink()
    done = cli("launch", "--gpus", "2", "--out", tmp_path / "o", "--", "te-async", "--dp", "2")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "amaxcheck-mpi is not built" in done.stderr
    assert fake_bin.calls() == [] and not (tmp_path / "o").exists()


def test_check_arguments_keep_an_explicit_check_backend_and_json():
    argv = build(args=["--", "check", "s.json", "--backend", "gpu", "--json"]).argv
    assert argv[-6:] == ["/opt/amaxcheck-mpi", "check", "s.json", "--backend", "gpu", "--json"]
    with pytest.raises(InputError, match="after --"):
        build(args=[])


def test_dry_run_prints_the_command_and_runs_nothing(tmp_path, fake_bin, cli):
    done = cli("launch", "--gpus", "2", "--dry-run", "--out", tmp_path, "--", "te-async",
               "--dp", "2")
    assert done.returncode == 0
    assert done.stdout.startswith("mpirun -np 2 ")
    assert done.stdout.strip().endswith("amaxcheck-mpi check te-async --dp 2 --backend gpu --json")
    assert "launch: mpirun" in done.stderr
    assert fake_bin.calls() == []


def write_rank(folder, rank, verdict="no_hazard_found", kinds=(), process=None, processes=None, complete=True):
    d = folder / "1" / f"rank.{rank}"
    d.mkdir(parents=True)
    hazards = [{"kind": k, "summary": f"{k} on amax", "participants": []} for k in kinds]
    report = {"verdict": verdict, "hazards": hazards, "runs": 1, "complete": complete,
              "strategy": "random", "seed": 1, "trace": None}
    if process is not None:
        report.update(process=process, processes=processes)
    (d / "stdout").write_text("NCCL INFO init\n" + json.dumps(report) + "\n")
    (d / "stderr").write_text("rank log\n")


def test_reports_merge_into_one_verdict_with_the_ranks_that_saw_each_hazard(tmp_path):
    write_rank(tmp_path, 0, "hazard", ["data_race"])
    write_rank(tmp_path, 1, "hazard", ["data_race"])
    write_rank(tmp_path, 2)
    merged = collect.merge(tmp_path, 4)
    assert merged["verdict"] == "hazard"
    assert merged["hazards"][0]["reported_by"] == [0, 1]
    assert merged["missing"] == [{"rank": 3, "why": "no output file"}]
    assert merged["complete"] is False


def test_a_report_that_names_another_process_is_not_merged_as_this_ranks(tmp_path):
    write_rank(tmp_path, 0, process=0, processes=2)
    write_rank(tmp_path, 1, "hazard", ["data_race"], process=0, processes=2)
    merged = collect.merge(tmp_path, 2)
    assert sorted(merged["reports"]) == ["0"]
    assert merged["missing"][0]["rank"] == 1
    assert "process 0 of 2, not 1 of 2" in merged["missing"][0]["why"]
    assert merged["verdict"] == "incomplete"


# (verdict, hazard kinds, complete) of each rank that left a report; ranks beyond them left none.
MERGED_VERDICTS = [
    pytest.param([("no_hazard_found", (), True)] * 2, "no_hazard_found", True, id="every-rank-clean"),
    pytest.param([("no_hazard_found", (), True), ("inconclusive", (), False)], "inconclusive", False,
                 id="one-rank-inconclusive"),
    pytest.param([("no_hazard_found", (), True), ("hazard", (), True)], "hazard", True,
                 id="one-rank-hazard-without-entries"),
    pytest.param([("hazard", ("deadlock",), True)], "hazard", False, id="a-hazard-outranks-a-missing-rank"),
    pytest.param([("inconclusive", (), False)], "incomplete", False, id="a-missing-rank-outranks-inconclusive"),
    pytest.param([("no_hazard_found", (), True), ("no_hazard_found", (), False)], "no_hazard_found", False,
                 id="one-rank-incomplete"),
]


@pytest.mark.parametrize("ranks, verdict, complete", MERGED_VERDICTS)
def test_the_merged_verdict_is_the_worst_rank_and_never_cleaner_than_one(tmp_path, ranks, verdict, complete):
    for rank, (rank_verdict, kinds, rank_complete) in enumerate(ranks):
        write_rank(tmp_path, rank, rank_verdict, kinds, complete=rank_complete)
    merged = collect.merge(tmp_path, 2)
    assert merged["verdict"] == verdict
    assert merged["complete"] is complete
    assert [m["rank"] for m in merged["missing"]] == list(range(len(ranks), 2))


def test_srun_report_files_are_found_too(tmp_path):
    (tmp_path / "rank-0.out").write_text(json.dumps(
        {"verdict": "no_hazard_found", "hazards": [], "runs": 3, "complete": True}))
    (tmp_path / "rank-1.out").write_text("Segmentation fault\n")
    (tmp_path / "rank-1.err").write_text("cuda error: no device\n")
    merged = collect.merge(tmp_path, 2)
    assert merged["reports"]["0"]["runs"] == 3
    assert merged["missing"][0]["rank"] == 1
    assert "cuda error: no device" in merged["missing"][0]["stderr"]


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="OpenMPI's mpirun is not installed")
def test_a_real_mpirun_launch_collects_every_ranks_report(tmp_path, fake_bin, cli):
    done = cli("launch", "--gpus", "2", "--out", tmp_path / "o", "--json", "--", "te-async",
               "--dp", "2", env={"FAKE_GPU_HAZARD_RANK": "1"}, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    merged = json.loads(done.stdout)
    assert merged["verdict"] == "hazard" and merged["missing"] == []
    assert sorted(merged["reports"]) == ["0", "1"]
    assert merged["hazards"][0]["reported_by"] == [1]
    assert (tmp_path / "o" / "launch-report.json").exists()
