"""Tool output cut by record, and title-only records (issue 36).

A search tool lists several records per response; every identifier of one record (PMID, PMCID,
DOI) must read that record's passage, whatever the layout, and a record with only a title is
``no_passage``, never a claim scored against a title. Ends with one `kit audit` of such a run
(tiny test verifier)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner, Result

from kit.audit.evidence import agent_read, response_segment
from kit.audit.flags import flag_citations
from kit.audit.records import split_records
from kit.cli import cli
from kit.core.schema import read_table, validate_json
from kit.grade.citation_audit import AgentRead, SupportRule, score_support
from kit.runs.model import Citation
from kit.runs.v2 import run_v2_from_dict

LACE = "Mitochondria move to the nucleus during developmental programmed cell death in lace plant."
SNELLEN = "Snellen charts overestimate visual acuity compared with Landolt C."

# One paper set (construction-labelled), written the ways different tools write it. Paper 1:
# PMID 21645374, PMC3120501, doi 10.5555/lace.1 with an abstract; paper 2: PMID 9488747, doi
# 10.5555/snellen.2 with an abstract; paper 3: PMID 32445440, doi 10.5555/title.3, title only.
LAYOUTS = {
    "key-value, DOI after the abstract, blank line inside a record": f"""\
Found 3 results for "lace plant":

PMID: 21645374
PMCID: PMC3120501
Title: Lace plant leaves
Abstract: {LACE}

Second paragraph of the same abstract.
DOI: 10.5555/lace.1

PMID: 9488747
Title: Snellen and Landolt C
Abstract: {SNELLEN}
DOI: 10.5555/snellen.2

PMID: 32445440
Title: A paper listed by its title only
DOI: 10.5555/title.3
""",
    "key-value without blank lines": f"""\
PMID: 21645374
Title: Lace plant leaves
Abstract: {LACE}
PMCID: PMC3120501
DOI: 10.5555/lace.1
PMID: 9488747
Title: Snellen and Landolt C
Abstract: {SNELLEN}
DOI: 10.5555/snellen.2
PMID: 32445440
Title: A paper listed by its title only
DOI: 10.5555/title.3
""",
    "identifier-led lines": f"""\
[PMID 21645374] Lace plant leaves. {LACE} PMC3120501 doi:10.5555/lace.1
[PMID 9488747] Snellen and Landolt C. {SNELLEN} doi:10.5555/snellen.2
[PMID 32445440] A paper listed by its title only doi:10.5555/title.3
""",
    "numbered entries, identifiers last": f"""\
1. Lace plant leaves. Plant J. 2011.
   {LACE}
   PMID: 21645374 | PMCID: PMC3120501 | DOI: 10.5555/lace.1
2. Snellen and Landolt C. Eye. 1998.
   {SNELLEN}
   PMID: 9488747 | DOI: 10.5555/snellen.2
3. A paper listed by its title only. Journal. 2020.
   PMID: 32445440 | DOI: 10.5555/title.3
""",
    "markdown headings": f"""\
# Search results

## Lace plant leaves
PMID: 21645374 · PMC3120501 · doi:10.5555/lace.1

{LACE}

## Snellen and Landolt C
PMID: 9488747 · doi:10.5555/snellen.2

{SNELLEN}

## A paper listed by its title only
PMID: 32445440 · doi:10.5555/title.3
""",
    "JSON list of records": json.dumps(
        {
            "count": 3,
            "results": [
                {
                    "pmid": "21645374",
                    "pmcid": "PMC3120501",
                    "title": "Lace plant leaves",
                    "abstract": LACE,
                    "doi": "10.5555/lace.1",
                    "authors": ["A B", "C D"],
                },
                {
                    "pmid": 9488747,
                    "title": "Snellen and Landolt C",
                    "abstract": SNELLEN,
                    "doi": "10.5555/snellen.2",
                },
                {
                    "pmid": "32445440",
                    "title": "A paper listed by its title only",
                    "abstract": "",
                    "doi": "10.5555/title.3",
                },
            ],
        }
    ),
    "JSON lines": "\n".join(
        json.dumps(r)
        for r in (
            {
                "pmid": 21645374,
                "ids": {"pmc": "PMC3120501", "doi": "10.5555/lace.1"},
                "title": "Lace plant leaves",
                "snippet": LACE,
            },
            {
                "pmid": 9488747,
                "ids": {"doi": "10.5555/snellen.2"},
                "title": "Snellen and Landolt C",
                "snippet": SNELLEN,
            },
            {
                "pmid": 32445440,
                "ids": {"doi": "10.5555/title.3"},
                "title": "A paper listed by its title only",
            },
        )
    ),
    "JSON records keyed by id, nested authors": json.dumps(
        {
            "header": {"tool": "fetch", "version": 2},
            "result": {
                "uids": ["21645374", "9488747", "32445440"],
                "21645374": {
                    "pmid": "21645374",
                    "title": "Lace plant leaves",
                    "authors": [{"name": "Alice Smith"}, {"name": "Bob Jones"}],
                    "articleids": [
                        {"idtype": "pmc", "value": "PMC3120501"},
                        {"idtype": "doi", "value": "10.5555/lace.1"},
                    ],
                    "abstract": {"text": LACE},
                },
                "9488747": {
                    "pmid": "9488747",
                    "title": "Snellen and Landolt C",
                    "articleids": [{"idtype": "doi", "value": "10.5555/snellen.2"}],
                    "abstract": {"text": SNELLEN},
                },
                "32445440": {
                    "pmid": "32445440",
                    "title": "A paper listed by its title only",
                    "authors": [{"name": "Carol Dunn"}, {"name": "Dan Evans"}],
                    "articleids": [{"idtype": "doi", "value": "10.5555/title.3"}],
                },
            },
        }
    ),
    "separator lines": f"""\
