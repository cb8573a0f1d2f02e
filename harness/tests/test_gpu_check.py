"""harness/gpu_check --dry-run and harness/gpu_pack, on a machine without a GPU.

The build folder and the NCCL folder are fakes written here: shell scripts in place of the test
programs, each recording its arguments, with a bench_gpu that answers --nccl-version as the
real one does. So these tests need neither CUDA nor NCCL, and prove that a dry run runs nothing
but the version query.
"""

import os
import pathlib
import stat
import subprocess
import tarfile
import time

import pytest

HARNESS = pathlib.Path(__file__).resolve().parents[1]
GPU_CHECK = HARNESS / "gpu_check"
GPU_PACK = HARNESS / "gpu_pack"
PROGRAMS = ("tests/cuda/cuda_tests", "tests/cuda/cuda_host_tests", "tests/cuda/bench_gpu",
            "tests/cuda/mpi_bootstrap_test", "sim/amaxcheck", "sim/amaxcheck-mpi")


def fake_build(tmp_path, loaded_version="2.30.7", leave_out=()):
    """A build folder whose programs only log their arguments to calls.log."""
    build = tmp_path / "build"
    calls = tmp_path / "calls.log"
    for name in PROGRAMS:
        if name in leave_out:
            continue
        path = build / name
        path.parent.mkdir(parents=True, exist_ok=True)
        answer = ""
        if name.endswith("bench_gpu"):
            answer = (f'[ "$1" = --nccl-version ] && '
                      f'echo "NCCL {loaded_version} (runtime library), 2.28.9 (headers)"\n')
        path.write_text(f'#!/bin/sh\necho "{name} $*" >>"{calls}"\n{answer}exit 0\n')
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return build, calls


def fake_nccl(tmp_path, version="2.30.7"):
    nccl = tmp_path / f"nccl-{version}"
    (nccl / "lib").mkdir(parents=True)
    (nccl / "lib" / f"libnccl.so.{version}").write_bytes(b"not a library")
    (nccl / "lib" / "libnccl.so.2").symlink_to(f"libnccl.so.{version}")
    (nccl / "BUILD_INFO").write_text(f"nccl_version: {version}\nsource_tag: v{version}-1\n"
                                     "source_commit: 0123abcd\ngencode: -gencode=arch=compute_90,code=sm_90\n")
    return nccl


def dry_run(tmp_path, build, *extra):
    report = tmp_path / "report.md"
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    done = subprocess.run(["bash", str(GPU_CHECK), "--dry-run", "--build", str(build),
                           "--report", str(report), *map(str, extra)],
                          capture_output=True, text=True, timeout=120, env=env)
    return done, report


