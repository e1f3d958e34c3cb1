"""The inspect_ai regression corpus (tests/runs/importers/harness_corpus.py): logs written by inspect_ai's
own eval() at test time -- a scripted agent with a PubMed-search-like tool, a sample whose tool
raises, a sample that meets the message limit, 2 epochs, the task run twice into one folder --
imported with `kit import inspect-ai` and audited with `kit audit`.

Every expected count is written down by hand in harness_corpus.py (16 runs: 8 ok, 4 error, 4
limit). Fast suite: measured on this shared 2-core machine, the two evals 4-7 s, each import
of the folder about 3 s, the audit 8-11 s (the module 19-25 s in all).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from harness_corpus import (
    ANSWERS,
    EPOCHS,
    EXPECTED_CITED,
    EXPECTED_PER_LOG,
    MESSAGE_LIMIT,
    OUTAGE_MESSAGE,
    QUESTIONS,
    write_inspect_corpus,
)

from kit.cli import cli
from kit.core.schema import read_table, validate_json
from kit.runs.reader import read_runs

pytest.importorskip("inspect_ai")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inspect_corpus") / "logs"
    logs = write_inspect_corpus(folder, runs=2)
    assert len(logs) == 2 and all(p.parent == folder for p in logs)
    return folder


def _summary(output: str) -> dict[str, str]:
    head, row = output.strip().splitlines()[-2:]
    return dict(zip(head.split(","), row.split(","), strict=True))


def _import(source: Path, out: Path) -> dict[str, str]:
    r = CliRunner().invoke(
        cli, ["import", "inspect-ai", str(source), "--out", str(out), "--format", "csv"]
    )
    assert r.exit_code == 0, r.output
    return _summary(r.output)


def test_a_folder_of_two_runs_of_one_task_imports_with_unique_deterministic_ids(
    corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "runs.jsonl"
    s = _import(corpus, out)
    n = 2 * len(QUESTIONS) * EPOCHS  # 16, by hand
    assert (s["samples"], s["written"]) == (str(n), str(n))
    assert (s["failed"], s["cancelled"]) == ("4", "4")
    runs = read_runs(out).runs
    assert len({r.run_id for r in runs}) == n
    # the log's own ids are kept: task_id and metadata.sample_id are the sample id
    assert Counter(r.task_id for r in runs) == {k: 2 * EPOCHS for k in QUESTIONS}
    assert all(r.metadata["sample_id"] == r.task_id for r in runs)
    assert len({r.metadata["eval_id"] for r in runs}) == 2
    assert Counter(r.metadata["epoch"] for r in runs) == {1: n // 2, 2: n // 2}
    again = tmp_path / "again.jsonl"
    _import(corpus, again)
    assert again.read_bytes() == out.read_bytes()  # deterministic


def test_each_run_carries_its_fate_from_the_harness(corpus: Path, tmp_path: Path) -> None:
    [one] = sorted(corpus.iterdir())[:1]
    out = tmp_path / "runs.jsonl"
    s = _import(one, out)
    assert (s["written"], s["failed"], s["cancelled"]) == ("8", "2", "2")
    runs = read_runs(out).runs
    assert Counter(r.status for r in runs) == EXPECTED_PER_LOG
    for r in runs:
        if r.task_id in ANSWERS:
            assert r.status == "ok" and r.completed and r.error is None and r.limit is None
            assert r.answer == ANSWERS[r.task_id]
            assert [c.label for c in r.cited] == EXPECTED_CITED[r.task_id]
            [call] = r.tool_calls
            assert call.status == "ok" and "DOI: 10.9999/synthetic" in (call.response_text or "")
        elif r.task_id == "q_outage":
            assert r.status == "error" and r.failed and OUTAGE_MESSAGE in (r.error or "")
            assert r.claims == () and r.cited == ()  # the placeholder is not an answer
            assert r.status_detail == r.error
        else:
            assert r.task_id == "q_loop" and r.status == "limit" and not r.failed
            assert (r.limit, r.limit_value) == ("message", float(MESSAGE_LIMIT))
            assert r.status_detail == f"message limit {MESSAGE_LIMIT}"
            assert r.claims == () and r.cited == () and r.error is None
            assert len(r.tool_calls) >= 2  # it kept searching
    raw = [json.loads(x) for x in out.read_text().splitlines()]
    assert Counter(x["status"] for x in raw) == EXPECTED_PER_LOG
    limited = [x for x in raw if x["status"] == "limit"]
    assert all(x["limit"]["type"] == "message" for x in limited)
    assert all(x["limit"]["value"] == MESSAGE_LIMIT for x in limited)


def test_audit_counts_unfinished_runs_apart_from_non_attempts(
    corpus: Path, registry_raw: Path, tmp_path: Path
) -> None:
    from tests.guard.tiny_model import build_tiny_cross_encoder

    runs = tmp_path / "runs.jsonl"
    _import(corpus, runs)
    out = tmp_path / "audit"
    args = ["audit", str(runs), "--out", str(out), "--raw", str(registry_raw), "--quiet"]
    args += ["--verifier", str(build_tiny_cross_encoder(tmp_path / "tiny")), "--n-cal", "10"]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    said = "8 of 16 runs did not finish in their harness (4 errored, 4 cancelled by a limit)"
    assert said in r.output

    table = read_table(out / "runs.csv", "audit_runs")
    assert len(table) == 16
    assert table["status"].value_counts().to_dict() == {"ok": 8, "error": 4, "limit": 4}
    unfinished = table[table["status"] != "ok"]
    assert not unfinished["non_attempt"].any() and not unfinished["zero_tool"].any()
    assert (unfinished["n_cited"] == 0).all()
    errored = table[table["status"] == "error"]
    assert errored["status_detail"].str.contains(OUTAGE_MESSAGE).all()
    limited = table[table["status"] == "limit"]
    assert (limited["status_detail"] == f"message limit {MESSAGE_LIMIT}").all()
    finished = table[table["status"] == "ok"]
    assert (finished["n_cited"] == 1).all() and not finished["non_attempt"].any()

    cites = read_table(out / "citations.csv", "audit_citations")
    assert len(cites) == 8  # one citation per finished run; none from a placeholder
    assert set(cites["run_id"]) == set(finished["run_id"])

    summary = json.loads((out / "summary.json").read_text())
    validate_json(summary, "audit_summary", "summary.json")
    assert summary["counts"]["status"] == {"ok": 8, "error": 4, "limit": 4}
    assert len(summary["unfinished_runs"]) == 8
    h = {m["metric"]: m for m in summary["headline"]}
    assert (h["error_rate"]["k"], h["error_rate"]["n"]) == (4, 16)
    assert (h["limit_rate"]["k"], h["limit_rate"]["n"]) == (4, 16)
    assert (h["non_attempt_rate"]["k"], h["non_attempt_rate"]["n"]) == (0, 8)
    assert (h["cite_rate"]["k"], h["cite_rate"]["n"]) == (8, 8)

    page = (out / "report.html").read_text()
    assert "<b>4 errored</b>" in page and "<b>4 cancelled by a limit</b>" in page
    assert "id=unfinished-runs" in page and OUTAGE_MESSAGE in page and said in page
