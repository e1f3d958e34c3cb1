"""Every marker family over every record format (issue 57): an inspect_ai log written at test
time by inspect_ai's own eval() with mockllm (tests/runs/importers/harness_formats.py: 56
samples, 112 planted citations -- 6 spellings x 9 tool formats, and [n] over the tool's own
list on the 2 formats that number their records), imported with `kit import inspect-ai` and
audited with `kit audit` (PubMedQA corpus from the registry, the tiny random-weight verifier of
tests/guard/tiny_model.py: the test asserts which passage each claim was scored against and
every count, never how well the verifier judges).

Done-when of issue 57: every planted citation attached to its claim, every cited record read
with its own passage, per spelling and per format. Expected values are by construction
(harness_formats.planted), never read off a run of the code. Before issue 57 the PaperQA2 keys,
the narrative and footnote markers and [n] over the tool's list were on no claim, and the efetch
abstract text and ``Key: value`` blocks with the PMID last read the NEXT record's abstract.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from harness_formats import (
    FORMATS,
    SPELLINGS,
    TOOL_LIST,
    Planted,
    SampleSpec,
    answer,
    planted,
    write_formats_log,
)

from kit.cli import cli
from kit.core.schema import read_table, validate_json
from kit.runs.reader import read_runs

pytest.importorskip("inspect_ai")


@dataclass(frozen=True)
class Audited:
    specs: list[SampleSpec]
    truth: list[Planted]
    runs: Path
    out: Path
    citations: pd.DataFrame


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, registry_raw: Path) -> Audited:
    from tests.guard.tiny_model import build_tiny_cross_encoder

    d = tmp_path_factory.mktemp("inspect_formats")
    log, specs = write_formats_log(d / "logs", registry_raw)
    runs = d / "runs.jsonl"
    r = CliRunner().invoke(cli, ["import", "inspect-ai", str(log), "--out", str(runs)])
    assert r.exit_code == 0, r.output
    verifier = build_tiny_cross_encoder(d / "tiny")
    out = d / "audit"
    args = ["audit", str(runs), "--out", str(out), "--raw", str(registry_raw), "--quiet"]
    args += ["--verifier", str(verifier), "--n-cal", "10"]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    cites = read_table(out / "citations.csv", "audit_citations")
    return Audited(specs, planted(specs), runs, out, cites)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _head(abstract: str, words: int = 12) -> str:
    return " ".join(abstract.split()[:words])


def test_the_corpus_is_what_it_says(audited: Audited) -> None:
    specs = audited.specs
    assert len(specs) == len(SPELLINGS) * len(FORMATS) + len(TOOL_LIST) == 56
    assert len(audited.truth) == 112
    assert Counter(s.spelling for s in specs)["tool-list"] == 2
    # distinct papers, and first authors distinct within a sample (no ambiguity planted here)
    pmids = [p.pmid for s in specs for p in s.papers]
    assert len(set(pmids)) == len(pmids)
    assert all(len({p.surname for p in s.papers}) == 3 for s in specs)


def test_every_planted_citation_is_on_its_own_claim(audited: Audited) -> None:
    """claim_no of each planted citation is the claim that cites it (1 or 2), per spelling and
    per format; the only rows are the planted ones (no reference-list-only row, claim_no 0)."""
    cites = audited.citations
    got = {(r.task_id, int(r.claim_no), r.citation) for r in cites.itertuples(index=False)}
    want = {(t.sample, t.claim_no, t.citation) for t in audited.truth}
    missing = sorted(want - got)
    by_family = Counter(
        (t.spelling, t.format)
        for t in audited.truth
        if (t.sample, t.claim_no, t.citation) in set(missing)
    )
    assert not missing, f"{len(missing)} planted citations not on their claim: {by_family}"
    assert got == want
    # the claim is the sentence that holds the marker, with the planted claim's words
    for t in audited.truth:
        [row] = cites[(cites.task_id == t.sample) & (cites.citation == t.citation)].to_dict(
            "records"
        )
        assert _norm(t.paper.claim[1:]) in _norm(row["claim"]), (t.sample, row["claim"])


def test_every_planted_citation_is_read_with_its_own_passage(audited: Audited) -> None:
    """evidence tool_response for every planted citation, its record_format the tool's, and the
    text read for it holds its own abstract and no other paper's (the defect: the efetch
    abstract text read each PMID with the NEXT record's abstract)."""
    from kit.audit.evidence import agent_read

    cites = audited.citations.set_index(["task_id", "citation"])
    runs = {r.task_id: r for r in read_runs(audited.runs).runs}
    specs = {s.id: s for s in audited.specs}
    wrong: list[tuple[str, str, str]] = []
    for t in audited.truth:
        row = cites.loc[(t.sample, t.citation)]
        if (row["evidence"], row["l1"]) != ("tool_response", t.l1):
            wrong.append((t.sample, t.citation, f"{row['evidence']} {row['l1']}"))
            continue
        assert row["record_format"] == t.format, (t.sample, row["record_format"])
        run = runs[t.sample]
        [cit] = [c for c in run.cited if c.label == t.citation]
        read = agent_read(run, cit)
        assert read is not None and read.calls == (0,)
        text = _norm(read.text)
        others = [p for p in specs[t.sample].papers if p.pmid != t.paper.pmid]
        if _head(t.paper.abstract) not in text or any(
            _head(p.abstract) in text for p in others if p is not specs[t.sample].papers[1]
        ):
            wrong.append((t.sample, t.citation, "another record's text"))
    assert not wrong, f"{len(wrong)} of {len(audited.truth)} read wrong: {wrong[:8]}"
    assert (audited.citations["tool_score"].notna()).all()


