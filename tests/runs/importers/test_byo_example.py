"""The README's bring-your-own-agent example (examples/byo/) is consistent: the committed
inspect_ai log (written by examples/byo/make_log.py) fetched and cites the committed documents."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.corpus.identifiers import canonical
from kit.runs.reader import read_runs

pytest.importorskip("inspect_ai")

BYO = Path(__file__).resolve().parents[3] / "examples" / "byo"


def test_byo_log_reads_and_cites_the_example_documents(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    r = CliRunner().invoke(
        cli, ["import", "inspect-ai", str(BYO / "logs" / "byo-example.eval"), "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    runs = {run.task_id: run for run in read_runs(out).runs}
    assert sorted(runs) == ["q1", "q2", "q3"]
    docs = {
        canonical(p.stem, "doi").value: p.read_text(encoding="utf-8")
        for p in (BYO / "docs").glob("*.txt")
    }
    assert len(docs) == 4 and all(t.startswith("SYNTHETIC") for t in docs.values())
    fetched = [call for run in runs.values() for call in run.tool_calls]
    assert [c.arguments["doi"] for c in fetched] == ["10.5555/byo.0001", "10.5555/byo.0004"]
    for c in fetched:  # the tool returned the committed document's text, byte for byte
        assert c.response_text == docs[c.arguments["doi"]]
    cited = sorted(canonical(c.value, "doi").value for run in runs.values() for c in run.cited)
    assert cited == sorted([*docs, "10.5555/byo.0099"])  # one DOI on purpose in no corpus
    assert all(run.model == "mockllm/model" for run in runs.values())
