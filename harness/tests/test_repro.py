"""`repro TRACE`: replay, shrink, export, and the three paths printed (fake program)."""

import json


def write_trace(path, hazard=True, diverge=False):
    lines = [{"format": "fake", "version": 1}] + [{"step": s, "rank": s % 2} for s in range(12)]
    if hazard:
        lines.append({"hazard": "data_race", "summary": "RAW on amax_history"})
    if diverge:
        lines.append({"step": 12, "diverge": True})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_failing_trace_becomes_a_shrunk_trace_and_a_perfetto_file(tmp_path, fake_bin, cli):
    trace = write_trace(tmp_path / "race.jsonl")
    out = tmp_path / "out"
    done = cli("repro", trace, "--out", out)
    assert done.returncode == 1, done.stderr
    shrunk, perfetto = out / "race.shrunk.jsonl", out / "race.shrunk.perfetto.json"
    assert shrunk.exists() and perfetto.exists()
    assert f"replayed trace: {trace} (12 steps)" in done.stdout
    assert f"shrunk trace:   {shrunk} (4 steps, was 12;" in done.stdout
    assert f"perfetto:       {perfetto}" in done.stdout
    assert "data_race" in done.stdout
    calls = [c for c in fake_bin.calls() if c[0] != "hazard-kinds"]  # the kind table, read once
    assert [c[0] for c in calls] == ["replay", "shrink", "replay", "export"]  # the shrunk trace is re-checked
    assert calls[3][1] == str(shrunk)


def test_the_json_summary_carries_the_paths_and_step_counts(tmp_path, fake_bin, cli):
    done = cli("repro", write_trace(tmp_path / "t.jsonl"), "--out", tmp_path / "o", "--json")
    doc = json.loads(done.stdout)
    assert doc["verdict"] == "hazard" and doc["hazard_kinds"] == ["data_race"]
    assert (doc["steps"], doc["shrunk_steps"]) == (12, 4)
    assert doc["perfetto"].endswith("t.shrunk.perfetto.json")


def test_a_clean_trace_is_exported_but_not_shrunk(tmp_path, fake_bin, cli):
    done = cli("repro", write_trace(tmp_path / "ok.jsonl", hazard=False), "--out", tmp_path / "o")
    assert done.returncode == 0
    assert "(none: the trace shows no hazard)" in done.stdout
    assert (tmp_path / "o" / "ok.perfetto.json").exists()
    assert [c[0] for c in fake_bin.calls()] == ["replay", "export"]


def test_a_trace_that_does_not_replay_is_bad_input(tmp_path, fake_bin, cli):
    done = cli("repro", write_trace(tmp_path / "bad.jsonl", diverge=True), "--out", tmp_path / "o")
    assert done.returncode == 2
    assert "diverged at step 12" in done.stderr


def test_a_missing_trace_is_bad_input(tmp_path, fake_bin, cli):
    done = cli("repro", tmp_path / "nope.jsonl")
    assert done.returncode == 2 and "no such trace file" in done.stderr


def test_the_shrunk_trace_header_gives_the_bug_kept_and_where_each_rank_came_from(tmp_path):
    from amaxharness.repro import shrink_header
    header = {"type": "header", "strategy": "shrink",
              "parameters": {"hazard": "data_race: rank 1 ... write, then rank 1 ... read",
                             "mapping": {"ranks": [{"original_rank": 5, "ops": [[30, 34]]},
                                                   {"original_rank": 2, "ops": [[]]}], "checks": []}}}
    trace = tmp_path / "shrunk.jsonl"
    trace.write_text(json.dumps(header) + "\n")
    assert shrink_header(trace) == ("data_race: rank 1 ... write, then rank 1 ... read", [5, 2])
    assert shrink_header(write_trace(tmp_path / "plain.jsonl")) == (None, None)
