"""Flight Recorder import: the planted divergences are found, bad dumps are refused (exit 2)."""

import json
import pickle

import pytest

import fr_dumps as fr


def import_fr(cli, tmp_path, paths, *extra):
    return cli("import-fr", *paths, "--out", tmp_path / "out", "--no-simulate", *extra)


def report_json(cli, tmp_path, paths, *extra):
    done = import_fr(cli, tmp_path, paths, "--json", *extra)
    return done, json.loads(done.stdout)


def group(doc, name):
    return next(g for g in doc["groups"] if g["name"] == name)


def test_a_consistent_pair_is_consistent(tmp_path, cli):
    paths = fr.write_pair(tmp_path, fr.training(), fr.training())
    done = import_fr(cli, tmp_path, paths)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verdict: consistent" in done.stdout
    assert "group 0 (default_pg): members 0, 1; collectives #1..#6: 6 agree; consistent" \
        in done.stdout
    assert "group 1 (amax_reduction): members 0, 1; collectives #1..#3: 3 agree; consistent" \
        in done.stdout


def test_swapped_order_on_a_shared_communicator_is_a_size_mismatch(tmp_path, cli):
    rank0 = fr.training(amax_pg="0")
    rank1 = fr.training(amax_pg="0", order=("bucket0", "amax", "bucket1"))
    done, doc = report_json(cli, tmp_path, fr.write_pair(tmp_path, rank0, rank1))
    assert done.returncode == 1
    first = group(doc, "0")["first_divergence"]
    assert first["collective_seq_id"] == 1
    assert first["kinds"] == ["size_mismatch"]
    assert first["ranks"] == [0, 1]  # two ranks, no majority: both are named
    assert first["records"]["0"][0]["input_sizes"] == [[8]]
    assert first["records"]["1"][0]["input_sizes"] == [[1048576]]


def test_a_missing_collective_names_the_rank_that_never_joined(tmp_path, cli):
    rank0 = fr.training()
    rank0[-1]["state"] = "started"  # rank 0 waits in the last bucket ...
    rank1 = fr.training()[:-1]      # ... which rank 1 never issued
    done = import_fr(cli, tmp_path, fr.write_pair(tmp_path, rank0, rank1))
    assert done.returncode == 1
    assert "first divergence at collective_seq_id 6:" in done.stdout
    assert "not_joined: rank 1 never issued it (its last is #5)" in done.stdout
    assert "group 1 (amax_reduction): members 0, 1; collectives #1..#3: 3 agree; consistent" \
        in done.stdout


def test_a_size_mismatch_is_reported_with_the_call_stacks(tmp_path, cli):
    done = import_fr(cli, tmp_path,
                     fr.write_pair(tmp_path, fr.training(), fr.training(amax_size=9)))
    assert done.returncode == 1
    out = done.stdout
    assert "group 1 (amax_reduction)" in out and "first divergence at collective_seq_id 1:" in out
    assert "size_mismatch: sizes differ: rank 0: in [[8]] out [[8]]; rank 1: in [[9]] out [[9]]" in out
    assert "at reduce_amax at transformer_engine/pytorch/fp8.py:120" in out
    assert "verdict: DIVERGENT (1 divergence)" in out


def test_a_wrapped_ring_buffer_is_aligned_per_group_from_the_largest_first_seq(tmp_path, cli):
    full = fr.training(iterations=4)
    wrapped = fr.training(iterations=4)[5:]  # rank 1 kept only its newest records
    done, doc = report_json(cli, tmp_path, fr.write_pair(tmp_path, full, wrapped))
    assert done.returncode == 0, done.stdout
    assert [d["wrapped"] for d in doc["dumps"]] == [False, True]
    assert group(doc, "0")["window"] == [4, 8] and group(doc, "1")["window"] == [3, 4]


def test_a_divergence_after_the_wrap_is_still_found(tmp_path, cli):
    full = fr.training(iterations=4)
    wrapped = fr.training(iterations=4)[5:]
    wrapped[-1]["input_sizes"] = [[7]]
    done, doc = report_json(cli, tmp_path, fr.write_pair(tmp_path, full, wrapped))
    assert done.returncode == 1
    assert group(doc, "0")["first_divergence"]["collective_seq_id"] == 8


