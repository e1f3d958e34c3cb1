"""`kit audit --corpus`: declared coverage decides notfound vs unchecked (issue 14, "Done when")."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from audit_helpers import invoke

from kit.corpus.synthetic import SynthRecord, write_medline

IN_SAMPLE = "21645374"  # a PubMedQA PQA-L item
REAL_OUTSIDE = "32445440"  # a real PMID (NEJM 2020 trial), not among the 1,000 PubMedQA papers
ABSENT_IN_RANGE = "32445999"  # inside the test corpus's declared complete range, absent from it
DOI_URL = "https://doi.org/10.5555/Stand-In.1"  # the stand-in record's DOI, another spelling


def _run(run_id: str, pmid: str, cited: str | None = None) -> dict:
    cited = cited or f"PMID:{pmid}"
    return {
        "run_id": run_id,
        "task_id": f"t-{run_id}",
        "model": "m",
        "answer": f"Mitochondria move to the nucleus during programmed cell death ({cited}).",
        "cited": [cited],
        "tool_calls": [{"tool": "pubmed_fetch", "arguments": {"pmid": pmid}, "status": "ok"}],
        "tools_enabled": True,
    }


@pytest.fixture(scope="module")
def runs_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("corpus_runs")
    p = d / "runs.jsonl"
    rows = [_run("r1", IN_SAMPLE), _run("r2", REAL_OUTSIDE), _run("r3", ABSENT_IN_RANGE)]
    rows.append(_run("r4", REAL_OUTSIDE, DOI_URL))
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _audit(
    runs: Path, verifier: Path, raw: Path, out: Path, *extra: str
) -> tuple[dict, pd.DataFrame]:
    r = invoke(
        "audit", str(runs), "--raw", str(raw), "--verifier", str(verifier), "--variant", "int8",
        "--n-cal", "20", "--out", str(out), "--quiet", *extra,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    cites = pd.read_csv(out / "citations.csv", dtype=str, keep_default_na=False)
    return summary, cites.set_index("value")


def test_real_pmid_outside_the_pubmedqa_sample_is_unchecked(
    runs_file: Path, audit_verifier: Path, registry_raw: Path, tmp_path: Path
) -> None:
    summary, cites = _audit(runs_file, audit_verifier, registry_raw, tmp_path / "a")
    assert cites.loc[IN_SAMPLE, "l1"] == "found" and cites.loc[IN_SAMPLE, "corpus"] == "pubmedqa"
    for v in (REAL_OUTSIDE, ABSENT_IN_RANGE, "10.5555/stand-in.1"):
        assert (cites.loc[v, "l1"], cites.loc[v, "corpus"], cites.loc[v, "flagged"]) == (
            "unchecked",
            "",
            "False",
        )
    head = {m["metric"]: m for m in summary["headline"]}
    assert (head["fabrication_rate"]["k"], head["fabrication_rate"]["n"]) == (0, 1)
    assert (head["unchecked_citations"]["k"], head["unchecked_citations"]["n"]) == (3, 4)
    assert summary["counts"]["l1"] == {"found": 1, "notfound": 0, "transient": 0, "unchecked": 3}
    assert summary["counts"]["flagged"]["notfound"] == 0
    cov = summary["corpus"]["corpora"][0]["coverage"]
    assert summary["corpus"]["closed_world"] is False and cov[0]["kind"] == "sample"
    runs = pd.read_csv(tmp_path / "a" / "runs.csv").set_index("run_id")
    assert list(runs["n_unchecked"]) == [0, 1, 1, 1] and list(runs["n_notfound"]) == [0, 0, 0, 0]
    page = (tmp_path / "a" / "report.html").read_text()
    assert "unchecked</b>, never fabricated" in page


def test_several_corpora_in_a_stated_order(
    runs_file: Path, audit_verifier: Path, registry_raw: Path, tmp_path: Path
) -> None:
    pubmed = tmp_path / "pubmed"
    write_medline(
        pubmed / "pubmed26n0001.xml",
        [
            SynthRecord(
                int(REAL_OUTSIDE),
                "SYNTHETIC stand-in",
                (("", "mitochondria nucleus"),),
                doi="10.5555/STAND-IN.1",
            )
        ],
    )
    root = tmp_path / "corpora"
    r = invoke(
        "corpus", "build", "med", "--medline", str(pubmed), "--licence", "synthetic",
        "--coverage", "PMID=complete:32445000-32446000;synthetic test range",
        "--corpus-root", str(root), "--quiet",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    summary, cites = _audit(
        runs_file, audit_verifier, registry_raw, tmp_path / "b",
        "--corpus", "pubmedqa,med", "--corpus-root", str(root),
    )  # fmt: skip
    got = {v: (cites.loc[v, "l1"], cites.loc[v, "corpus"]) for v in cites.index}
    assert cites.loc["10.5555/stand-in.1", "id_type"] == "DOI"
    assert got == {
        "10.5555/stand-in.1": ("found", "med"),  # the DOI alias of the stand-in's PMID
        IN_SAMPLE: ("found", "pubmedqa"),
        REAL_OUTSIDE: ("found", "med"),  # resolved by the second corpus, scored on its text
        ABSENT_IN_RANGE: ("notfound", "med"),  # absent inside med's declared complete range
    }
    assert cites.loc[REAL_OUTSIDE, "support_score"] != ""
    assert summary["corpus"]["order"] == ["pubmedqa", "med"]
    head = {m["metric"]: m for m in summary["headline"]}
    assert (head["fabrication_rate"]["k"], head["fabrication_rate"]["n"]) == (1, 4)
    # the DOI is scored (L2) against the text of the record it resolved to, as its PMID is
    assert cites.loc["10.5555/stand-in.1", "support_score"] != ""
    assert head["unchecked_citations"]["k"] == 0
    r = invoke(
        "audit", str(runs_file), "--raw", str(registry_raw), "--verifier", str(audit_verifier),
        "--out", str(tmp_path / "c"), "--corpus", "pubmedqa,nope", "--corpus-root", str(root),
    )  # fmt: skip
    assert r.exit_code == 2 and "no corpus 'nope'" in r.output
