"""The deterministic judge and the two-level citation audit (L1 incl. transient, L2 bands)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kit.core.errors import ConfigError
from kit.grade.checklist import Criterion
from kit.grade.citation_audit import (
    SetResolver,
    SupportRule,
    audit_citations,
    audit_rates,
    citation_rows,
    claim_for,
    classify_l1,
    rogan_gladen,
)
from kit.grade.corpus import CORPORA, CatalogResolver, catalog_resolvers
from kit.grade.judge import JudgeRule, judge_criterion
from kit.grade.support import LexicalSupport
from kit.runs.model import AgentRun, Citation


class FixedScorer:
    name = "fixed"

    def __init__(self, value: float) -> None:
        self.value = value

    def score(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        return np.full(len(claims), self.value)


def _run(rid: str, model: str, cited: tuple[Citation, ...], answer: str = "A claim.") -> AgentRun:
    return AgentRun(rid, "t", model, answer, cited, (), True)


P = Citation("PMID", "1")


def test_judge_mention_coverage_bands() -> None:
    c = Criterion("c", "must_mention", "x", 1, ("aspirin", "stroke risk", "platelets"))
    assert judge_criterion(c, "Aspirin lowers stroke risk via platelets.", ())[0] == "met"
    assert judge_criterion(c, "Aspirin lowers stroke risk.", ()) == (
        "partial",
        pytest.approx(2 / 3),
    )
    assert judge_criterion(c, "Aspirin is old.", ())[0] == "not_met"


def test_judge_avoid_ground_and_scorer() -> None:
    avoid = Criterion("a", "must_avoid", "x", 2, ("no relevant evidence",))
    assert judge_criterion(avoid, "There is no relevant evidence.", ())[0] == "met"  # present
    assert judge_criterion(avoid, "Evidence is relevant.", ())[0] == "not_met"
    ground = Criterion("g", "must_ground", "x", 3, ("aspirin",))
    assert judge_criterion(ground, "Aspirin works.", ())[0] == "not_met"  # cites nothing
    assert judge_criterion(ground, "Aspirin works.", (P,))[0] == "met"  # terms, no scorer
    for s, want in (
        (0.7, "met"),
        (0.5, "met"),
        (0.4, "partial"),
        (0.3, "partial"),
        (0.29, "not_met"),
    ):
        got = judge_criterion(
            ground, "Aspirin works.", (P,), JudgeRule(), FixedScorer(s), lambda c: "text"
        )
        assert got[0] == want
    # citation that resolves to nothing -> not_met
    assert (
        judge_criterion(ground, "x", (P,), JudgeRule(), FixedScorer(1.0), lambda c: None)[0]
        == "not_met"
    )
    bare = Criterion("b", "must_acknowledge", "acknowledges uncertainty", 1)
    with pytest.raises(ConfigError, match="no key terms"):
        judge_criterion(bare, "x", ())
    assert judge_criterion(bare, "x", (), JudgeRule(), FixedScorer(0.9))[0] == "met"


def test_l1_found_notfound_transient_unchecked() -> None:
    class Flaky:
        def resolve(self, values: Sequence[str]) -> dict[str, str]:
            return {
                v: ("transient" if v == "3" else "found" if v == "1" else "notfound")
                for v in values
            }

    runs = [
        _run("r1", "m1", (Citation("PMID", "1"), Citation("PMID", "2"))),
        _run("r2", "m2", (Citation("PMID", "3"), Citation("NCT", "NCT01234567"))),
    ]
    cites = citation_rows(runs)
    assert classify_l1(cites, {"PMID": Flaky()}) == ["found", "notfound", "transient", "unchecked"]
    audited = audit_citations(
        cites, {"PMID": Flaky()}, FixedScorer(0.1), lambda t, v: "text", SupportRule(0.5, 0.3)
    )
    rates = audit_rates(audited).set_index(["by", "group"])
    allr = rates.loc[("all", "all")]
    # transient and unchecked are excluded from the fabrication denominator
    assert (allr.found, allr.notfound, allr.transient, allr.unchecked) == (1, 1, 1, 1)
    assert allr.fabrication_rate == 0.5 and allr.existence_rate == 0.5
    assert allr.l2_no == 1 and allr.wrong_paper_rate == 1.0
    assert np.isnan(rates.loc[("id_type", "NCT")].wrong_paper_rate)  # undefined, not 0
    assert np.isnan(rates.loc[("model", "m2")].fabrication_rate)  # only transient + unchecked


def test_l2_threshold_edges_and_upper_bound() -> None:
    rule = SupportRule(yes_at=0.5, partial_at=0.3)
    assert [rule.label(s) for s in (0.5, 0.4999, 0.3, 0.2999)] == [
        "yes",
        "partial",
        "partial",
        "no",
    ]
    with pytest.raises(ConfigError):
        SupportRule(0.2, 0.3)
    runs = [_run(f"r{i}", "m", (Citation("PMID", str(i)),)) for i in range(4)]
    scores = {"0": 0.9, "1": 0.4, "2": 0.1, "3": 0.35}

    class ByValue:
        name = "by-value"

        def score(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
            return np.array([scores[p] for p in passages])

    audited = audit_citations(
        citation_rows(runs),
        {"PMID": SetResolver(frozenset("0123"))},
        ByValue(),
        lambda t, v: v,
        rule,
    )
    assert list(audited["l2"]) == ["yes", "partial", "no", "partial"]
    r = audit_rates(audited).iloc[0]
    assert r.wrong_paper_rate == 0.25 and r.wrong_paper_upper == 0.75


def test_claim_spans() -> None:
    a = "Aspirin lowers risk. It works (PMID:1; NCT01234567). Trials show X [PMID:2]."
    assert claim_for(a, Citation("PMID", "1")) == "Aspirin lowers risk. It works"
    assert claim_for(a, Citation("NCT", "NCT01234567")) == "Aspirin lowers risk. It works"
    assert claim_for(a, Citation("PMID", "2")) == "Trials show X"
    assert claim_for(a, Citation("PMID", "9")) == a


def test_rogan_gladen() -> None:
    # perfect instrument: corrected == observed, delta-method CI ~ Wald
    c = rogan_gladen(20, 100, 100, 100, 0, 100)
    assert c.estimate == pytest.approx(0.2) and c.lo < 0.2 < c.hi
    c = rogan_gladen(30, 100, 90, 100, 10, 100)  # q = 0.3 -> (0.3 - 0.1) / 0.8 = 0.25
    assert c.estimate == pytest.approx(0.25)
    with pytest.raises(ConfigError, match="better than chance"):
        rogan_gladen(30, 100, 10, 100, 10, 100)


def test_lexical_support() -> None:
    s = LexicalSupport.from_corpus(
        ["aspirin reduces stroke", "statins reduce cholesterol", "aspirin bleeding"]
    )
    got = s.score(
        ["aspirin reduces stroke", "aspirin reduces stroke", ""],
        ["aspirin reduces stroke risk", "statins", "x"],
    )
    assert got[0] == pytest.approx(1.0) and got[1] == 0.0 and got[2] == 0.0


def test_catalog_resolver(grade_catalog: Path, tmp_path: Path) -> None:
    res = catalog_resolvers(grade_catalog)
    assert set(res) == {"PMID"} and "NCT" not in CORPORA  # NCT: no corpus yet -> unchecked
    got = res["PMID"].resolve(["21645374", "99999999"])
    # PubMedQA is declared a sample of PubMed: an absent PMID is unchecked, never fabricated
    assert {v: (r.status, r.corpus) for v, r in got.items()} == {
        "21645374": ("found", "pubmedqa"),
        "99999999": ("unchecked", ""),
    }
    broken = tmp_path / "broken.duckdb"
    broken.write_bytes(b"not a database")
    got = CatalogResolver(broken, CORPORA["PMID"]).resolve(["21645374"])
    assert {v: r.status for v, r in got.items()} == {"21645374": "transient"}
    cites = pd.DataFrame(
        [
            {
                "run_id": "r",
                "model": "m",
                "task_id": "t",
                "citation": "NCT01234567",
                "id_type": "NCT",
                "value": "NCT01234567",
                "claim": "c",
            }
        ]
    )
    assert classify_l1(cites, res) == ["unchecked"]
