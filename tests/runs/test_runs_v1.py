"""The agent-run format and its reader: clear errors naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from kit.core.errors import InputError
from kit.core.schema import load_json_schema, validate_json
from kit.runs.model import Citation, parse_citation
from kit.runs.reader import read_runs
from kit.runs.v1 import run_from_dict, run_line, to_guard_record

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "grade"

GOOD = {
    "run_id": "r1",
    "task_id": "t1",
    "model": "m",
    "answer": "Aspirin helps (PMID:123).",
    "cited": ["PMID:123", "NCT01234567"],
    "tool_calls": [{"tool": "pubmed_search", "arguments": {"q": "aspirin"}, "status": "ok"}],
    "tools_enabled": True,
}


def _write(tmp_path: Path, lines: list[bytes | str | dict]) -> Path:
    p = tmp_path / "runs.jsonl"
    out = b""
    for x in lines:
        if isinstance(x, dict):
            x = json.dumps(x)
        out += (x.encode("utf-8") if isinstance(x, str) else x) + b"\n"
    p.write_bytes(out)
    return p


def test_example_file_reads_and_matches_json_schema() -> None:
    res = read_runs(EXAMPLES / "runs.jsonl")
    assert len(res.runs) == 5 and not res.skipped
    validator = jsonschema.Draft202012Validator(load_json_schema("agent_run"))
    for line in (EXAMPLES / "runs.jsonl").read_text().splitlines():
        assert not list(validator.iter_errors(json.loads(line)))


@pytest.mark.parametrize(
    ("mutate", "reason", "column"),
    [
        (lambda d: d.pop("answer"), "missing_field", "answer"),
        (lambda d: d.update(answer=7), "bad_field", "answer"),
        (lambda d: d.update(cited=["PMID123"]), "bad_field", "cited[0]"),
        (lambda d: d.update(tools_enabled="yes"), "bad_field", "tools_enabled"),
        (lambda d: d.update(tools_enabled=False), "bad_field", "tool_calls"),
        (lambda d: d.update(extra=1), "unknown_field", "extra"),
        (lambda d: d["tool_calls"][0].update(status="weird"), "bad_field", "tool_calls[0].status"),
        (lambda d: d.update(tokens={"prompt": -1}), "bad_field", "tokens.prompt"),
    ],
)
def test_bad_records_name_line_and_field(tmp_path: Path, mutate, reason: str, column: str) -> None:
    bad = json.loads(json.dumps(GOOD))
    mutate(bad)
    p = _write(tmp_path, [{**GOOD, "run_id": "ok"}, bad])
    with pytest.raises(InputError) as ei:
        read_runs(p)
    assert ei.value.reason == reason
    assert ei.value.where.row == 2 and ei.value.where.column == column
    assert str(p) in ei.value.message
    # the JSON Schema rejects the same record
    validator = jsonschema.Draft202012Validator(load_json_schema("agent_run"))
    if reason != "bad_field" or column != "tool_calls":  # cross-field rule only in code
        assert list(validator.iter_errors(bad))


def test_bad_json_non_utf8_duplicate_and_huge(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        [
            GOOD,
            "{not json",
            b'{"run_id": "\xff"}',
            GOOD,
            {**GOOD, "run_id": "big", "answer": "x" * 50},
        ],
    )
    with pytest.raises(InputError) as ei:
        read_runs(p)
    assert ei.value.reason == "bad_json" and ei.value.where.row == 2
    res = read_runs(p, max_answer_chars=30, on_error="skip")
    assert [r.run_id for r in res.runs] == ["r1"]
    assert [(s.line, s.reason) for s in res.skipped] == [
        (2, "bad_json"),
        (3, "bad_encoding"),
        (4, "duplicate_run_id"),
        (5, "answer_too_large"),
    ]
    assert "line 1" in res.skipped[2].message


def test_missing_file_and_blank_lines(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_runs(tmp_path / "nope.jsonl")
    p = _write(tmp_path, ["", GOOD, "   "])
    assert len(read_runs(p).runs) == 1


def test_roundtrip_and_guard_record() -> None:
    run = run_from_dict(GOOD)
    again = run_from_dict(json.loads(run_line(run)))
    assert again == run
    rec = to_guard_record(run, lambda c: "abstract" if c.id_type == "PMID" else None)
    assert rec["answer_id"] == "r1" and rec["answer"] == GOOD["answer"]
    assert rec["passages"] == {"PMID:123": "abstract"}
    assert rec["meta"]["unresolved"] == ["NCT01234567"]
    validate_json(rec, "guard_answers")  # the guard's own input schema accepts it


def test_parse_citation() -> None:
    assert parse_citation("PMID:21645374") == Citation("PMID", "21645374")
    assert parse_citation("NCT01234567") == Citation("NCT", "NCT01234567")
    assert parse_citation("NCT123") is None and parse_citation("21645374") is None


def test_citations_in_any_identifier_scheme(tmp_path: Path) -> None:
    cited = [
        "PMID:123",
        "https://doi.org/10.1056/NEJMoa2007764",
        "PMC5101",
        "arXiv:2101.00001v2",
        "nct01234567",
        "https://example.org/paper",
    ]
    p = _write(tmp_path, [{**GOOD, "cited": cited}])
    run = read_runs(p).runs[0]
    assert [(c.id_type, c.value) for c in run.cited] == [
        ("PMID", "123"),
        ("DOI", "10.1056/nejmoa2007764"),
        ("PMCID", "PMC5101"),
        ("ARXIV", "2101.00001"),
        ("NCT", "NCT01234567"),
        ("URL", "https://example.org/paper"),
    ]
    assert run.cited[3] == Citation("ARXIV", "2101.00001", 2) and run.cited[3].label == (
        "arXiv:2101.00001v2"
    )
    assert parse_citation(run.cited[1].label) == run.cited[1]  # labels read back
    validator = jsonschema.Draft202012Validator(load_json_schema("agent_run"))
    assert not list(validator.iter_errors({**GOOD, "cited": cited}))
