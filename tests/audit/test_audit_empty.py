"""Empty results are results (issue 36): an audit of runs that cite nothing writes valid empty
tables, a summary and a report, exit 0; every table schema accepts a table without rows."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner, Result

from kit.cli import cli
from kit.core.schema import load_schema, read_table, schema_names, validate_frame, validate_json


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.guard.tiny_model import build_tiny_cross_encoder

    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "verifier")


def _uncited_runs(path: Path) -> Path:
    """A v1 run and a v2 run (with a tool call) whose answers cite nothing."""
    v1 = {
        "run_id": "v1", "task_id": "t1", "model": "m",
        "answer": "Mitochondria move to the nucleus during programmed cell death.",
        "cited": [], "tool_calls": [], "tools_enabled": True,
    }  # fmt: skip
    v2 = {
        "format_version": 2, "run_id": "v2", "task_id": "t2", "model": "m",
        "answer": "Visual acuity is overestimated by Snellen charts. No source given.",
        "tool_calls": [{"tool": "search", "arguments": {"q": "snellen"},
                        "response_text": "Snellen and Landolt C acuity compared."}],
    }  # fmt: skip
    path.write_text(json.dumps(v1) + "\n" + json.dumps(v2) + "\n")
    return path


def _fixed_columns(name: str) -> bool:
    """Schemas whose columns are all named (a regex column needs a realised name)."""
    return not any(col.regex for col in load_schema(name).columns.values())


@pytest.mark.parametrize("name", [n for n in schema_names() if _fixed_columns(n)])
def test_every_table_schema_accepts_zero_rows(name: str) -> None:
    columns = list(load_schema(name).columns)
    got = validate_frame(pd.DataFrame(columns=columns), name, f"empty {name}")
    assert len(got) == 0 and list(got.columns) == columns


def test_zero_citation_audit_writes_valid_empty_tables(
    tiny: Path, registry_raw: Path, tmp_path: Path
) -> None:
    runs = _uncited_runs(tmp_path / "runs.jsonl")
    out = tmp_path / "audit"
    r = _invoke(
        "audit", str(runs), "--out", str(out), "--n-cal", "10", "--raw", str(registry_raw),
        "--verifier", str(tiny), "--cache-dir", str(tmp_path / "scores"),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "no citation to audit" in r.output
    cites = read_table(out / "citations.csv", "audit_citations")
    assert len(cites) == 0
    runs_table = read_table(out / "runs.csv", "audit_runs")
    assert sorted(runs_table["run_id"]) == ["v1", "v2"]
    assert (runs_table["n_cited"] == 0).all()
    summary = json.loads((out / "summary.json").read_text())
    validate_json(summary, "audit_summary", "summary.json")
    assert summary["counts"]["citations"] == 0 and summary["counts"]["runs"] == 2
    head = {m["metric"]: m for m in summary["headline"]}
    assert head["fabrication_rate"]["n"] == 0 and head["fabrication_rate"]["estimate"] is None
    assert (out / "report.html").is_file()
    # the L1/L2 view of the same runs: an empty rows table and rates with n_cited 0
    rates, rows = tmp_path / "rates.csv", tmp_path / "rows.csv"
    g = _invoke(
        "grade", "audit-citations", str(runs), "--raw", str(registry_raw), "--verifier",
        str(tiny), "--cache-dir", str(tmp_path / "scores"), "--out", str(rates),
        "--citations-out", str(rows),
    )  # fmt: skip
    assert g.exit_code == 0, g.output
    assert len(pd.read_csv(rows)) == 0
    assert pd.read_csv(rates).set_index("by").loc["all", "n_cited"] == 0