def test_type_dtype_and_state_mismatches_are_each_named(tmp_path, cli):
    rank0, rank1 = fr.training(), fr.training()
    rank1[3]["profiling_name"] = "nccl:all_gather"     # amax #2 (group 1)
    rank1[1]["input_dtypes"] = ["BFloat16"]            # bucket #1 (group 0)
    rank1[2]["state"] = "scheduled"                    # bucket #2 (group 0)
    done, doc = report_json(cli, tmp_path, fr.write_pair(tmp_path, rank0, rank1))
    assert done.returncode == 1
    assert group(doc, "1")["first_divergence"]["kinds"] == ["type_mismatch"]
    assert group(doc, "0")["first_divergence"]["kinds"] == ["dtype_mismatch"]
    assert group(doc, "0")["divergent"] == 2  # the state mismatch at #2 is counted too


def test_a_rank_with_an_extra_record_of_a_collective_diverges_whichever_rank_it_is(tmp_path, cli):
    # Two records with one collective_seq_id (a coalesced group) on one rank, one on the other:
    # the ranks did not issue the same thing, whether the rank with more comes first or not.
    for extra_on in (0, 1):
        ranks = [fr.training(), fr.training()]
        records = ranks[extra_on]
        records.insert(2, dict(records[1]))  # bucket #1 of group 0, twice
        for record_id, record in enumerate(records):
            record["record_id"] = record_id
        folder = tmp_path / f"extra_on_{extra_on}"
        folder.mkdir()
        done, doc = report_json(cli, folder, fr.write_pair(folder, *ranks))
        assert done.returncode == 1, (extra_on, done.stdout)
        first = group(doc, "0")["first_divergence"]
        assert first["collective_seq_id"] == 1, (extra_on, first)
        assert "type_mismatch" in first["kinds"], (extra_on, first)


def test_three_ranks_name_the_odd_one_out(tmp_path, cli):
    ranks = (0, 1, 2)
    paths = [fr.write_pickle(tmp_path / f"nccl_trace_rank_{r}",
                             fr.dump(fr.training(amax_size=9 if r == 2 else 8), ranks=ranks))
             for r in ranks]
    done, doc = report_json(cli, tmp_path, paths)
    assert done.returncode == 1
    assert group(doc, "1")["first_divergence"]["ranks"] == [2]


def test_a_cross_group_order_inversion_deadlocks_only_with_serialized_kernels(tmp_path, cli):
    rank0 = fr.training(order=("amax", "bucket0", "bucket1"))
    rank1 = fr.training(order=("bucket0", "amax", "bucket1"))
    paths = fr.write_pair(tmp_path, rank0, rank1)
    done, doc = report_json(cli, tmp_path, paths)
    assert done.returncode == 1
    inversion = doc["order_inversions"][0]
    assert inversion["kinds"] == ["order_inversion"]
    assert inversion["findings"][0]["text"] == \
        "rank 1 issues group 0 #1 before group 1 #1; rank 0 issues group 1 #1 first"
    assert inversion["ranks"] == [0, 1]
    relaxed = import_fr(cli, tmp_path, paths, "--kernels", "concurrent")
    assert relaxed.returncode == 0
    assert "note: order inversion" in relaxed.stdout


def test_json_dumps_with_unknown_fields_and_a_rank_field_are_read(tmp_path, cli):
    rank0 = [dict(e, thread_name="pt_autograd_0", new_field=[1, 2]) for e in fr.training()]
    paths = [fr.write_json(tmp_path / "a.json", fr.dump(rank0, rank=0, comm_lib_version="2.21")),
             fr.write_json(tmp_path / "b.json", fr.dump(fr.training(amax_size=9), rank=1))]
    done, doc = report_json(cli, tmp_path, paths)
    assert done.returncode == 1
    assert [d["rank"] for d in doc["dumps"]] == [0, 1]


def test_the_converted_scenario_has_a_communicator_per_group_and_every_collective(tmp_path,
                                                                                   cli):
    rank1 = fr.training()[:-1]
    done = import_fr(cli, tmp_path, fr.write_pair(tmp_path, fr.training(), rank1))
    assert done.returncode == 1
    scenario = json.loads((tmp_path / "out" / "scenario.json").read_text())
    assert [c["members"] for c in scenario["comms"]] == [[0, 1], [0, 1]]
    programs = [r["threads"][0]["program"] for r in scenario["ranks"]]
    assert [len(p) for p in programs] == [9, 8]
    amax = programs[0][0]
    assert amax["kind"] == "all_reduce" and amax["comm"] == "pg 1" and amax["stream"] == "pg 1"
    assert [c["name"] for c in scenario["comms"]] == ["pg 0", "pg 1"]
    assert "reduce_amax at transformer_engine/pytorch/fp8.py:120" in amax["origin"]
    # sizes are renumbered but keep their order: 8 < 524288 < 1048576
    counts = [op["reads"][0]["count"] for op in programs[0][:3]]
    assert counts == [1, 3, 2]
    assert scenario["kernels"] == "serialized"


