"""import-fr with the real program: the windowed scenario of a hung job is small enough that
the simulator reaches the hang and writes a trace and a timeline (issue 17, item 3)."""

import json
import sys

from harness_testing import HARNESS, run_cli

sys.path.insert(0, str(HARNESS.parent / "bench" / "fr"))
import make_dumps  # noqa: E402  (bench/fr/make_dumps.py)


def test_a_synthetic_hung_job_is_simulated_to_its_hang(tmp_path, real_bin):
    paths = make_dumps.write(tmp_path / "dumps", ranks=16, records=400, stuck=11)
    done = run_cli("import-fr", *paths, "--out", tmp_path / "out", "--json", timeout=300)
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert doc["root_cause"]["ranks"] == [11]
    sim = doc["simulator"]
    assert sim["verdict"] == "hazard", sim
    assert "deadlock" in sim["hazard_kinds"] or "unjoined_collective" in sim["hazard_kinds"]
    assert (tmp_path / "out" / "trace.jsonl").exists()
    assert (tmp_path / "out" / "timeline.perfetto.json").exists()
