"""The planted-truth audit recovers its planted rates (fast: few seeds; slow: many seeds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kit.grade import planted as pl
from kit.grade.checklist import checklist_from_dict, score_verdicts
from kit.grade.judge import judge_runs
from kit.grade.support import LexicalSupport


@pytest.fixture(scope="module")
def scorer(planted_corpus: pl.PlantedCorpus) -> LexicalSupport:
    return LexicalSupport.from_corpus(
        planted_corpus.abstract[p] for p in sorted(planted_corpus.abstract)
    )


def test_corpus_neighbours_are_on_topic(planted_corpus: pl.PlantedCorpus) -> None:
    c = planted_corpus
    assert len(c.pmids) == 1000 and len(c.pool) >= 990
    for p in c.pool[:50]:
        q = c.neighbour[p]
        assert q != p and c.shared[p] >= 1
        assert len(set(c.meshes[p]) & set(c.meshes[q])) >= c.shared[p]


def test_plant_is_seeded_and_follows_design(planted_corpus: pl.PlantedCorpus) -> None:
    d = pl.PlantedDesign(n_answers=300)
    a = pl.plant(planted_corpus, d, np.random.default_rng(7), 7)
    b = pl.plant(planted_corpus, d, np.random.default_rng(7), 7)
    assert a.truth.equals(b.truth) and a.runs == b.runs
    t = a.truth
    known = set(planted_corpus.pmids)
    for _, r in t.iterrows():
        cited = r.citation.removeprefix("PMID:")
        if r.planted == "right":
            assert cited == r.pmid
        elif r.planted == "wrong":
            assert cited == planted_corpus.neighbour[r.pmid] and cited in known
        else:
            assert cited not in known
    assert set(t.pmid).isdisjoint(a.calibration)


def test_fast_recovery(planted_corpus: pl.PlantedCorpus, scorer: LexicalSupport) -> None:
    d = pl.PlantedDesign()
    pset = pl.plant(planted_corpus, d, np.random.default_rng(0), 0)
    res = pl.audit_planted(planted_corpus, pset, scorer, pl.LEXICAL_RULE)
    rec = res["recovery"].set_index("metric")
    assert rec.loc["fabrication_rate", "covered"]
    assert rec.loc["wrong_paper_corrected", "covered"]
    assert rec.loc["wrong_paper_upper", "covered"]
    assert rec.loc["transient_excluded", "covered"]  # every outage was transient, none fabricated
    cites = res["citations"]
    assert not ((cites.planted == "fabricated") & (cites.l1 == "found")).any()
    assert not ((cites.planted != "fabricated") & (cites.l1 == "notfound")).any()
    conf = res["confusion"].set_index("planted")
    assert conf.loc["wrong", "no"] > 0.8 * conf.loc["wrong", ["yes", "partial", "no"]].sum()
    cov = pl.coverage_over_seeds(planted_corpus, d, range(1, 6), scorer, pl.LEXICAL_RULE).set_index(
        "metric"
    )
    assert cov.loc["fabrication_rate", "coverage"] >= 0.6
    assert cov.loc["wrong_paper_corrected", "coverage"] >= 0.6
    assert abs(cov.loc["wrong_paper_corrected", "mean_estimate"] - d.wrong_given_found) < 0.03


def test_derived_checklists_are_valid_and_grade(
    planted_corpus: pl.PlantedCorpus, scorer: LexicalSupport
) -> None:
    pset = pl.plant(planted_corpus, pl.PlantedDesign(n_answers=60), np.random.default_rng(1), 1)
    cls = {}
    for r in pset.runs:
        cl = pl.derive_checklist(planted_corpus, r.task_id.removeprefix("pubmedqa-"))
        cls[cl.task_id] = checklist_from_dict(cl.to_record())  # passes the JSON Schema + hash
    abstracts = planted_corpus.abstract
    verdicts, unmatched = judge_runs(
        cls, pset.runs, scorer=scorer, passage_of=lambda c: abstracts.get(c.value)
    )
    assert not unmatched
    scores = score_verdicts(cls, verdicts).merge(
        pset.truth, left_on="task_id", right_on=pset.truth["pmid"].radd("pubmedqa-")
    )
    ground = verdicts[verdicts.criterion_id == "c5"].merge(pset.truth, on="run_id")
    # must_ground fails for fabricated citations and mostly fails for wrong papers
    assert (ground[ground.planted == "fabricated"].verdict == "not_met").all()
    right = ground[ground.planted == "right"]
    assert (right.verdict != "not_met").mean() > 0.8
    assert len(scores) == 60


@pytest.mark.slow
def test_coverage_over_many_seeds(planted_corpus: pl.PlantedCorpus, scorer: LexicalSupport) -> None:
    cov = pl.coverage_over_seeds(
        planted_corpus, pl.PlantedDesign(), range(200), scorer, pl.LEXICAL_RULE
    )
    cov = cov.set_index("metric")
    # nominal 95%: binomial sd over 200 seeds is ~1.5 points
    assert 0.90 <= cov.loc["fabrication_rate", "coverage"] <= 0.99
    assert 0.89 <= cov.loc["wrong_paper_corrected", "coverage"] <= 0.99
    assert cov.loc["wrong_paper_upper", "coverage"] == 1.0
    assert cov.loc["wrong_paper_raw", "coverage"] < 0.8  # the uncorrected rate is biased: shown


def test_reproduction_tables(registry_raw: Path) -> None:
    from kit.reproductions.grade import planted_audit

    t = planted_audit(registry_raw, n_seeds=3)
    assert set(t) == {
        "planted_recovery",
        "planted_coverage",
        "planted_confusion",
        "planted_design",
        "planted_checklist",
    }
    rec = t["planted_recovery"]
    assert {"planted_value", "kit_value", "note", "instrument"} <= set(rec.columns)
    assert rec["instrument"].str.contains("lexical").all()
