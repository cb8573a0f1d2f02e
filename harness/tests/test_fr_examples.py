"""The Flight Recorder examples shipped in traces/fr/: each gives its documented verdict."""

import json
import pathlib

import pytest

import fr_dumps

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "traces" / "fr"


def kinds_found(doc):
    kinds = []
    for g in doc["groups"]:
        if g["first_divergence"]:
            kinds += g["first_divergence"]["kinds"]
    for inv in doc["order_inversions"]:
        if inv["deadlocks"]:
            kinds += inv["kinds"]
    return sorted(set(kinds))


@pytest.mark.parametrize("name", sorted(fr_dumps.EXAMPLES))
def test_each_shipped_example_gives_its_documented_verdict(name, tmp_path, cli):
    _, _, code, kinds = fr_dumps.EXAMPLES[name]
    dumps = sorted((EXAMPLES / name).iterdir())
    done = cli("import-fr", *dumps, "--out", tmp_path, "--no-simulate", "--json")
    assert done.returncode == code, done.stdout + done.stderr
    assert kinds_found(json.loads(done.stdout)) == kinds


def test_the_shipped_examples_are_what_the_generator_writes(tmp_path):
    fr_dumps.write_examples(tmp_path)
    shipped = sorted(p.relative_to(EXAMPLES) for p in EXAMPLES.rglob("nccl_trace_rank_*"))
    assert shipped == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("nccl_trace_*"))
    for rel in shipped:
        assert (EXAMPLES / rel).read_bytes() == (tmp_path / rel).read_bytes(), rel
