"""The Flight Recorder import's wrong answers and failures of issue 17, one test (or more) each:
the numbers in the test names are the issue's items."""

import json
import pickle
import subprocess
import sys

import pytest

import fr_dumps as fr
from harness_testing import CLI, HARNESS

sys.path.insert(0, str(HARNESS.parent / "bench" / "fr"))
import make_dumps  # noqa: E402  (the benchmark's generator, bench/fr/make_dumps.py)


def import_fr(cli, tmp_path, paths, *extra):
    return cli("import-fr", *paths, "--out", tmp_path / "out", "--no-simulate", *extra)


def report_json(cli, tmp_path, paths, *extra):
    done = import_fr(cli, tmp_path, paths, "--json", *extra)
    assert done.stdout, done.stderr
    return done, json.loads(done.stdout)


def run_measuring_peak_memory(cmd, timeout):
    """Runs cmd under a child Python that reports the largest peak resident set of any process
    it waited for (the CLI and the amaxcheck it starts), so earlier tests do not count."""
    probe = ("import resource, subprocess, sys\n"
             "done = subprocess.run(sys.argv[1:])\n"
             "sys.stderr.write(f'\\npeak_kib={resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}')\n"
             "sys.exit(done.returncode)\n")
    done = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True,
                          timeout=timeout)
    peak_kib = int(done.stderr.rsplit("peak_kib=", 1)[1])
    return done, peak_kib * 1024


def group(doc, name):
    return next(g for g in doc["groups"] if g["name"] == name)


def renumber(records):
    for i, r in enumerate(records):
        r["record_id"] = i
        r["time_created_ns"] = 1_000_000 * (i + 1)
    return records


def write_ranks(tmp_path, per_rank, ranks=None, fmt="pickle", **kwargs):
    ranks = ranks if ranks is not None else tuple(range(len(per_rank)))
    write = fr.write_pickle if fmt == "pickle" else fr.write_json
    return [write(tmp_path / f"nccl_trace_rank_{r}", fr.dump(recs, ranks=ranks, **kwargs))
            for r, recs in per_rank.items()]


# ---- 1: ring buffers wrapped at different record_ids -----------------------------------------

def with_metrics(records, every=1):
    """Rank-local extra collectives (metrics on group 2) after every `every`-th record: this
    rank's record_ids run ahead of the others'."""
    out = []
    seq = 0
    for i, r in enumerate(records):
        out.append(r)
        if i % every == 0:
            seq += 1
            out.append(fr.entry(0, "2", seq, size=4, desc="metrics"))
    return renumber(out)


def test_1_buffers_wrapped_at_different_record_ids_are_aligned_per_group(tmp_path, cli):
    # rank 0 issues a metrics collective after each record: its record_ids run twice as fast.
    # Both keep their last 12 records; a record_id cutoff would drop all of rank 1's.
    rank0 = with_metrics(fr.training(iterations=10))[-12:]
    rank1 = renumber(fr.training(iterations=10))[-12:]
    groups = {"0": ("default_pg", [0, 1]), "1": ("amax_reduction", [0, 1]),
              "2": ("metrics", [0])}
    done, doc = report_json(cli, tmp_path, write_ranks(tmp_path, {0: rank0, 1: rank1},
                                                       groups=groups))
    assert done.returncode == 0, done.stdout
    assert doc["verdict"] == "consistent"
    assert rank0[0]["record_id"] > rank1[-1]["record_id"] - 6  # the windows are far apart
    assert group(doc, "0")["matched"] >= 3 and group(doc, "0")["divergent"] == 0


def test_1_a_divergence_in_the_overlap_is_still_found(tmp_path, cli):
    rank0 = with_metrics(fr.training(iterations=10))[-12:]
    rank1 = renumber(fr.training(iterations=10))[-12:]
    rank1[-1]["input_sizes"] = [[7]]
    groups = {"0": ("default_pg", [0, 1]), "1": ("amax_reduction", [0, 1]),
              "2": ("metrics", [0])}
    done, doc = report_json(cli, tmp_path, write_ranks(tmp_path, {0: rank0, 1: rank1},
                                                       groups=groups))
    assert done.returncode == 1
    assert doc["root_cause"]["kinds"] == ["size_mismatch"]
    assert doc["root_cause"]["collective_seq_id"] == 20