def test_the_converted_scenario_is_handed_to_the_simulator(tmp_path, cli, fake_bin):
    paths = fr.write_pair(tmp_path, fr.training(), fr.training())
    done = cli("import-fr", *paths, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    checks = [c for c in fake_bin.calls() if c[0] == "check"]
    assert checks and checks[0][1] == str(tmp_path / "out" / "scenario.json")
    assert f"trace: {tmp_path / 'out' / 'trace.jsonl'}" in done.stdout
    assert (tmp_path / "out" / "timeline.perfetto.json").exists()


# ---- bad dumps ----------------------------------------------------------------------------

def good(tmp_path, name="nccl_trace_rank_1"):
    return fr.write_pickle(tmp_path / name, fr.dump(fr.training()))


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_bytes(pickle.dumps(fr.dump(fr.training()), protocol=2)[:300]),
     "not a complete pickle"),
    (lambda p: fr.write_pickle(p, fr.dump(fr.training(), version="1.0")),
     "version 1.0 is not supported"),
    (lambda p: fr.write_pickle(p, fr.dump(fr.training(), version="3.1")),
     "version 3.1 is not supported"),
    (lambda p: fr.write_pickle(p, [1, 2, 3]), "expected a dict at the top level"),
    (lambda p: fr.write_pickle(p, {"version": "2.4"}), "missing field 'entries'"),
    (lambda p: fr.write_pickle(p, fr.dump([{k: v for k, v in fr.entry(0, "0", 1).items()
                                            if k != "record_id"}])),
     r"entries\[0\]: missing field 'record_id'"),
    (lambda p: fr.write_pickle(p, fr.dump([fr.entry(0, "0", 1, state="exploded")])),
     r"entries\[0\].state: expected one of"),
    (lambda p: fr.write_pickle(p, fr.dump([fr.entry(0, "0", 1, input_sizes=[[-1]])])),
     r"entries\[0\].input_sizes: expected a list of shapes"),
    (lambda p: fr.write_pickle(p, fr.dump(fr.training(), groups={"0": ("d", "[0, 1")})),
     "expected a rank list"),
    (lambda p: p.write_text(json.dumps(fr.dump(fr.training()))[:200]), "not valid JSON"),
    (lambda p: p.write_bytes(b""), "empty file"),
])
def test_a_bad_dump_is_refused_with_a_clear_error_and_exit_2(tmp_path, cli, make, message):
    bad = tmp_path / "nccl_trace_rank_0"
    make(bad)
    done = import_fr(cli, tmp_path, [bad, good(tmp_path)])
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr or __import__("re").search(message, done.stderr), done.stderr
    assert str(bad) in done.stderr


def test_a_dump_that_would_run_code_is_refused_and_nothing_runs(tmp_path, cli):
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (exec, (f"open({str(marker)!r}, 'w').close()",))

    doc = fr.dump(fr.training())
    doc["entries"][0]["frames"] = [Payload()]
    bad = tmp_path / "nccl_trace_rank_0"
    bad.write_bytes(pickle.dumps(doc, protocol=2))
    done = import_fr(cli, tmp_path, [bad, good(tmp_path)])
    assert done.returncode == 2
    assert "refused" in done.stderr and "nothing from this file was executed" in done.stderr
    assert not marker.exists()


def test_two_dumps_of_the_same_rank_are_refused(tmp_path, cli):
    a = fr.write_pickle(tmp_path / "x_rank_3", fr.dump(fr.training()))
    b = fr.write_pickle(tmp_path / "y_rank_3", fr.dump(fr.training()))
    done = import_fr(cli, tmp_path, [a, b])
    assert done.returncode == 2 and "rank 3 already comes from" in done.stderr


# ---- the verdict agrees with the exit code; the output folder holds only this run's files ----

def with_send(records, state="started"):
    """`records` and, after them, a point-to-point send to rank 1 (PyTorch's is_p2p record)."""
    send = fr.entry(len(records), "0", 0, op="send 0->1", size=1024, state=state,
                    is_p2p=True, p2p_seq_id=1)
    return records + [send]


