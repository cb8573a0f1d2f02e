"""The program's restricted pickle reader (src/fr/, run as `amaxcheck fr-scan`) on CPython's own
pickles: plain data loads at every binary protocol, anything that could run code is refused and
nothing runs. (Its unit tests, tests/fr/, use fixed bytes; these use the real pickler.)"""

import io
import json
import os
import pickle
import subprocess

import pytest

import fr_dumps as fr


class _CreatesAFile:
    """Unpickling this with the standard pickle module calls exec, which creates a file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').close()",))


def scan(path, *extra):
    program = os.environ.get("AMAXCHECK_BIN")
    if not program:
        pytest.skip("needs the built program (AMAXCHECK_BIN)")
    return subprocess.run([program, "fr-scan", *extra, str(path)], capture_output=True,
                          text=True, timeout=60)


def records_read(stdout):
    """fr-scan's records and the tables they refer to."""
    doc = json.loads(stdout)
    return {key: doc[key] for key in ("records", "texts", "frames", "stacks")}


@pytest.mark.parametrize("protocol", range(1, pickle.HIGHEST_PROTOCOL + 1))
def test_a_dump_pickled_at_any_binary_protocol_reads_the_same(tmp_path, protocol):
    doc = fr.dump(fr.training())
    doc["entries"][0]["duration_ms"] = 0.5
    doc["entries"][1]["timeout_ms"] = None
    for folder, proto in (("p2", 2), ("pn", protocol)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "nccl_trace_rank_0").write_bytes(pickle.dumps(doc, protocol=proto))
    # a window as long as the dump: every record is in the output
    base, other = (scan(tmp_path / folder / "nccl_trace_rank_0", "--window", "1000000")
                   for folder in ("p2", "pn"))
    assert base.returncode == 0 and other.returncode == 0, other.stderr
    assert records_read(base.stdout) == records_read(other.stdout)
    assert len(records_read(other.stdout)["records"]) == len(doc["entries"])


def test_the_planted_payload_really_executes_under_the_standard_unpickler(tmp_path):
    marker = tmp_path / "proof"
    pickle.loads(pickle.dumps(_CreatesAFile(marker)))
    assert marker.exists()  # so the refusal below is meaningful


@pytest.mark.parametrize("protocol", [2, 4])
def test_a_pickle_that_asks_for_a_global_is_refused_and_nothing_runs(tmp_path, protocol):
    marker = tmp_path / "pwned"
    doc = fr.dump(fr.training())
    doc["entries"][0]["frames"] = [_CreatesAFile(marker)]
    (tmp_path / "bad").write_bytes(pickle.dumps(doc, protocol=protocol))
    done = scan(tmp_path / "bad")
    assert done.returncode == 2
    assert "refused: it asks for the global builtins.exec" in done.stderr \
        or "refused: it asks for the global __builtin__.exec" in done.stderr
    assert not marker.exists()


def test_a_persistent_id_is_refused(tmp_path):
    class WithPid(pickle.Pickler):
        def persistent_id(self, obj):
            return "tensor-0" if obj == "TENSOR" else None

    buf = io.BytesIO()
    WithPid(buf, protocol=2).dump({"version": "2.4", "entries": [], "t": "TENSOR"})
    (tmp_path / "bad").write_bytes(buf.getvalue())
    done = scan(tmp_path / "bad")
    assert done.returncode == 2 and "persistent id" in done.stderr


@pytest.mark.parametrize("value", [{1, 2}, frozenset({1}), b"bytes", bytearray(b"x")])
def test_values_beyond_plain_data_are_refused(tmp_path, value):
    (tmp_path / "bad").write_bytes(pickle.dumps({"version": "2.4", "entries": [], "v": value},
                                                protocol=4))
    done = scan(tmp_path / "bad")
    assert done.returncode == 2 and "refused" in done.stderr


def test_a_truncated_pickle_is_not_complete_rather_than_refused(tmp_path):
    data = pickle.dumps(fr.dump(fr.training()), protocol=2)
    (tmp_path / "cut").write_bytes(data[: len(data) // 2])
    done = scan(tmp_path / "cut")
    assert done.returncode == 2
    assert "not a complete pickle" in done.stderr and "refused" not in done.stderr