def test_1_a_wrapped_buffer_without_a_record_of_a_group_is_undecidable(tmp_path, cli):
    # rank 1's buffer wrapped and kept only group 0's records: where it is in group 1 is
    # unknown, so group 1 is undecidable, not a rank that never joined.
    rank0 = renumber(fr.training(iterations=3))
    rank1 = [r for r in renumber(fr.training(iterations=3)) if r["process_group"][0] == "0"][2:]
    done, doc = report_json(cli, tmp_path, write_ranks(tmp_path, {0: rank0, 1: rank1}))
    assert done.returncode == 4, done.stdout
    assert doc["verdict"] == "inconclusive"
    assert group(doc, "1")["undecidable"] == {
        "1": "its wrapped ring buffer holds no record of this group"}
    assert group(doc, "1")["first_divergence"] is None


def test_1_an_unwrapped_buffer_without_a_record_of_a_group_never_joined(tmp_path, cli):
    rank0 = renumber(fr.training(iterations=3))
    rank1 = renumber([r for r in fr.training(iterations=3) if r["process_group"][0] == "0"])
    done, doc = report_json(cli, tmp_path, write_ranks(tmp_path, {0: rank0, 1: rank1}))
    assert done.returncode == 1
    assert group(doc, "1")["first_divergence"]["kinds"] == ["not_joined"]


# ---- 2: a rank with no dump ------------------------------------------------------------------

def test_2_a_rank_without_a_dump_is_named_and_never_consistent(tmp_path, cli):
    ranks = (0, 1, 2, 3)
    paths = write_ranks(tmp_path, {r: fr.training() for r in (0, 1, 2)}, ranks=ranks)
    done = import_fr(cli, tmp_path, paths)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "; consistent" not in done.stdout and "verdict: consistent" not in done.stdout
    assert "no dump for rank(s) 3" in done.stdout
    assert "undecidable for rank(s) 3 (no dump)" in done.stdout
    assert "verdict: INCONCLUSIVE" in done.stdout


def test_2_a_gap_in_the_dumped_ranks_is_named_without_pg_config(tmp_path, cli):
    paths = [fr.write_pickle(tmp_path / f"nccl_trace_rank_{r}",
                             {**fr.dump(fr.training()), "pg_config": {}}) for r in (0, 2)]
    done, doc = report_json(cli, tmp_path, paths)
    assert done.returncode == 4
    assert doc["missing_ranks"] == [1]


def test_2_a_divergence_still_wins_over_a_missing_dump(tmp_path, cli):
    per_rank = {0: fr.training(), 1: fr.training(), 2: fr.training(amax_size=9)}
    done, doc = report_json(cli, tmp_path, write_ranks(tmp_path, per_rank, ranks=(0, 1, 2, 3)))
    assert done.returncode == 1
    assert doc["missing_ranks"] == [3] and doc["verdict"] == "divergent"


# ---- 3: the scenario is windowed -------------------------------------------------------------