def test_a_point_to_point_record_is_never_called_consistent(tmp_path, cli):
    # rank 0 hangs in a send that rank 1 never matched: the import matches collectives only
    paths = fr.write_pair(tmp_path, with_send(fr.training()), fr.training())
    done = import_fr(cli, tmp_path, paths)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "verdict: consistent" not in done.stdout
    assert "verdict: INCONCLUSIVE (no divergence found, but 1 point-to-point record(s) " \
        "(send/recv) are not checked" in done.stdout
    done, doc = report_json(cli, tmp_path, paths)
    assert done.returncode == 4 and doc["verdict"] == "inconclusive"
    assert doc["p2p_ignored"] == 1


def test_a_divergence_beside_a_point_to_point_record_is_still_divergent(tmp_path, cli):
    paths = fr.write_pair(tmp_path, with_send(fr.training(), "completed"),
                          fr.training(amax_size=9))
    done, doc = report_json(cli, tmp_path, paths)
    assert done.returncode == 1 and doc["verdict"] == "divergent"


@pytest.mark.parametrize("sim_verdict, code, verdict, line", [
    ("hazard", 1, "hazard", "verdict: HAZARD (the dumps show no divergence, but the simulator "
                            "finds deadlock in the converted scenario)"),
    ("crash", 3, "error", "verdict: ERROR (the simulator could not check the converted scenario: "),
    ("inconclusive", 4, "inconclusive", "verdict: INCONCLUSIVE (no divergence found, but the "
                                        "simulator's check of the converted scenario was cut "
                                        "short)"),
])
def test_what_the_simulator_finds_is_in_the_verdict_as_in_the_exit_code(
        tmp_path, cli, fake_bin, monkeypatch, sim_verdict, code, verdict, line):
    monkeypatch.setenv("FAKE_SCENARIO_VERDICT", sim_verdict)
    paths = fr.write_pair(tmp_path, fr.training(), fr.training())
    done = cli("import-fr", *paths, "--out", tmp_path / "out")
    assert done.returncode == code, done.stdout + done.stderr
    assert "verdict: consistent" not in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith(line)
    done = cli("import-fr", *paths, "--out", tmp_path / "out", "--json")
    doc = json.loads(done.stdout)
    assert done.returncode == code
    assert doc["verdict"] == verdict and doc["agreement_verdict"] == "consistent"