def test_a_dry_run_with_nccl_2_30_lists_every_several_ranks_per_gpu_step_and_runs_nothing(tmp_path):
    build, calls = fake_build(tmp_path)
    done, report = dry_run(tmp_path, build, "--nccl", fake_nccl(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    out = report.read_text()
    assert "DRY RUN: nothing below ran on a GPU" in out
    assert "loaded NCCL 2.30.7: the one --nccl names" in out
    assert "source_commit=0123abcd" in out
    # The probe tries every NCCL_MAX_CTAS candidate with 8 members, largest first.
    probes = [line for line in out.splitlines() if line.startswith("- NCCL_MAX_CTAS=")]
    assert all("--ranks 8 --probe" in line for line in probes)
    assert [line.split(":")[0] for line in probes] == [
        "- NCCL_MAX_CTAS=unset", "- NCCL_MAX_CTAS=8", "- NCCL_MAX_CTAS=4", "- NCCL_MAX_CTAS=2"]
    assert "NCCL_MAX_CTAS=4 NCCL_MIN_CTAS=1" in probes[2]
    multi = out[out.index("Several ranks per GPU: GPU tests"):]
    assert "NCCL_MULTI_RANK_GPU_ENABLE=1" in multi and "--gtest_filter=Gpu.\\*" in multi
    for words in ("--comm separate --wait after-copy", "--comm separate --wait before-copy"):
        for dp in ("2", "4"):
            assert any(words in line and f"--dp {dp}" in line for line in multi.splitlines()), (words, dp)
    assert multi.count("mismatch, shared communicator, rank-dependent order") == 2
    assert "member-never-joins.json" in multi and "no process left" in multi
    assert "bench_gpu --ranks 2" in multi and "bench_gpu --ranks 8" in multi
    assert "amaxcheck-mpi check te-async --wait after-copy --dp 2 --backend gpu" in multi
    # Before the section, the environment switch is in no step: the plain steps run as before.
    plain = [line for line in out[:out.index("## Several ranks per GPU")].splitlines() if "would run" in line]
    assert len(plain) == 13 and not any("NCCL_MULTI_RANK_GPU_ENABLE" in line for line in plain)
    assert calls.read_text().split("\n")[:-1] == ["tests/cuda/bench_gpu --nccl-version"]


def test_a_dry_run_takes_the_nccl_tarball_as_the_build_script_packs_it(tmp_path):
    build, _ = fake_build(tmp_path)
    nccl = fake_nccl(tmp_path)
    tarball = tmp_path / "nccl-2.30.7-sm90.tar.xz"
    with tarfile.open(tarball, "w:xz") as tar:
        tar.add(nccl, arcname=nccl.name)
    done, report = dry_run(tmp_path, build, "--nccl", tarball)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "loaded NCCL 2.30.7: the one --nccl names" in report.read_text()


def test_the_library_loaded_must_be_the_one_nccl_names(tmp_path):
    build, _ = fake_build(tmp_path, loaded_version="2.28.3")
    done, report = dry_run(tmp_path, build, "--nccl", fake_nccl(tmp_path))
    assert done.returncode == 2, done.stdout
    out = report.read_text()
    assert "FAILED: loaded NCCL 2.28.3, but --nccl" in out
    assert "Several ranks per GPU" not in out


def test_with_nccl_before_2_30_the_section_is_skipped_and_says_why(tmp_path):
    build, _ = fake_build(tmp_path, loaded_version="2.28.3")
    done, report = dry_run(tmp_path, build)
    assert done.returncode == 0, done.stdout
    out = report.read_text()
    assert "NCCL 2.28.3 < 2.30: several ranks of one communicator cannot share a GPU" in out
    assert "NCCL_MULTI_RANK_GPU_ENABLE" not in out


def test_a_dry_run_names_every_missing_program_and_exits_2(tmp_path):
    build, _ = fake_build(tmp_path, leave_out=("sim/amaxcheck",))
    done, report = dry_run(tmp_path, build, "--nccl", fake_nccl(tmp_path))
    assert done.returncode == 2
    assert "missing: " + str(build / "sim/amaxcheck") in report.read_text()


@pytest.mark.parametrize("args, message", [
    (["--nccl", "/nonexistent/nccl"], "no such folder or file"),
    (["--max-ctas", "4,lots"], "--max-ctas needs"),
    (["--deadline-s", "soon"], "--deadline-s needs"),
])
def test_bad_arguments_exit_2_naming_them(tmp_path, args, message):
    build, _ = fake_build(tmp_path)
    done, _ = dry_run(tmp_path, build, *args)
    assert done.returncode == 2
    assert message in done.stderr


def test_gpu_pack_carries_the_programs_and_the_nccl_tarball_and_says_whether_they_fit(tmp_path):
    build, _ = fake_build(tmp_path)
    (build / "tests/cuda/cuda_tests.p").mkdir()  # object files stay behind
    (build / "tests/cuda/cuda_tests.p/x.o").write_bytes(b"0" * 4096)
    tarball = tmp_path / "nccl-2.30.7-sm90.tar.xz"
    tarball.write_bytes(b"x" * 1000)
    out = tmp_path / "carry"
    # Shell scripts cannot be stripped: a stand-in strip that copies does for this test.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "strip").write_text('#!/bin/sh\nwhile [ "$1" != -o ]; do shift; done\ncp "$3" "$2"\n')
    (bin_dir / "strip").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(GPU_PACK), "--build", str(build), "--out", str(out),
                           "--nccl", str(tarball)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    carried = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert carried == sorted(["SIZES", "nccl-2.30.7-sm90.tar.xz"] + [f"build/{p}" for p in PROGRAMS])
    assert "gpu_pack: fits" in done.stdout
    assert "of the 64 MiB limit" in (out / "SIZES").read_text()
    too_small = subprocess.run(["bash", str(GPU_PACK), "--build", str(build), "--out", str(out),
                                "--limit-mib", "0"], capture_output=True, text=True, timeout=120, env=env)
    assert too_small.returncode == 1
    assert "does NOT fit" in too_small.stderr


def guarded(tmp_path, program_body):
    """Runs gpu_check_lib.sh's guarded_step on a fake amaxcheck; returns (report text, status)."""
    fake = tmp_path / "amaxcheck"
    fake.write_text("#!/bin/bash\n" + program_body)
    fake.chmod(0o755)
    script = f"""
        log={tmp_path}/log; full_log={tmp_path}/full; status=0; dry_run=0; deadline=$((SECONDS + 100))
        step_env=(); amaxcheck_bin={fake}; : >"$log"
        source {HARNESS}/gpu_check_lib.sh
        guarded_step "mismatch" 1 20 '^  collective_mismatch: ' check x >/dev/null
        echo "status=$status"
    """
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    return (tmp_path / "log").read_text(), done.stdout.strip()


def test_a_guarded_step_passes_when_the_run_ends_as_expected_and_leaves_nothing(tmp_path):
    report, status = guarded(tmp_path, "echo '  collective_mismatch: op mismatch'; exit 1\n")
    assert status == "status=0", report
    assert "exit 1 (expected 1)" in report and "passed" in report
    assert "processes left behind: none" in report


def test_a_guarded_step_names_and_ends_a_process_left_behind(tmp_path):
    report, status = guarded(tmp_path, "sleep 60 & echo '  collective_mismatch: op mismatch'; exit 1\n")
    assert status == "status=1", report
    assert "FAILED" in report
    left = report.split("processes left behind: ")[1].split("\n")[0]
    assert left.endswith(" sleep"), report
    pid = int(left.split()[0])
    for _ in range(50):  # SIGKILL lands asynchronously
        try:
            if "zombie" in pathlib.Path(f"/proc/{pid}/status").read_text().lower():
                break
        except FileNotFoundError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"process {pid} left behind is still running")


def test_a_guarded_step_fails_when_the_hazard_is_not_named(tmp_path):
    report, status = guarded(tmp_path, "echo 'verdict: no hazard found'; exit 1\n")
    assert status == "status=1" and "FAILED" in report