def test_3_the_scenario_keeps_the_last_k_collectives_before_the_divergence(tmp_path, cli,
                                                                             fake_bin):
    rank0 = fr.training(iterations=200)
    rank0[-1]["state"] = "started"
    rank1 = fr.training(iterations=200)[:-1]  # never issues the last bucket (group 0 #400)
    paths = fr.write_pair(tmp_path, rank0, rank1)
    done = cli("import-fr", *paths, "--out", tmp_path / "out", "--window", "5", "--json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert doc["scenario_window"] == {"0": [396, 400], "1": [196, 200]}
    scenario = json.loads((tmp_path / "out" / "scenario.json").read_text())
    programs = [r["threads"][0]["program"] for r in scenario["ranks"]]
    assert [len(p) for p in programs] == [10, 9]
    assert programs[0][-1]["name"] == "pg 0 #400 all_reduce"
    assert doc["simulator"]["trace"] and doc["simulator"]["perfetto"]


def test_3_the_synthetic_hung_job_scenario_stays_small(tmp_path, cli):
    paths = make_dumps.write(tmp_path / "dumps", ranks=64, records=200)
    done, doc = report_json(cli, tmp_path, paths)
    assert done.returncode == 1
    scenario = (tmp_path / "out" / "scenario.json")
    ops = sum(len(r["threads"][0]["program"]) for r in json.loads(scenario.read_text())["ranks"])
    assert ops <= 64 * 3 * 8  # three groups per rank, the default window of 8
    assert scenario.stat().st_size < 8 << 20


# ---- 4: a huge collective_seq_id -------------------------------------------------------------

def test_4_a_collective_seq_id_of_10_to_the_12_is_one_seq_not_a_loop(tmp_path, cli):
    rank1 = fr.training()
    rank1.append(fr.entry(9, "0", 10**12))
    done, doc = report_json(cli, tmp_path, fr.write_pair(tmp_path, fr.training(), rank1))
    assert done.returncode == 1
    assert group(doc, "0")["first_divergence"]["collective_seq_id"] == 10**12
    assert group(doc, "0")["window"] == [1, 10**12]


def test_4_a_seq_beyond_64_bits_is_refused(tmp_path, cli):
    rank1 = fr.training()
    rank1[0]["collective_seq_id"] = 1 << 64
    done = import_fr(cli, tmp_path, fr.write_pair(tmp_path, fr.training(), rank1))
    assert done.returncode == 2
    assert "collective_seq_id: expected an integer in 0..2^63-1" in done.stderr


# ---- 5: entries sharing one long frame list --------------------------------------------------

def test_5_entries_that_share_one_20k_frame_list_are_read_in_bounded_memory(tmp_path):
    frames = [{"name": f"f{i}", "filename": "deep.py", "line": i} for i in range(20000)]
    entries = [fr.entry(i, "0", i + 1, frames=None) for i in range(2000)]
    for e in entries:
        e["frames"] = frames  # one list object: the pickle's memo stores it once
    paths = [fr.write_pickle(tmp_path / f"nccl_trace_rank_{r}", fr.dump(entries))
             for r in (0, 1)]
    assert paths[0].stat().st_size < 3 << 20

    # Peak resident memory, not an address-space cap: a sanitizer's shadow reserves terabytes of
    # address space, so RLIMIT_AS would fail every sanitized run. Reading each entry's 20k frames
    # would hold 40M frames (several GB); shared lists are read once.
    done, peak_bytes = run_measuring_peak_memory(
        [sys.executable, str(CLI), "import-fr", *map(str, paths), "--out", str(tmp_path / "out"),
         "--no-simulate"], timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert peak_bytes < (1 << 30), f"peak resident memory {peak_bytes >> 20} MiB"
    assert "verdict: consistent" in done.stdout


def test_5_a_record_keeps_at_most_64_frames_and_counts_the_rest(tmp_path, cli):
    frames = [{"name": f"f{i}", "filename": "deep.py", "line": i} for i in range(100)]
    rank1 = fr.training(amax_size=9)
    rank1[0]["frames"] = frames
    done, doc = report_json(cli, tmp_path, fr.write_pair(tmp_path, fr.training(), rank1))
    record = doc["root_cause"]["records"]["1"][0]
    assert len(record["frames"]) == 64 and record["frames_dropped"] == 36


# ---- 6: a 50 MB string -----------------------------------------------------------------------

def test_6_a_huge_string_is_cut_in_the_report_and_the_scenario(tmp_path, cli):
    huge = "x" * (8 << 20)
    rank1 = fr.training(amax_size=9)
    rank1[0]["frames"] = [{"name": huge, "filename": huge, "line": 1}]
    rank1[0]["profiling_name"] = "nccl:" + huge
    done = import_fr(cli, tmp_path, fr.write_pair(tmp_path, fr.training(), rank1))
    assert done.returncode == 1
    assert len(done.stdout) < 50_000 and len(done.stderr) < 10_000
    assert "(8388613 chars, " in done.stdout  # the cut string says how long it was
    assert (tmp_path / "out" / "scenario.json").stat().st_size < 100_000


def test_6_two_long_names_that_differ_only_at_the_end_stay_different(tmp_path, cli):
    rank1 = fr.training()
    rank0 = fr.training()
    rank0[0]["profiling_name"] = "nccl:" + "a" * 1000 + "1"
    rank1[0]["profiling_name"] = "nccl:" + "a" * 1000 + "2"
    done, doc = report_json(cli, tmp_path, fr.write_pair(tmp_path, rank0, rank1))
    assert done.returncode == 1
    assert doc["root_cause"]["kinds"] == ["type_mismatch"]


# ---- 7: deep nesting -------------------------------------------------------------------------

def test_7_deeply_nested_ranks_in_a_json_string_are_refused_with_exit_2(tmp_path, cli):
    deep = "[" * 100_000 + "]" * 100_000
    bad = fr.write_pickle(tmp_path / "nccl_trace_rank_0",
                          fr.dump(fr.training(), groups={"0": ("default_pg", deep)}))
    done = import_fr(cli, tmp_path, [bad])
    assert done.returncode == 2, done.stderr[-2000:]
    assert "pg_config['0'].ranks" in done.stderr and "nested too deeply" in done.stderr
    assert "Traceback" not in done.stderr


def test_7_a_deeply_nested_pickled_ranks_list_is_refused_with_exit_2(tmp_path, cli):
    marker = "NESTED_RANKS_HERE"
    doc = fr.dump(fr.training(), groups={"0": ("default_pg", marker)})
    data = pickle.dumps(doc, protocol=2)
    encoded = pickle.dumps(marker, protocol=2)[2:-1]  # BINUNICODE + payload (+ memo put)
    encoded = encoded[:encoded.index(marker.encode()) + len(marker)]
    depth = 200_000
    nested = b"]" * depth + b"a" * (depth - 1)  # EMPTY_LIST x depth, then APPEND each inward
    bad = tmp_path / "nccl_trace_rank_0"
    bad.write_bytes(data.replace(encoded, nested, 1))
    done = import_fr(cli, tmp_path, [bad])
    assert done.returncode == 2, done.stderr[-2000:]
    assert "pg_config['0'].ranks: expected a list of non-negative ranks" in done.stderr
    assert "Traceback" not in done.stderr


def test_7_deeply_nested_json_is_refused_with_exit_2(tmp_path, cli):
    bad = tmp_path / "nccl_trace_rank_0.json"
    bad.write_text('{"version": "2.4", "entries": [], "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    done = import_fr(cli, tmp_path, [bad])
    assert done.returncode == 2 and "nested too deeply" in done.stderr


# ---- 8: exit codes ---------------------------------------------------------------------------

def test_8_an_unexpected_error_exits_3_not_1(tmp_path, monkeypatch, capsys):
    from amaxharness import main
    from amaxharness.fr import agreement

    def broken(*_args, **_kwargs):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(agreement, "check", broken)
    paths = fr.write_pair(tmp_path, fr.training(), fr.training())
    code = main.main(["import-fr", *map(str, paths), "--out", str(tmp_path / "out"),
                      "--no-simulate"])
    assert code == 3
    assert "internal error: ZeroDivisionError: a bug" in capsys.readouterr().err


def test_8_a_missing_package_fails_its_own_command_with_exit_3_and_leaves_the_others(tmp_path):
    paths = fr.write_pair(tmp_path, fr.training(), fr.training())
    script = ("import sys; sys.modules['tqdm'] = None; sys.path.insert(0, sys.argv[1]); "
              "from amaxharness.main import main; sys.exit(main(sys.argv[2:]))")
    sweep = subprocess.run([sys.executable, "-c", script, str(HARNESS), "sweep", "grid.toml"],
                           capture_output=True, text=True, timeout=60)
    assert sweep.returncode == 3, sweep.stderr
    assert "needs the Python package 'tqdm'" in sweep.stderr
    assert f"{sys.executable} -m pip install -r harness/requirements.txt" in sweep.stderr
    fr_ok = subprocess.run([sys.executable, "-c", script, str(HARNESS), "import-fr",
                            *map(str, paths), "--out", str(tmp_path / "out"), "--no-simulate"],
                           capture_output=True, text=True, timeout=60)
    assert fr_ok.returncode == 0, fr_ok.stderr


def test_8_the_launcher_checks_and_runs_the_same_interpreter():
    launcher = (HARNESS.parent / "amaxcheck").read_text()
    assert 'exec "$(python_bin)" "$root/harness/cli.py"' in launcher
    assert '"$py" -m pip install' in launcher and 'echo "# python: $py"' in launcher
    assert "exec python3 " not in launcher and "\n  python3 -m pip" not in launcher


# ---- 9: lone surrogates ----------------------------------------------------------------------

@pytest.mark.parametrize("field", ["frames", "profiling_name", "process_group"])
def test_9_a_lone_surrogate_is_refused_with_exit_2(tmp_path, cli, field):
    rank0 = fr.training()
    if field == "frames":
        rank0[1]["frames"] = [{"name": "\udcff", "filename": "x.py", "line": 1}]
    elif field == "profiling_name":
        rank0[1]["profiling_name"] = "nccl:all_reduce\udcff"
    else:
        rank0[1]["process_group"] = ["0", "default_pg\udcff"]
    bad = tmp_path / "nccl_trace_rank_0.json"
    bad.write_text(json.dumps(fr.dump(rank0)))  # json escapes it as \udcff
    assert "\\udcff" in bad.read_text()
    done = import_fr(cli, tmp_path, [bad])
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not valid Unicode" in done.stderr and "entries[1]" in done.stderr
    assert not (tmp_path / "out" / "scenario.json").exists()


# ---- 10, 11: gloo ----------------------------------------------------------------------------

def gloo(records):
    for r in records:
        r["profiling_name"] = r["profiling_name"].replace("nccl:", "gloo:")
        r["state"] = "scheduled"  # gloo records every collective as scheduled
    return records


def test_10_a_gloo_order_inversion_is_a_note_unless_the_user_asks(tmp_path, cli):
    rank0 = gloo(fr.training(order=("amax", "bucket0", "bucket1")))
    rank1 = gloo(fr.training(order=("bucket0", "amax", "bucket1")))
    paths = fr.write_pair(tmp_path, rank0, rank1)
    done = import_fr(cli, tmp_path, paths)
    assert done.returncode == 0, done.stdout
    assert "note: order inversion between group 0 and group 1" in done.stdout
    assert "backend gloo" in done.stdout
    assert import_fr(cli, tmp_path, paths, "--kernels", "serialized").returncode == 1


def test_10_an_nccl_order_inversion_still_deadlocks_by_default(tmp_path, cli):
    rank0 = fr.training(order=("amax", "bucket0", "bucket1"))
    rank1 = fr.training(order=("bucket0", "amax", "bucket1"))
    done = import_fr(cli, tmp_path, fr.write_pair(tmp_path, rank0, rank1))
    assert done.returncode == 1
    assert "with serialized collective kernels (NCCL < 2.26) this order can deadlock" in done.stdout


def test_10_the_scenario_of_a_gloo_job_runs_concurrent_kernels(tmp_path, cli):
    paths = fr.write_pair(tmp_path, gloo(fr.training()), gloo(fr.training()))
    assert import_fr(cli, tmp_path, paths).returncode == 0
    assert json.loads((tmp_path / "out" / "scenario.json").read_text())["kernels"] == \
        "concurrent"


def gloo_dump(records, ranks=(0, 1)):
    """gloo's pg_config: a single entry under '' describing the last group created."""
    doc = fr.dump(records, ranks=ranks)
    doc["pg_config"] = {"": {"name": "1", "desc": "amax_reduction", "ranks": str(list(ranks))}}
    return doc


def test_11_gloo_single_empty_pg_config_entry_and_scheduled_states(tmp_path, cli):
    paths = [fr.write_pickle(tmp_path / f"nccl_trace_rank_{r}", gloo_dump(gloo(fr.training())))
             for r in (0, 1)]
    done, doc = report_json(cli, tmp_path, paths)
    assert done.returncode == 0, done.stdout + done.stderr
    assert group(doc, "1")["members"] == [0, 1] and group(doc, "1")["backend"] == "gloo"
    assert group(doc, "0")["members"] == [0, 1]


def test_11_a_gloo_size_mismatch_is_found(tmp_path, cli):
    paths = [fr.write_pickle(tmp_path / f"nccl_trace_rank_{r}",
                             gloo_dump(gloo(fr.training(amax_size=8 + r)))) for r in (0, 1)]
    done, doc = report_json(cli, tmp_path, paths)
    assert done.returncode == 1
    assert doc["root_cause"]["group"] == "1" and doc["root_cause"]["kinds"] == ["size_mismatch"]


# ---- report order ----------------------------------------------------------------------------

def test_the_root_cause_comes_first_and_the_knock_on_is_counted(tmp_path, cli):
    per_rank = {0: fr.training(), 1: fr.training(), 2: fr.training()[:3]}  # rank 2 stops early
    done = import_fr(cli, tmp_path, write_ranks(tmp_path, per_rank))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    root = next(i for i, line in enumerate(lines) if line.startswith("root cause:"))
    assert lines[root] == "root cause: group 1, first divergence at collective_seq_id 2:"
    assert lines[root + 1] == "  not_joined: rank 2 never issued it (its last is #1)"
    assert any(line.startswith("after it: 1 more divergence(s) (not_joined 1) in 1 group(s)")
               for line in lines[root:])


def test_a_big_hung_job_names_the_stuck_rank_in_a_short_report(tmp_path, cli):
    paths = make_dumps.write(tmp_path / "dumps", ranks=64, records=200, stuck=35)
    done, doc = report_json(cli, tmp_path, paths)
    assert done.returncode == 1
    root = doc["root_cause"]
    assert root["ranks"] == [35] and root["kinds"] == ["not_joined"]
    assert root["group"] == make_dumps.rank_groups(35, 64)[1]  # its amax group, first in time
    assert {d["group"] for d in doc["knock_on"]} == {"0", make_dumps.rank_groups(35, 64)[0]}
    text = import_fr(cli, tmp_path, paths)
    assert len(text.stdout.splitlines()) < 80
    assert "root cause: group 12, first divergence" in text.stdout


def test_1_an_undecidable_member_stays_out_of_the_simulated_communicator(tmp_path, cli,
                                                                          fake_bin):
    rank0 = renumber(fr.training(iterations=3))
    rank1 = [r for r in renumber(fr.training(iterations=3)) if r["process_group"][0] == "0"][2:]
    done = cli("import-fr", *write_ranks(tmp_path, {0: rank0, 1: rank1}), "--out",
               tmp_path / "out")
    assert done.returncode == 4, done.stdout + done.stderr
    comms = json.loads((tmp_path / "out" / "scenario.json").read_text())["comms"]
    assert comms == [{"name": "pg 0", "members": [0, 1]}, {"name": "pg 1", "members": [0]}]


def test_the_import_benchmark_runs_and_reports_a_row(tmp_path):
    done = subprocess.run([sys.executable, str(HARNESS.parent / "bench" / "fr" /
                                               "bench_import.py"),
                           "--ranks", "8", "--records", "40", "--work", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    row = done.stdout.splitlines()[-1].split(" | ")
    assert row[0] == "| 8" and row[2] == "1"  # the hung job's import exits 1 (divergent)
    assert "root cause: group" in done.stderr


def test_a_rank_beyond_a_million_is_refused_rather_than_counted_as_missing(tmp_path, cli):
    paths = fr.write_pair(tmp_path, fr.training(), fr.training(),
                          groups={"0": ("default_pg", [0, 1, 1 << 24])})
    done = import_fr(cli, tmp_path, paths)
    assert done.returncode == 2 and "expected a list of non-negative ranks" in done.stderr