def test_a_deadlock_the_simulator_finds_over_three_groups_is_not_reported_consistent(tmp_path,
                                                                                      cli):
    # A={0,1}, B={1,2}, C={0,2}: each rank issues its two groups in an order that closes a
    # cycle. Whether the dumps' analysis finds it or only the simulator does, the report's
    # verdict must say what the exit code says.
    groups = {"A": ("gA", [0, 1]), "B": ("gB", [1, 2]), "C": ("gC", [0, 2])}
    firsts = {0: ("A", "C"), 1: ("B", "A"), 2: ("C", "B")}
    paths = [fr.write_pickle(tmp_path / f"nccl_trace_rank_{r}", fr.dump(
                 [fr.entry(i, pg, 1, size=64, state="scheduled", desc="g" + pg)
                  for i, pg in enumerate(order)], ranks=(0, 1, 2), groups=groups))
             for r, order in firsts.items()]
    done = cli("import-fr", *paths, "--out", tmp_path / "out")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "verdict: consistent" not in done.stdout
    done = cli("import-fr", *paths, "--out", tmp_path / "out", "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["verdict"] in ("divergent", "hazard")


def test_a_clean_run_names_no_trace_of_an_earlier_run_and_leaves_none(tmp_path, cli):
    out = tmp_path / "out"
    (tmp_path / "swapped").mkdir()
    (tmp_path / "consistent").mkdir()
    swapped = fr.write_pair(tmp_path / "swapped", fr.training(amax_pg="0"),
                            fr.training(amax_pg="0", order=("bucket0", "amax", "bucket1")))
    done = cli("import-fr", *swapped, "--out", out)
    assert done.returncode == 1 and (out / "trace.jsonl").exists(), done.stdout + done.stderr
    assert (out / "timeline.perfetto.json").exists()
    consistent = fr.write_pair(tmp_path / "consistent", fr.training(), fr.training())
    done = cli("import-fr", *consistent, "--out", out, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    sim = json.loads(done.stdout)["simulator"]
    assert sim["verdict"] == "no_hazard_found"
    assert sim["trace"] is None and sim["perfetto"] is None
    assert not (out / "trace.jsonl").exists()
    assert not (out / "timeline.perfetto.json").exists()
    done = cli("import-fr", *swapped, "--out", out)  # a trace again, then text
    done = cli("import-fr", *consistent, "--out", out)
    assert done.returncode == 0 and "trace:" not in done.stdout and "perfetto:" not in \
        done.stdout, done.stdout


def test_a_failed_import_leaves_no_earlier_output_behind(tmp_path, cli):
    out = tmp_path / "out"
    swapped = fr.write_pair(tmp_path, fr.training(amax_pg="0"),
                            fr.training(amax_pg="0", order=("bucket0", "amax", "bucket1")))
    assert cli("import-fr", *swapped, "--out", out).returncode == 1
    assert (out / "scenario.json").exists() and (out / "trace.jsonl").exists()
    bad = tmp_path / "nccl_trace_rank_9"
    bad.write_bytes(b"")
    done = cli("import-fr", swapped[0], bad, "--out", out)
    assert done.returncode == 2 and "empty file" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == []


def test_an_unwritable_output_folder_is_bad_input_naming_it(tmp_path, cli):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    paths = fr.write_pair(tmp_path, fr.training(), fr.training())
    for out in (blocker / "out", blocker):
        done = import_fr(cli, tmp_path, paths, "--out", out)
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"--out {out}: cannot write" in done.stderr
        assert "Traceback" not in done.stderr


def test_a_dump_in_place_of_an_output_file_is_refused_not_removed(tmp_path, cli):
    out = tmp_path / "out"
    out.mkdir()
    paths = fr.write_pair(tmp_path, fr.training(), fr.training())
    inside = out / "scenario.json"
    inside.write_bytes(paths[1].read_bytes())
    done = cli("import-fr", paths[0], inside, "--out", out, "--no-simulate")
    assert done.returncode == 2 and "a dump cannot be one of the output files" in done.stderr
    assert inside.read_bytes() == paths[1].read_bytes()


# ---- rooted collectives: only the root records a gather's output or a scatter's input ----

def rooted(records, op, side, size=4):
    """`records` and, after them, the root's record of a gather (or scatter) on the default
    group: it alone records the list of every rank's tensor on `side` ('output_sizes' for a
    gather, 'input_sizes' for a scatter)."""
    record = fr.entry(len(records), "0", 7, op=op, size=size)
    record[side] = [[size], [size]]
    record[side.replace("sizes", "dtypes")] = ["Float", "Float"]
    return records + [record]


@pytest.mark.parametrize("op, side", [("gather", "output_sizes"), ("scatter", "input_sizes")])
def test_the_root_s_side_of_a_gather_or_scatter_is_not_a_size_or_dtype_mismatch(
        tmp_path, cli, op, side):
    # Once a size and a dtype mismatch (exit 1): rank 1 records the root's side empty.
    root = rooted(fr.training(), op, side)
    other = fr.training() + [fr.entry(len(fr.training()), "0", 7, op=op, size=4)]
    other[-1][side] = []
    other[-1][side.replace("sizes", "dtypes")] = []
    done, doc = report_json(cli, tmp_path, fr.write_pair(tmp_path, root, other))
    assert done.returncode == 0 and doc["verdict"] == "consistent", done.stdout + done.stderr
    # The side every rank records is still compared.
    other[-1]["input_sizes" if side == "output_sizes" else "output_sizes"] = [[5]]
    done, doc = report_json(cli, tmp_path, fr.write_pair(tmp_path, root, other))
    assert done.returncode == 1 and doc["verdict"] == "divergent", done.stdout + done.stderr


@pytest.mark.parametrize("rank", ["1", -1, 1 << 20, 1.0])
def test_a_rank_field_that_is_not_a_rank_is_bad_input_naming_it(tmp_path, cli, rank):
    # Once ignored for the number in the file name: the dump was read as another rank's.
    paths = [fr.write_pickle(tmp_path / "nccl_trace_rank_0", fr.dump(fr.training(), rank=rank)),
             fr.write_pickle(tmp_path / "nccl_trace_rank_1", fr.dump(fr.training()))]
    done = import_fr(cli, tmp_path, paths)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "nccl_trace_rank_0.rank: expected a rank from 0 to 1048575" in done.stderr


def test_an_import_that_does_not_simulate_leaves_a_trace_in_out_alone(tmp_path, cli):
    # It writes no trace, so a trace.jsonl in --out is not its to remove.
    out = tmp_path / "out"
    out.mkdir()
    (out / "trace.jsonl").write_text("mine\n")
    done = import_fr(cli, tmp_path, fr.write_pair(tmp_path, fr.training(), fr.training()))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "trace.jsonl").read_text() == "mine\n"
