"""End to end (issue 16, "done when"): an inspect_ai log written by inspect_ai itself, imported
with `kit import inspect-ai`, audited with `kit audit`: the claims are checked against the tool
response the agent read.

The log is produced inside the test by inspect_ai's offline mockllm model: the agent calls a
search tool whose response lists two PubMed records, then answers citing one of them. The
verifier is the tiny random-weight cross-encoder of tests/guard/tiny_model.py, so the test
asserts which passage each claim was scored against, never how well.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from mock_inspect import write_mock_log

from kit.cli import cli
from kit.core.schema import read_table, validate_json

inspect_ai = pytest.importorskip("inspect_ai")

ANSWER = (
    "Mitochondria move on transvacuolar strands to surround the nucleus during programmed "
    "cell death in the lace plant (PMID: 21645374)."
)
SEARCH_TEXT = (
    "PMID: 21645374\nTitle: Mitochondrial dynamics in lace plant programmed cell death\n"
    "Mitochondria aggregate around the nucleus on transvacuolar strands.\n\n"
    "PMID: 9488747\nTitle: Landolt C and Snellen E acuity\nThe Snellen E overestimates acuity."
)


@pytest.fixture(scope="module")
def eval_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def pubmed_search():
        async def execute(query: str) -> str:
            """Search PubMed.

            Args:
                query: the search terms
            """
            return SEARCH_TEXT

        return execute

    outputs = [
        ModelOutput.for_tool_call("mockllm/model", "pubmed_search", {"query": "lace plant PCD"}),
        ModelOutput.from_content("mockllm/model", ANSWER),
    ]
    task = Task(
        dataset=[Sample(input="What do mitochondria do in lace plant PCD?", target="nucleus")],
        solver=[use_tools(pubmed_search()), generate()],
        scorer=includes(),
    )
    return write_mock_log(task, outputs, tmp_path_factory.mktemp("inspect_audit") / "eval")


def test_audit_of_an_inspect_log_checks_claims_against_what_the_agent_read(
    eval_log: Path, registry_raw: Path, tmp_path: Path
) -> None:
    from tests.guard.tiny_model import build_tiny_cross_encoder

    runs = tmp_path / "runs.jsonl"
    r = CliRunner().invoke(cli, ["import", "inspect-ai", str(eval_log), "--out", str(runs)])
    assert r.exit_code == 0, r.output
    verifier = build_tiny_cross_encoder(tmp_path / "tiny")
    out = tmp_path / "audit"
    args = ["audit", str(runs), "--out", str(out), "--raw", str(registry_raw)]
    args += ["--verifier", str(verifier), "--n-cal", "10", "--quiet"]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "L2 evidence: 1 against the tool response the agent read" in r.output

    cites = read_table(out / "citations.csv", "audit_citations")
    [row] = cites.to_dict("records")
    assert (row["citation"], row["l1"], row["claim_no"]) == ("PMID:21645374", "found", 1)
    assert row["claim"].startswith("Mitochondria move on transvacuolar strands")
    assert row["evidence"] == "tool_response" and row["evidence_calls"] == "0"
    assert row["support_score"] == row["tool_score"]  # the agent-read passage decided L2
    assert row["corpus_score"] == row["corpus_score"]  # the corpus passage was scored too
    assert row["l2"] in ("yes", "partial", "no")

    # the score behind L2 is the verifier's score of the claim against the record the agent
    # read for PMID 21645374 (not the other record, not the corpus abstract)
    from kit.guard.verifiers.load import load_verifier

    v = load_verifier(verifier)
    record = SEARCH_TEXT.split("\n\n")[0]
    [expected] = v.score([row["claim"]], [record])
    assert abs(row["tool_score"] - float(expected)) < 1e-6

    summary = json.loads((out / "summary.json").read_text())
    validate_json(summary, "audit_summary", "summary.json")
    assert summary["counts"]["evidence"] == {
        "tool_response": 1,
        "corpus": 0,
        "no_passage": 0,
        "none": 0,
    }
    assert summary["counts"]["claims"] == 1 and summary["counts"]["claims_citing"] == 1
    note = next(n for n in summary["notes"] if n.startswith("L2 evidence:"))
    assert "1 citation(s) scored against the tool response the agent read" in note
    page = (out / "report.html").read_text()
    assert "scored against the tool response the agent read" in page
