"""The audit of an inspect_ai log whose answers cite in every spelling (issue 36): the log is
written at test time by inspect_ai's own eval() with mockllm (tests/runs/importers/harness_spellings.py:
a scripted agent, a search tool printing PubMedQA records with the DOI last and a title-only
record, an erroring sample, a message-limit sample), imported with `kit import inspect-ai` and
audited with `kit audit` (PubMedQA corpus from the registry, the tiny random-weight verifier of
tests/guard/tiny_model.py -- so the test asserts which passage each claim was scored against and
every count, never how well the verifier judges).

Every expected number below is counted by hand from the answers in harness_spellings.py (the
comment beside each says from where), not read off a run of the code. Each test fails on the
code before the issue-36 fixes (commit 394df41). Fast suite: measured on this shared 2-core
machine, the eval + import + audit fixture about 5 s, the module 11-12 s under pytest.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from harness_spellings import (
    ANSWERS,
    BATH,
    CONTRADICTION,
    ENTEROSCOPY,
    LACE,
    MAMMO,
    MESSAGE_LIMIT,
    NEGATED_SENTENCE,
    OUTAGE_MESSAGE,
    PMC_UNREAD,
    PULL,
    QUESTIONS,
    SNELLEN,
    TITLE_ONLY,
    format_records,
    write_spellings_log,
)

from kit.cli import cli
from kit.core.schema import read_table, validate_json
from kit.runs.reader import read_runs

pytest.importorskip("inspect_ai")

DOI_PULL = f"doi:10.5555/{PULL}"

# --- by hand, from ANSWERS ------------------------------------------------------------------
# the identifiers each answer cites, in the order the v2 reader lists them (a References entry
# first, then first mention in the text)
EXPECTED_CITED = {
    "s_bracket": [f"PMID:{LACE}", f"PMID:{SNELLEN}"],  # [PMID: n]; pubmed.ncbi.nlm.nih.gov URL
    "s_legacy": [f"PMID:{BATH}", DOI_PULL],  # ncbi.nlm.nih.gov/pubmed URL; doi.org URL
    "s_same": [f"PMID:{PULL}", DOI_PULL],  # (PMID: n); the bare DOI, same sentence
    "s_unread": [f"PMID:{ENTEROSCOPY}", f"PMID:{TITLE_ONLY}", PMC_UNREAD],  # 3 markers
    "s_refs": [f"PMID:{MAMMO}"],  # [1] -> References entry 1, a PubMed URL
    "s_uncited": [],  # no identifier in the answer
}
# sentences of each answer (claims) and which of them cite something
EXPECTED_CLAIMS = {
    "s_bracket": (2, 2),  # "...lace plant [PMID]." / "<contradiction>, see <URL>."
    "s_legacy": (2, 2),  # "...urticaria (<legacy URL>)." / "...41 patients, <doi.org URL>."
    "s_same": (1, 1),  # one sentence holds both the PMID and the bare DOI
    "s_unread": (3, 3),  # three sentences, one marker each
    "s_refs": (1, 1),  # the References section is not a claim
    "s_uncited": (1, 0),  # one sentence, no marker
}
# (claim_no, citation) -> (l1, evidence): l1 found iff the PMID is a PubMedQA item (the corpus
# of a non-planted audit: a sample, so anything else is unchecked, never notfound); evidence
# tool_response iff the search response (call 0) holds a record naming it with an abstract,
# no_passage for the title-only record, corpus for a found PMID the agent never read, none else
EXPECTED_ROWS = {
    "s_bracket": {
        (1, f"PMID:{LACE}"): ("found", "tool_response"),  # record 1 of the response
        (2, f"PMID:{SNELLEN}"): ("found", "tool_response"),  # record 2 (the contradiction)
    },
    "s_legacy": {
        (1, f"PMID:{BATH}"): ("found", "tool_response"),  # record 3
        (2, DOI_PULL): ("unchecked", "tool_response"),  # record 4's DOI; no DOI corpus
    },
    "s_same": {
        (1, f"PMID:{PULL}"): ("found", "tool_response"),  # record 4
        (1, DOI_PULL): ("unchecked", "tool_response"),  # record 4 too (its last line)
    },
    "s_unread": {
        (1, f"PMID:{ENTEROSCOPY}"): ("found", "corpus"),  # PubMedQA, not in the response
        (2, f"PMID:{TITLE_ONLY}"): ("unchecked", "no_passage"),  # record 5, a title only
        (3, PMC_UNREAD): ("unchecked", "none"),  # in no response, no PMC corpus
    },
    "s_refs": {
        (1, f"PMID:{MAMMO}"): ("found", "corpus"),  # PubMedQA, not in the response
    },
    "s_uncited": {},
}
N_CITATIONS = 10  # 2 + 2 + 2 + 3 + 1 + 0 rows (one per claim x identifier it cites)
BY_SCHEME = {"PMID": 7, "DOI": 2, "PMCID": 1}  # PMID 2+1+1+2+1; DOI s_legacy, s_same; PMC s_unread
L1 = {"found": 6, "notfound": 0, "transient": 0, "unchecked": 4}  # 6 PubMedQA PMIDs; 2 DOI,
# the synthetic PMID and the PMC id unchecked; nothing notfound (PubMedQA declares a sample)
EVIDENCE = {"tool_response": 6, "corpus": 2, "no_passage": 1, "none": 1}  # from EXPECTED_ROWS
STATUS = {"ok": 6, "error": 1, "limit": 1}  # 6 answering samples, s_outage, s_loop
N_CLAIMS, N_CITING = 10, 9  # sums of EXPECTED_CLAIMS


@dataclass(frozen=True)
class Audited:
    log: Path
    records: list[dict[str, str]]
    runs: Path
    out: Path
    verifier: Path
    import_output: str
    audit_output: str


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, registry_raw: Path) -> Audited:
    from tests.guard.tiny_model import build_tiny_cross_encoder

    d = tmp_path_factory.mktemp("inspect_spellings")
    log, records = write_spellings_log(d / "logs", registry_raw)
    runs = d / "runs.jsonl"
    r = CliRunner().invoke(
        cli, ["import", "inspect-ai", str(log), "--out", str(runs), "--format", "csv"]
    )
    assert r.exit_code == 0, r.output
    imported = r.output
    verifier = build_tiny_cross_encoder(d / "tiny")
    out = d / "audit"
    args = ["audit", str(runs), "--out", str(out), "--raw", str(registry_raw), "--quiet"]
    args += ["--verifier", str(verifier), "--n-cal", "10"]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return Audited(log, records, runs, out, verifier, imported, r.output)


def _by_task(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {k: g for k, g in frame.groupby("task_id")}


def test_the_tool_prints_pubmedqa_records_doi_last_and_a_title_only_record(
    audited: Audited,
) -> None:
    recs = audited.records
    assert [r["PMID"] for r in recs] == [LACE, SNELLEN, BATH, PULL, TITLE_ONLY]
    assert all(list(r) == ["PMID", "Title", "Abstract", "DOI"] for r in recs[:4])
    assert list(recs[4]) == ["PMID", "Title"]
    # the contradiction negates a sentence the cited abstract holds
    assert NEGATED_SENTENCE in recs[1]["Abstract"]
    assert CONTRADICTION in ANSWERS["s_bracket"]


def test_import_reads_every_spelling_and_every_fate(audited: Audited) -> None:
    head, row = audited.import_output.strip().splitlines()[-2:]
    s = dict(zip(head.split(","), row.split(","), strict=True))
    assert (s["samples"], s["written"], s["failed"], s["cancelled"]) == ("8", "8", "1", "1")
    runs = {r.task_id: r for r in read_runs(audited.runs).runs}
    assert set(runs) == set(QUESTIONS)
    assert Counter(r.status for r in runs.values()) == STATUS
    response = format_records(audited.records)
    for task, cited in EXPECTED_CITED.items():
        r = runs[task]
        assert r.status == "ok" and r.answer == ANSWERS[task]
        assert [c.label for c in r.cited] == cited, task
        n, citing = EXPECTED_CLAIMS[task]
        assert (len(r.claims), sum(1 for c in r.claims if c.cites)) == (n, citing), task
        [call] = r.tool_calls
        assert call.status == "ok" and call.response_text == response
    # s_same: ONE claim cites the PMID and the DOI of one record
    [claim] = runs["s_same"].claims
    assert claim.cites == (f"PMID:{PULL}", DOI_PULL)
    out = runs["s_outage"]
    assert out.status == "error" and OUTAGE_MESSAGE in (out.error or "") and out.cited == ()
    loop = runs["s_loop"]
    assert (loop.status, loop.limit, loop.limit_value) == ("limit", "message", MESSAGE_LIMIT)
    assert loop.cited == () and len(loop.tool_calls) >= 2


def test_audit_counts_match_the_hand_counts(audited: Audited) -> None:
    cites = read_table(audited.out / "citations.csv", "audit_citations")
    assert len(cites) == N_CITATIONS
    assert cites["id_type"].value_counts().to_dict() == BY_SCHEME
    for task, group in _by_task(cites).items():
        got = {
            (int(r.claim_no), r.citation): (r.l1, r.evidence) for r in group.itertuples(index=False)
        }
        assert got == EXPECTED_ROWS[task], task
    assert set(cites["task_id"]) == {t for t, rows in EXPECTED_ROWS.items() if rows}
    # evidence_calls: the one search (call 0) for what the agent read, empty otherwise
    read = cites["evidence"].isin(["tool_response", "no_passage"])
    assert (cites.loc[read, "evidence_calls"] == "0").all()
    assert cites.loc[~read, "evidence_calls"].fillna("").eq("").all()  # "" reads back as NA
    # scores: tool_score where the agent read a passage (6), corpus_score for every found
    # PMID (6: PubMedQA holds each abstract), support/l2 for either (6 + 2 corpus-only)
    assert cites["tool_score"].notna().sum() == EVIDENCE["tool_response"]
    assert cites["corpus_score"].notna().sum() == L1["found"]
    assert cites["support_score"].notna().sum() == EVIDENCE["tool_response"] + EVIDENCE["corpus"]
    assert cites["l2"].fillna("").ne("").sum() == EVIDENCE["tool_response"] + EVIDENCE["corpus"]
    bare = cites[cites["evidence"].isin(["no_passage", "none"])]
    assert bare["support_score"].isna().all() and bare["l2"].fillna("").eq("").all()

    summary = json.loads((audited.out / "summary.json").read_text())
    validate_json(summary, "audit_summary", "summary.json")
    c = summary["counts"]
    assert c["runs"] == 8 and c["status"] == STATUS
    assert (c["claims"], c["claims_citing"], c["citations"]) == (N_CLAIMS, N_CITING, N_CITATIONS)
    assert c["unresolved_markers"] == 0  # [1] names References entry 1
    assert c["ambiguous_markers"] == 0
    assert c["l1"] == L1 and c["evidence"] == EVIDENCE
    h = {m["metric"]: m for m in summary["headline"]}
    assert (h["error_rate"]["k"], h["error_rate"]["n"]) == (1, 8)  # s_outage of 8 runs
    assert (h["limit_rate"]["k"], h["limit_rate"]["n"]) == (1, 8)  # s_loop of 8 runs
    assert (h["cite_rate"]["k"], h["cite_rate"]["n"]) == (5, 6)  # s_uncited cites nothing
    assert (h["non_attempt_rate"]["k"], h["non_attempt_rate"]["n"]) == (0, 6)
    assert (h["zero_tool_rate"]["k"], h["zero_tool_rate"]["n"]) == (0, 6)  # all searched
    assert (h["unchecked_citations"]["k"], h["unchecked_citations"]["n"]) == (4, 10)
    assert h["fabrication_rate"]["k"] == 0


def test_the_run_table_counts_each_run_and_the_uncited_one(audited: Audited) -> None:
    table = read_table(audited.out / "runs.csv", "audit_runs").set_index("task_id")
    assert table["status"].to_dict() == {
        **dict.fromkeys(EXPECTED_CITED, "ok"),
        "s_outage": "error",
        "s_loop": "limit",
    }
    # distinct identifiers per run and their L1 (from EXPECTED_ROWS; s_same's PULL and its DOI
    # are two identifiers)
    expected = {
        "s_bracket": (2, 2, 0),
        "s_legacy": (2, 1, 1),
        "s_same": (2, 1, 1),
        "s_unread": (3, 1, 2),
        "s_refs": (1, 1, 0),
        "s_uncited": (0, 0, 0),  # a finished run with no citation, counted, not dropped
        "s_outage": (0, 0, 0),
        "s_loop": (0, 0, 0),
    }
    got = {
        t: (int(r.n_cited), int(r.n_found), int(r.n_unchecked))
        for t, r in table[["n_cited", "n_found", "n_unchecked"]].iterrows()
    }
    assert got == expected
    assert (table["n_notfound"] == 0).all() and not table["non_attempt"].any()
    assert (table.loc[list(EXPECTED_CITED), "n_tool_calls"] == 1).all()


def test_the_pmid_and_the_doi_of_one_record_read_the_same_record(audited: Audited) -> None:
    """The DOI printed after the abstract belongs to that abstract: the PMID and the DOI of
    record 4 are scored against the same text -- the whole record -- so one claim citing both
    gets one tool_score (the defect: the DOI was scored against ``DOI: 10.5555/...`` alone)."""
    from kit.audit.evidence import agent_read
    from kit.guard.verifiers.load import load_verifier

    runs = {r.task_id: r for r in read_runs(audited.runs).runs}
    record = format_records([audited.records[3]])  # the whole of record 4, DOI last
    # the doi.org URL of s_legacy reads the whole record (the defect: "DOI: 10.5555/17208539")
    legacy = runs["s_legacy"]
    doi = next(c for c in legacy.cited if c.label == DOI_PULL)
    legacy_read = agent_read(legacy, doi)
    assert legacy_read is not None and legacy_read.text == record and legacy_read.calls == (0,)
    # s_same: its PMID and its bare DOI read that same record
    same = runs["s_same"]
    reads = {c.label: agent_read(same, c) for c in same.cited}
    assert reads[f"PMID:{PULL}"] == reads[DOI_PULL] == legacy_read

    cites = read_table(audited.out / "citations.csv", "audit_citations")
    rows = cites[cites["task_id"] == "s_same"].set_index("citation")
    assert rows.loc[f"PMID:{PULL}", "tool_score"] == rows.loc[DOI_PULL, "tool_score"]
    assert rows.loc[f"PMID:{PULL}", "claim"] == rows.loc[DOI_PULL, "claim"]
    v = load_verifier(audited.verifier)
    [expected] = v.score([str(rows.loc[DOI_PULL, "claim"])], [record])
    assert abs(float(rows.loc[DOI_PULL, "tool_score"]) - float(expected)) < 1e-6


def test_the_contradiction_is_scored_against_the_abstract_it_negates(audited: Audited) -> None:
    """The tiny verifier has random weights, so whether the claim is flagged is not asserted;
    what is: the claim is the negated sentence's sentence, scored against record 2 (which holds
    the sentence it negates)."""
    from kit.guard.verifiers.load import load_verifier

    cites = read_table(audited.out / "citations.csv", "audit_citations")
    [row] = cites[cites["citation"] == f"PMID:{SNELLEN}"].to_dict("records")
    assert row["claim"].startswith(CONTRADICTION) and "pubmed" not in row["claim"]
    assert (row["evidence"], row["l1"], row["l2"] != "") == ("tool_response", "found", True)
    record = format_records([audited.records[1]])
    [expected] = load_verifier(audited.verifier).score([row["claim"]], [record])
    assert abs(row["tool_score"] - float(expected)) < 1e-6
    assert row["support_score"] == row["tool_score"]


# --- a second corpus that declares complete coverage (notfound) -----------------------------
# `kit audit --corpus pubmedqa,med`: med is one SYNTHETIC MEDLINE record (PMID 99999000) and
# declares the PMIDs 99999000-99999999 complete, so the title-only record's PMID 99999901
# (inside the range, absent) is notfound -- though the agent read a record naming it: tool
# responses never decide L1 -- and a notfound citation is never L2-scored (evidence none).
MED_RANGE = "PMID=complete:99999000-99999999;synthetic test range"
L1_MED = {"found": 6, "notfound": 1, "transient": 0, "unchecked": 3}  # TITLE_ONLY moves
EVIDENCE_MED = {"tool_response": 6, "corpus": 2, "no_passage": 0, "none": 2}  # no_passage->none


def test_a_corpus_declaring_complete_coverage_makes_the_title_only_pmid_notfound(
    audited: Audited, registry_raw: Path, tmp_path: Path
) -> None:
    from kit.corpus.synthetic import SynthRecord, write_medline

    write_medline(
        tmp_path / "pubmed" / "pubmed26n0001.xml",
        [SynthRecord(99999000, "SYNTHETIC stand-in", (("", "a synthetic abstract"),))],
    )
    root = tmp_path / "corpora"
    r = CliRunner().invoke(
        cli,
        ["corpus", "build", "med", "--medline", str(tmp_path / "pubmed"), "--licence",
         "synthetic", "--coverage", MED_RANGE, "--corpus-root", str(root), "--quiet"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    out = tmp_path / "audit"
    args = ["audit", str(audited.runs), "--out", str(out), "--raw", str(registry_raw)]
    args += ["--verifier", str(audited.verifier), "--n-cal", "10", "--quiet"]
    args += ["--corpus", "pubmedqa,med", "--corpus-root", str(root)]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    cites = read_table(out / "citations.csv", "audit_citations").set_index("citation")
    row = cites.loc[f"PMID:{TITLE_ONLY}"]
    assert (row["l1"], row["corpus"], row["evidence"]) == ("notfound", "med", "none")
    c = json.loads((out / "summary.json").read_text())["counts"]
    assert c["l1"] == L1_MED and c["evidence"] == EVIDENCE_MED
    assert c["citations"] == N_CITATIONS and c["status"] == STATUS
    h = {m["metric"]: m for m in json.loads((out / "summary.json").read_text())["headline"]}
    assert h["fabrication_rate"]["k"] == 1  # the one notfound citation


def test_an_audit_of_the_runs_that_cite_nothing_completes(
    audited: Audited, registry_raw: Path, tmp_path: Path
) -> None:
    """The uncited, the errored and the limited run of the log alone: zero citations to audit
    (the defect: such an audit exited 2 on its own empty citations.csv)."""
    keep = {"s_uncited", "s_outage", "s_loop"}
    lines = audited.runs.read_text().splitlines()
    runs = tmp_path / "uncited.jsonl"
    runs.write_text("".join(x + "\n" for x in lines if json.loads(x)["task_id"] in keep))
    out = tmp_path / "audit"
    args = ["audit", str(runs), "--out", str(out), "--raw", str(registry_raw), "--quiet"]
    args += ["--verifier", str(audited.verifier), "--n-cal", "10"]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    validate_json(summary, "audit_summary", "summary.json")
    c = summary["counts"]
    assert (c["runs"], c["citations"], c["claims"], c["claims_citing"]) == (3, 0, 1, 0)
    assert c["status"] == {"ok": 1, "error": 1, "limit": 1}
    h = {m["metric"]: m for m in summary["headline"]}
    assert (h["cite_rate"]["k"], h["cite_rate"]["n"]) == (0, 1)  # s_uncited, the one finished
    assert len(read_table(out / "citations.csv", "audit_citations")) == 0
    assert len(read_table(out / "runs.csv", "audit_runs")) == 3
