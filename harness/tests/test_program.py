"""Reading the program's --json report, and atomic output files."""

import pytest

from amaxharness import atomic, program


def report(**over):
    doc = {"verdict": "hazard", "runs": 3, "complete": False, "strategy": "pct", "seed": 1,
           "trace": None,
           "hazards": [{"kind": "ordering_hazard", "summary": "s", "participants": [
               {"rank": 1, "lane": "thread main", "op": "amax", "origin": "o", "step": 4}],
               "replay": "r"},
               {"kind": "data_race", "summary": "t", "participants": [], "replay": ""}]}
    doc.update(over)
    return doc


def test_a_report_after_log_lines_is_found_and_its_kinds_are_in_contract_order(fake_bin):
    text = "progress 10/10\n{not json\n" + __import__("json").dumps(report()) + "\n"
    parsed = program.parse_check_report(program.extract_json_object(text))
    assert parsed.hazard_kinds == ["data_race", "ordering_hazard"]
    assert parsed.hazards[0].participants[0].rank == 1
    assert parsed.timing is None


def test_timing_figures_are_read_when_present():
    parsed = program.parse_check_report(report(timing={
        "iteration_time_us": 10, "exposed_amax_latency_us": 1.5, "amax_queued_us": 0,
        "extra_comm_memory_bytes": 1024}))
    assert parsed.timing.iteration_time_us == 10.0
    assert parsed.timing.extra_comm_memory_bytes == 1024


@pytest.mark.parametrize("change, message", [
    ({"verdict": "maybe"}, "report.verdict"),
    ({"runs": "3"}, "report.runs: expected int"),
    ({"hazards": [{"summary": "no kind"}]}, r"report.hazards\[0\]: missing field 'kind'"),
    ({"timing": {"iteration_time_us": 1}}, "report.timing: missing field"),
])
def test_a_malformed_report_names_the_field(change, message):
    with pytest.raises(ValueError, match=message):
        program.parse_check_report(report(**change))


def test_output_without_a_json_object_is_an_error():
    with pytest.raises(ValueError, match="no JSON object"):
        program.extract_json_object("Segmentation fault\n[1, 2]\n")


def test_an_atomic_write_replaces_the_file_whole_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "sub" / "r.csv"
    atomic.write_text(target, "a\n")
    atomic.write_text(target, "b\n")
    assert target.read_text() == "b\n"
    assert [p.name for p in target.parent.iterdir()] == ["r.csv"]


def test_a_failed_atomic_write_keeps_the_old_file(tmp_path):
    target = tmp_path / "r.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("interrupted")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.csv"]


def test_a_cached_report_keeps_every_hazard_kind_but_not_every_hazard(fake_bin):
    from amaxharness.sweep.execute import KEPT_HAZARDS, _trimmed
    races = [{"kind": "data_race", "summary": str(i)} for i in range(500)]
    raw = report(hazards=races + [{"kind": "deadlock", "summary": "d"}])
    trimmed = _trimmed(raw)
    assert len(trimmed["hazards"]) == KEPT_HAZARDS + 1 and trimmed["hazards_total"] == 501
    assert program.parse_check_report(trimmed).hazard_kinds == ["data_race", "deadlock"]


def test_hazard_kinds_their_order_and_labels_come_from_the_program(fake_bin, monkeypatch):
    monkeypatch.setenv("FAKE_REVERSED_KINDS", "1")
    program._hazard_kinds_of.cache_clear()
    assert [k.name for k in program.hazard_kinds()][:2] == ["replica_divergence", "value_mismatch"]
    assert program.parse_check_report(report()).hazard_kinds == ["ordering_hazard", "data_race"]
    assert program.short_kind("data_race") == "race"
    assert program.short_kind("not_a_kind") == "not_a_kind"
    assert any(call[0] == "hazard-kinds" for call in fake_bin.calls())
    program._hazard_kinds_of.cache_clear()