Title: Lace plant leaves
IDs: PMID 21645374, PMC3120501, doi:10.5555/lace.1
Summary: {LACE}
---
Title: Snellen and Landolt C
IDs: PMID 9488747, doi:10.5555/snellen.2
Summary: {SNELLEN}
---
Title: A paper listed by its title only
IDs: PMID 32445440, doi:10.5555/title.3
""",
}

PAPERS = {
    "lace": [Citation("PMID", "21645374"), Citation("PMCID", "PMC3120501"),
             Citation("DOI", "10.5555/lace.1")],
    "snellen": [Citation("PMID", "9488747"), Citation("DOI", "10.5555/snellen.2")],
    "title": [Citation("PMID", "32445440"), Citation("DOI", "10.5555/title.3")],
}  # fmt: skip


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_identifiers_of_one_record_read_the_same_record(layout: str) -> None:
    text = LAYOUTS[layout]
    recs = [r for r in split_records(text) if r.keys]
    assert len(recs) == 3, [r.text for r in recs]
    for paper, own in (("lace", LACE), ("snellen", SNELLEN)):
        segments = {c: response_segment(text, c) for c in PAPERS[paper]}
        first = segments[PAPERS[paper][0]]
        assert first is not None and own in first, (paper, first)
        assert all(s == first for s in segments.values()), segments  # PMID, PMCID, DOI alike
        other = SNELLEN if paper == "lace" else LACE
        assert other not in first  # no leak from the neighbouring record
    by_key = {k: r.passage for r in recs for k in r.keys}
    assert by_key[("PMID", "21645374")] and by_key[("PMID", "9488747")]
    assert by_key[("PMID", "32445440")] is False and by_key[("DOI", "10.5555/title.3")] is False


def _run(text: str) -> object:
    return run_v2_from_dict(
        {
            "format_version": 2, "run_id": "r", "task_id": "t", "model": "m",
            "answer": "A claim (PMID: 21645374).",
            "tool_calls": [{"tool": "search", "arguments": {"q": "x"}, "response_text": text}],
        }
    )  # fmt: skip


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_title_only_record_is_read_without_a_passage(layout: str) -> None:
    run = _run(LAYOUTS[layout])
    for c in PAPERS["title"]:
        assert agent_read(run, c) == AgentRead("", (0,))  # read, nothing to verify against
    read = agent_read(run, PAPERS["lace"][2])
    assert read is not None and LACE in read.text and read.calls == (0,)


class _Fixed:
    """A scorer giving one fixed score per passage (records what it was asked)."""

    def __init__(self) -> None:
        self.passages: list[str] = []

    def score(self, claims: list[str], passages: list[str]) -> np.ndarray:
        self.passages += list(passages)
        return np.full(len(passages), 0.05)


def test_no_passage_is_a_status_never_a_score_against_a_title() -> None:
    rows = pd.DataFrame(
        {
            "run_id": ["a"] * 4,
            "citation": ["PMID:1", "PMID:2", "PMID:3", "PMID:4"],
            "id_type": ["PMID"] * 4,
            "value": ["1", "2", "3", "4"],
            "claim": ["c1", "c2", "c3", "c4"],
            "l1": ["unchecked", "found", "found", "notfound"],
        }
    )
    read = [AgentRead("", (0,), "medline"), AgentRead("", (1,), "json"), None, AgentRead("", (0,))]
    scorer = _Fixed()
    out = score_support(rows, scorer, lambda _t, v: {"2": "corpus text"}.get(v), RULE, read)
    assert list(out["evidence"]) == ["no_passage", "corpus", "none", "none"]
    assert list(out["evidence_calls"]) == ["0", "", "", ""]
    assert list(out["record_format"]) == ["medline", "", "", ""]  # only where a read decided
    assert scorer.passages == ["corpus text"]  # no title, no empty text was ever scored
    assert out["support_score"].isna().tolist() == [True, False, True, True]
    flagged = flag_citations(out, tau=0.5)
    assert list(flagged["flag_reason"]) == [
        "no_passage",  # unchecked, only a title read
        "score_at_or_below_tau",  # the corpus passage decided
        "no_passage",  # found, no text anywhere
        "notfound",
    ]


RULE = SupportRule(0.84, 0.80)


# ----------------------------------------------------------------------------- kit audit


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.guard.tiny_model import build_tiny_cross_encoder

    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "verifier")


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_audit_scores_a_records_identifiers_alike_and_reports_no_passage(
    tiny: Path, registry_raw: Path, tmp_path: Path
) -> None:
    search = LAYOUTS["key-value, DOI after the abstract, blank line inside a record"]
    search = search.replace(f"Abstract: {SNELLEN}\n", "")  # paper 2: a title only here too
    answer = (
        "Mitochondria move to the nucleus in lace plant PCD [1], as its DOI record says "
        "(doi:10.5555/lace.1). Snellen charts overestimate acuity [2]. A third paper agrees "
        "(https://pubmed.ncbi.nlm.nih.gov/32445440/).\n\nReferences\n"
        "1. Lace plant leaves. https://pubmed.ncbi.nlm.nih.gov/21645374/\n"
        "2. Snellen and Landolt C. https://www.ncbi.nlm.nih.gov/pubmed/9488747\n"
    )
    run = {
        "format_version": 2, "run_id": "r1", "task_id": "t1", "model": "m", "answer": answer,
        "tool_calls": [{"tool": "search", "arguments": {"q": "lace"}, "response_text": search}],
    }  # fmt: skip
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(run) + "\n")
    out = tmp_path / "audit"
    r = _invoke(
        "audit", str(runs), "--out", str(out), "--n-cal", "10", "--raw", str(registry_raw),
        "--verifier", str(tiny), "--quiet", "--cache-dir", str(tmp_path / "scores"),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    cites = read_table(out / "citations.csv", "audit_citations").set_index("citation")
    # the PubMed links of the References list are PMIDs, resolved by the PubMedQA corpus
    assert cites.loc["PMID:21645374", "l1"] == "found"
    assert cites.loc["PMID:9488747", "l1"] == "found"
    # the PMID and the DOI of one record are scored against the same record text
    pmid, doi = cites.loc["PMID:21645374"], cites.loc["doi:10.5555/lace.1"]
    assert (pmid["evidence"], doi["evidence"]) == ("tool_response", "tool_response")
    assert pmid["claim"] == doi["claim"]  # one sentence cites both
    assert pmid["tool_score"] == pytest.approx(doi["tool_score"], abs=1e-6)
    assert doi["evidence_calls"] == pmid["evidence_calls"] == "0"
    assert doi["record_format"] == pmid["record_format"] == "key-value"  # how it was read
    assert cites.loc["PMID:9488747", "record_format"] is pd.NA or pd.isna(
        cites.loc["PMID:9488747", "record_format"]
    )  # the corpus decided: no tool record format
    # a title-only record: the corpus passage decides where there is one ...
    assert cites.loc["PMID:9488747", "evidence"] == "corpus"
    # ... else the citation is no_passage, unscored, flagged for review
    third = cites.loc["PMID:32445440"]
    assert (third["l1"], third["evidence"], third["flag_reason"]) == (
        "unchecked",
        "no_passage",
        "no_passage",
    )
    assert np.isnan(third["support_score"]) and bool(third["flagged"])
    summary = json.loads((out / "summary.json").read_text())
    validate_json(summary, "audit_summary", "summary.json")
    assert summary["counts"]["evidence"]["no_passage"] == 1
    assert summary["counts"]["flagged"]["no_passage"] == 1
    assert any("1 read with a title and no passage" in n for n in summary["notes"])


def test_paragraph_fallback_keeps_continuations_and_cuts_where_the_paper_changes() -> None:
    text = (
        f"PMID 21645374 (doi:10.5555/lace.1): {LACE}\n\nA second paragraph on lace plants.\n\n"
        f"PMID 9488747: {SNELLEN} (PMID 9488747 again) doi:10.5555/snellen.2"
    )
    lace = response_segment(text, Citation("DOI", "10.5555/lace.1"))
    assert lace == response_segment(text, Citation("PMID", "21645374"))
    assert lace is not None and "second paragraph on lace" in lace and SNELLEN not in lace
    snellen = response_segment(text, Citation("DOI", "10.5555/snellen.2"))
    assert snellen == response_segment(text, Citation("PMID", "9488747"))
    assert snellen is not None and SNELLEN in snellen and LACE not in snellen
    one_line = f"PMID 1: {LACE} PMID 2: {SNELLEN}"
    assert response_segment(one_line, Citation("PMID", "2")) == f"PMID 2: {SNELLEN}"