def test_counts_per_spelling_and_per_format(audited: Audited) -> None:
    cites = audited.citations
    truth = pd.DataFrame(
        [(t.sample, t.spelling, t.format) for t in audited.truth],
        columns=["task_id", "spelling", "format"],
    )
    read = cites[(cites.claim_no > 0) & (cites.evidence == "tool_response")]
    merged = read.merge(truth.drop_duplicates("task_id"), on="task_id")
    assert merged.groupby("spelling").size().to_dict() == {
        **{s: 2 * len(FORMATS) for s in SPELLINGS},
        "tool-list": 4,
    }
    per_format = {f: 2 * len(SPELLINGS) for f in FORMATS}
    per_format["pubmed-abstract"] += 2
    per_format["numbered"] += 2
    assert merged.groupby("format").size().to_dict() == per_format
    summary = json.loads((audited.out / "summary.json").read_text())
    validate_json(summary, "audit_summary", "summary.json")
    c = summary["counts"]
    assert (c["runs"], c["citations"]) == (56, 112)
    assert (c["claims"], c["claims_citing"]) == (112, 112)  # two claims a sample, both cite
    assert c["unresolved_markers"] == 0
    assert c["evidence"] == {"tool_response": 112, "corpus": 0, "no_passage": 0, "none": 0}
    n_doi = 2 * 2 * len(FORMATS)  # author-year and PaperQA2 cite by DOI
    assert c["l1"] == {"found": 112 - n_doi, "notfound": 0, "transient": 0, "unchecked": n_doi}


def test_the_answers_are_the_spellings_they_claim() -> None:
    """The harness's answers hold the marker forms the docstring names (guards the harness)."""
    from harness_formats import Paper

    p = Paper(
        "1",
        "Is X good?",
        "An abstract.",
        "2011",
        "X is good",
        "Smith",
        "Lee",
        "Jane",
        "J Synth Med",
    )
    q = Paper("3", "Is Z bad?", "Another.", "2012", "Z is bad", "Chen", "Kim", "Mei", "J")
    mid = Paper("2", "Is Y?", "", "2010", "Y", "Okafor", "Rossi", "Ada", "J")

    def spec(spelling: str, fmt: str = "markdown") -> SampleSpec:
        return SampleSpec("s", spelling, fmt, (p, mid, q))

    assert "X is good [1]." in answer(spec("numeric"))
    assert "(Smith et al., 2011)" in answer(spec("author-year"))
    assert "Smith et al. (2011) reported that x is good." in answer(spec("narrative"))
    assert "(Smith2011Is pages 1-2)" in answer(spec("paperqa"))
    assert "X is good[^1]. Z is bad.[^2]" in answer(spec("footnote"))
    assert answer(spec("tool-list", "numbered")) == "X is good [0]. Z is bad [2]."


def test_each_format_reads_the_title_only_record_as_no_passage(audited: Audited) -> None:
    """Per format, the record the tool prints without its abstract (record 2) is no passage and
    the two with theirs are; every record names the format it was read as (the markdown list's
    italic byline -- authors, journal, year and the ids -- once read as a passage)."""
    from harness_formats import RENDER

    from kit.audit.evidence import response_records
    from kit.runs.model import Citation

    done: set[str] = set()
    for s in audited.specs:
        if s.format in done:
            continue
        done.add(s.format)
        text = RENDER[s.format](s.papers)
        got = []
        for p in s.papers:
            [rec] = response_records(text, Citation("PMID", p.pmid))
            got.append((rec.passage, rec.format))
        assert got == [(True, s.format), (False, s.format), (True, s.format)], s.format
    assert done == set(FORMATS)
