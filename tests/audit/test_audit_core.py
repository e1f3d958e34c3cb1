"""Pure pieces of kit.audit.core, checked against hand-computed values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kit.audit import core, summary
from kit.grade.citation_audit import SupportRule
from kit.stats.wilson import wilson_ci


def _audited() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": ["r1", "r1", "r2", "r3", "r4"],
            "l1": ["found", "notfound", "found", "found", "transient"],
            "support_score": [0.9, np.nan, 0.5, np.nan, np.nan],
        }
    )


def test_flag_citations_rule() -> None:
    f = core.flag_citations(_audited(), tau=0.5)
    assert list(f["flag_reason"]) == ["", "notfound", "score_at_or_below_tau", "no_passage", ""]
    assert list(f["flagged"]) == [False, True, True, True, False]
    # the tie with tau is flagged (conservative); just above is not
    assert not core.flag_citations(_audited(), tau=0.4999)["flagged"].iloc[2]


def test_citation_headline_numbers() -> None:
    cites = core.flag_citations(_audited(), tau=0.5)
    cites["l2"] = ["yes", "", "no", "", ""]
    cites["suggested"] = ""
    rule = SupportRule(0.8, 0.6)
    inst = core.InstrumentCounts.from_scores(np.array([0.9, 0.95]), np.array([0.1, 0.7]), rule)
    assert (inst.sens_k, inst.sens_n, inst.fpr_k, inst.fpr_n) == (1, 2, 0, 2)
    h = {
        m["metric"]: m for m in core.citation_headline(cites, 0.95, np.random.default_rng(0), inst)
    }
    fab = wilson_ci(1, 4)
    assert h["fabrication_rate"]["k"] == 1 and h["fabrication_rate"]["n"] == 4
    assert h["fabrication_rate"]["lo"] == pytest.approx(fab.lo)
    assert h["transient_lookups"]["k"] == 1
    assert (h["wrong_paper_rate"]["k"], h["wrong_paper_rate"]["n"]) == (1, 2)
    assert h["flag_rate"]["k"] == 1 and len(h["flag_rate"]["cluster_bootstrap"]) == 2
    assert h["unverified_after_reattribution"]["k"] == 1


def test_undefined_rate_is_explicit() -> None:
    m = summary._metric("x", 0, 0, 0.95, "n")
    assert m["estimate"] is None and "undefined" in m["ci"]


def test_planted_comparison_rules() -> None:
    head = [
        {"metric": "fabrication_rate", "estimate": 0.1, "lo": 0.05, "hi": 0.2, "k": 2, "n": 20},
        {"metric": "wrong_paper_upper", "estimate": 0.3, "lo": 0.2, "hi": 0.25, "k": 6, "n": 20},
        {"metric": "transient_lookups", "estimate": 0.0, "lo": 0, "hi": 0.1, "k": 1, "n": 21},
    ]
    cites = pd.DataFrame(
        {
            "run_id": ["a", "b"],
            "support_score": [0.1, 0.2],
            "flag_reason": ["score_at_or_below_tau", ""],
            "suggested": ["PMID:1", ""],
        }
    )
    truth = pd.DataFrame(
        {"run_id": ["a", "b"], "planted": ["wrong", "wrong"], "pmid": ["1", "2"]}
    ).assign(transient=[True, False])
    rows = {
        r["metric"]: r
        for r in core.planted_comparison(
            cites, truth, {"p_wrong": 0.2, "p_fabricated": 0.1}, head, 0.1, 0.95
        )
    }
    assert rows["fabrication_rate"]["covered"] is True
    assert rows["wrong_paper_upper"]["covered"] is True  # 0.2/0.9 = 0.222 <= hi 0.25
    assert rows["transient_lookups"]["covered"] is True
    c = rows["catch_rate_wrong_paper"]
    assert (c["k"], c["n"]) == (1, 2) and c["covered"] == (wilson_ci(1, 2).hi >= 0.9)
    assert rows["reattribution_to_true_paper"]["estimate"] == 1.0


def test_instrument_items_exclude_and_seed() -> None:
    pool = [str(i) for i in range(1, 30)]
    a = core.instrument_items(pool, {"3", "4"}, 10, np.random.default_rng(1))
    b = core.instrument_items(pool, {"3", "4"}, 10, np.random.default_rng(1))
    assert a == b and len(a) == 10 and not {"3", "4"} & set(a)
    assert core.instrument_items(pool, set(pool), 5, np.random.default_rng(0)) == ()


def test_json_clean() -> None:
    assert core.json_clean({"a": float("nan"), "b": [np.int64(2), np.float64(1.5)]}) == {
        "a": None,
        "b": [2, 1.5],
    }


def test_corpus_index_best_other_matches_the_rank_bm25_reference() -> None:
    from kit.guard.reattribute import bm25_rank

    texts = {
        "1": "aspirin reduces stroke risk in adults",
        "2": "aspirin and bleeding risk",
        "3": "statins reduce cholesterol",
        "4": "aspirin reduces stroke risk in adults",  # ties with 1
        "5": "",
    }
    index = core.CorpusIndex.build(texts)
    assert index.ids == ("1", "2", "3", "4")
    for query in ("aspirin stroke", "cholesterol", "bleeding aspirin", "unknown words"):
        for exclude in ("1", "2", "3", "x"):
            want = bm25_rank(query, texts, {exclude})[0][0]
            assert index.best_other(query, exclude) == want, (query, exclude)
    assert index.best_other("the of", "1") is None  # no content token
