"""The restricted unpickler: plain data loads, anything that could run code is refused."""

import pickle

import pytest

from amaxharness.fr.safe_pickle import RefusedPickle, loads_plain


class _CreatesAFile:
    """Unpickling this with the standard pickle module calls exec, which creates a file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').close()",))


def test_plain_containers_strings_and_numbers_load():
    doc = {"version": "2.4", "entries": [{"record_id": 1, "process_group": ("0", "d"),
                                          "duration_ms": 0.5, "is_p2p": False, "x": None}]}
    for protocol in range(0, pickle.HIGHEST_PROTOCOL + 1):
        assert loads_plain(pickle.dumps(doc, protocol=protocol)) == doc


def test_the_planted_payload_really_executes_under_the_standard_unpickler(tmp_path):
    marker = tmp_path / "proof"
    pickle.loads(pickle.dumps(_CreatesAFile(marker)))
    assert marker.exists()  # so the refusal below is meaningful


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_a_pickle_that_asks_for_a_global_is_refused_and_nothing_runs(tmp_path, protocol):
    marker = tmp_path / "pwned"
    data = pickle.dumps({"version": "2.4", "entries": [_CreatesAFile(marker)]},
                        protocol=protocol)
    with pytest.raises(RefusedPickle, match=r"global (__builtin__|builtins)\.exec"):
        loads_plain(data)
    assert not marker.exists()


def test_a_persistent_id_is_refused():
    import io

    class WithPid(pickle.Pickler):
        def persistent_id(self, obj):
            return "tensor-0" if obj == "TENSOR" else None

    buf = io.BytesIO()
    WithPid(buf, protocol=2).dump({"t": "TENSOR"})
    with pytest.raises(RefusedPickle, match="persistent id"):
        loads_plain(buf.getvalue())


@pytest.mark.parametrize("value", [{1, 2}, frozenset({1}), b"bytes", bytearray(b"x")])
def test_values_beyond_plain_data_are_refused(value):
    with pytest.raises(RefusedPickle):
        loads_plain(pickle.dumps({"v": value}, protocol=4))


def test_a_truncated_pickle_fails_without_being_refused_as_unsafe():
    data = pickle.dumps({"entries": list(range(100))}, protocol=2)
    with pytest.raises(Exception) as err:
        loads_plain(data[: len(data) // 2])
    assert not isinstance(err.value, RefusedPickle)
