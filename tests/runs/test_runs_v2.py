"""Run format v2: schema, claims given or extracted, v1 still read, errors naming line and field."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core.errors import InputError
from kit.core.schema import load_json_schema
from kit.grade import reader as grade_reader  # runs are read by kit.runs.reader alone
from kit.runs.extract import identifiers_in, split_reference_section
from kit.runs.reader import read_runs
from kit.runs.v2 import run_v2_from_dict

ROOT = Path(__file__).resolve().parents[2]
V2_EXAMPLE = ROOT / "examples" / "runs" / "runs.v2.jsonl"
V1_EXAMPLE = ROOT / "examples" / "grade" / "runs.jsonl"

BASE = {"format_version": 2, "run_id": "r1", "task_id": "t1", "model": "m"}


def _write(tmp_path: Path, rows: list[dict | str]) -> Path:
    p = tmp_path / "runs.jsonl"
    p.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return p


def test_example_matches_schema_and_reads() -> None:
    validator = jsonschema.Draft202012Validator(load_json_schema("agent_run.v2"))
    lines = [json.loads(x) for x in V2_EXAMPLE.read_text().splitlines() if x.strip()]
    for obj in lines:
        assert list(validator.iter_errors(obj)) == []
    runs = {r.run_id: r for r in read_runs(V2_EXAMPLE).runs}
    assert set(runs) == {o["run_id"] for o in lines}
    explicit = runs["v2-explicit"]
    assert explicit.format_version == 2
    assert [c.label for c in explicit.cited] == ["PMID:21645374", "doi:10.1186/1471-2229-11-102"]
    assert explicit.claims[0].cites == ("PMID:21645374", "doi:10.1186/1471-2229-11-102")
    assert explicit.tool_calls[0].response_text.startswith("Programmed cell death")
    assert explicit.scores == {"accuracy": 1.0} and explicit.metadata["epoch"] == 1
    numeric = runs["v2-numeric"]
    assert [c.cites for c in numeric.claims] == [("PMID:9488747",), (), ("NCT01234567",)]
    assert "[10, 20] mg" in numeric.claims[1].text  # an interval, not a citation
    assert numeric.tool_calls[0].response_ref == "responses.jsonl#9488747"
    assert [c.label for c in runs["v2-author-year"].cited] == ["doi:10.1186/1471-2229-11-102"]
    failed = runs["v2-failed"]
    assert failed.failed and failed.error == "tool server timed out" and failed.answer == ""


def test_v1_and_v2_lines_mix_and_v1_reads_as_before() -> None:
    v1 = read_runs(V1_EXAMPLE)
    assert not hasattr(grade_reader, "read_runs")  # one runs reader, in kit.runs
    assert all(r.format_version == 1 and r.claims == () for r in v1.runs)
    assert [c.label for c in v1.runs[0].cited] == ["PMID:21645374"]


def test_mixed_file(tmp_path: Path) -> None:
    v1_line = V1_EXAMPLE.read_text().splitlines()[0]
    p = _write(tmp_path, [v1_line, {**BASE, "run_id": "v2", "answer": "A (PMID: 7)."}])
    runs = read_runs(p).runs
    assert [r.format_version for r in runs] == [1, 2]
    assert [c.label for c in runs[1].cited] == ["PMID:7"]


def test_claims_extracted_with_reference_list_and_unresolved_marker() -> None:
    answer = (
        "Aspirin lowers risk [1]. See ref [10] of the trial. Coffee is fine [2, 3].\n\n"
        "**References:**\n"
        "1. Smith J et al. (2020) Aspirin. PMID: 123\n"
        "2. Lee K (2019). Coffee.\n   https://doi.org/10.1000/coffee.\n"
    )
    run = run_v2_from_dict({**BASE, "answer": answer})
    assert [(c.text, c.cites, c.unresolved) for c in run.claims] == [
        ("Aspirin lowers risk.", ("PMID:123",), ()),
        ("See ref [10] of the trial.", (), ()),
        ("Coffee is fine.", ("doi:10.1000/coffee",), ("3",)),
    ]
    assert [c.label for c in run.cited] == ["PMID:123", "doi:10.1000/coffee"]


def test_citation_keys_author_year_and_declared_numeric() -> None:
    run = run_v2_from_dict(
        {
            **BASE,
            "answer": "Aspirin helps (Smith et al., 2020). Trials used [4].",
            "citations": [
                {"id": "10.1000/aspirin", "scheme": "doi", "key": "Smith 2020"},
                {"id": "arXiv:2101.00001", "scheme": "arxiv"},
            ],
        }
    )
    assert [c.cites for c in run.claims] == [("doi:10.1000/aspirin",), ()]
    assert [c.label for c in run.cited] == ["doi:10.1000/aspirin", "arXiv:2101.00001"]
    declared = run_v2_from_dict({**BASE, "answer": "Trials used [4].", "markers": "numeric"})
    assert declared.claims[0].unresolved == ("4",)
    none = run_v2_from_dict({**BASE, "answer": "A (PMID: 1).", "markers": "none"})
    assert none.claims == () and none.cited == ()


def test_identifiers_in_keeps_strings_and_schemes() -> None:
    text = "PMID: 12 ; PMC345; doi:10.1000/x.y; NCT01234567; arXiv:2101.00001v2; https://a.org/p"
    assert identifiers_in(text) == [
        ("PMID: 12", "pmid"),
        ("PMC345", "pmcid"),
        ("10.1000/x.y", "doi"),
        ("NCT01234567", "nct"),
        ("arXiv:2101.00001v2", "arxiv"),
    ]
    assert identifiers_in("see https://example.org/paper.") == [
        ("https://example.org/paper", "url")
    ]
    body, refs = split_reference_section("No list here [1].")
    assert body == "No list here [1]." and refs == []


@pytest.mark.parametrize(
    ("record", "column", "reason"),
    [
        ({**BASE}, "<record>", "missing_field"),
        ({**BASE, "answer": "", "extra": 1}, "<record>", "unknown_field"),
        ({**BASE, "answer": 5}, "answer", "bad_field"),
        (
            {**BASE, "answer": "", "citations": [{"id": "abc", "scheme": "pmid"}]},
            "citations[0].id",
            "bad_field",
        ),
        (
            {**BASE, "answer": "", "citations": [{"id": "x", "scheme": "isbn"}]},
            "citations[0].scheme",
            "bad_field",
        ),
        (
            {**BASE, "answer": "", "claims": [{"text": "A.", "cites": ["PMID:1", "7"]}]},
            "claims[0].cites[1]",
            "unknown_citation",
        ),
        (
            {**BASE, "answer": "", "tools_enabled": False, "tool_calls": [{"tool": "s"}]},
            "tool_calls",
            "bad_field",
        ),
        (
            {**BASE, "answer": "", "tool_calls": [{"tool": "s", "status": "?"}]},
            "tool_calls[0].status",
            "bad_field",
        ),
        ({**BASE, "answer": "", "format_version": 3}, "format_version", "unknown_format_version"),
    ],
)
def test_errors_name_file_line_and_field(
    tmp_path: Path, record: dict, column: str, reason: str
) -> None:
    p = _write(tmp_path, [V1_EXAMPLE.read_text().splitlines()[0], record])
    with pytest.raises(InputError) as exc:
        read_runs(p)
    assert (exc.value.where.file, exc.value.where.row) == (str(p), 2)
    assert exc.value.where.column == column
    assert exc.value.reason == reason
    res = read_runs(p, on_error="skip")
    assert len(res.runs) == 1 and [s.line for s in res.skipped] == [2]


def test_cli_reads_v2_and_exits_2_on_a_bad_line(tmp_path: Path) -> None:
    ok = CliRunner().invoke(cli, ["grade", "runs", str(V2_EXAMPLE), "--format", "csv"])
    assert ok.exit_code == 0, ok.output
    assert "v2-numeric" in ok.output and "v2-failed" in ok.output
    p = _write(tmp_path, [{**BASE, "answer": "", "claims": [{"text": "A.", "cites": ["9"]}]}])
    bad = CliRunner().invoke(cli, ["grade", "runs", str(p)])
    assert bad.exit_code == 2
    assert "runs.jsonl, row 1" in bad.output
    assert "claims[0].cites[0]" in bad.output
    assert "Traceback" not in bad.output


# -- issue 36: the run's fate (status ok / error / limit) ------------------------------------


def test_a_missing_status_is_ok_and_old_files_read_as_before() -> None:
    run = run_v2_from_dict(BASE | {"answer": "Aspirin lowers risk (PMID: 123)."})
    assert (run.status, run.completed, run.failed, run.status_detail) == ("ok", True, False, "")
    assert [c.label for c in run.cited] == ["PMID:123"]
    assert run_v2_from_dict(BASE | {"answer": "x", "status": "ok"}).status == "ok"


@pytest.mark.parametrize(
    ("fate", "detail"),
    [
        ({"status": "error", "error": "tool server down"}, "tool server down"),
        ({"status": "limit", "limit": {"type": "message", "value": 6}}, "message limit 6"),
        ({"status": "limit", "limit": {"type": "time"}}, "time limit"),
    ],
)
def test_an_unfinished_run_is_kept_but_its_text_is_not_read(fate: dict, detail: str) -> None:
    obj = BASE | {
        "answer": "tool call for tool pubmed_search (PMID: 123) [1]",
        "citations": [{"id": "456", "scheme": "pmid", "key": "1"}],
        **fate,
    }
    run = run_v2_from_dict(obj)
    assert run.status == fate["status"] and not run.completed
    assert run.claims == () and run.cited == ()  # neither the answer's nor the list's
    assert run.status_detail == detail
    assert run.answer == obj["answer"]  # kept as logged


def test_status_limit_needs_the_limit_and_unknown_statuses_are_refused() -> None:
    with pytest.raises(InputError) as exc:
        run_v2_from_dict(BASE | {"answer": "", "status": "limit"}, "r.jsonl", 3)
    assert (exc.value.reason, exc.value.where.row, exc.value.where.column) == (
        "missing_field",
        3,
        "limit",
    )
    with pytest.raises(InputError) as exc:
        run_v2_from_dict(BASE | {"answer": "", "status": "cancelled"}, "r.jsonl", 4)
    assert exc.value.where.column == "status"
