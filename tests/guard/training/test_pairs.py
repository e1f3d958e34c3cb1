"""Construction-labelled PubMedQA pairs (pure) and the PubMedQA reproduction on a small sample."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kit.core.errors import InputError
from kit.guard.training.pairs import (
    NEG_TYPES,
    build_pairs,
    items_from_pqal,
    negate,
    negate_sentence,
)


@pytest.fixture(scope="module")
def items(registry_raw: Path) -> list:
    return items_from_pqal(json.loads((registry_raw / "pubmedqa/ori_pqal.json").read_text()))


def test_negation_rule() -> None:
    assert negate_sentence("Aspirin is effective.") == "Aspirin is not effective."
    assert negate_sentence("Aspirin did not reduce mortality.") == "Aspirin did reduce mortality."
    assert negate_sentence("Results showed X.") == "It is not true that results showed X."
    assert negate("Aspirin is safe. Coffee was harmless.") == (
        "Aspirin is not safe. Coffee was not harmless."
    )


def test_pairs_construction_and_determinism(items: list) -> None:
    assert len(items) == 1000
    a, meta = build_pairs(items, 20, np.random.default_rng(0))
    b, _ = build_pairs(items, 20, np.random.default_rng(0))
    assert a.equals(b)
    assert meta["labels"].startswith("construction-labelled")
    assert set(a["pair_type"]) == {"positive", *NEG_TYPES}
    pos = a[a["pair_type"] == "positive"]
    assert (pos["item_pmid"] == pos["passage_pmid"]).all() and (pos["label"] == "supported").all()
    for t in ("random", "mesh", "bm25"):
        neg = a[a["pair_type"] == t]
        assert (neg["item_pmid"] != neg["passage_pmid"]).all() and (
            neg["label"] == "unsupported"
        ).all()
    neg = a[a["pair_type"] == "negated"]
    assert (neg["item_pmid"] == neg["passage_pmid"]).all()
    assert not set(neg["claim"]) & set(pos["claim"])
    by = {it.pmid: it for it in items}
    for r in a[a["pair_type"] == "mesh"].itertuples():
        assert set(by[r.item_pmid].meshes) & set(by[r.passage_pmid].meshes)
    c, _ = build_pairs(items, 20, np.random.default_rng(1))
    assert not a.equals(c)


def test_bad_input() -> None:
    with pytest.raises(InputError):
        items_from_pqal([1, 2])
    with pytest.raises(InputError):
        items_from_pqal({"1": {"QUESTION": "q"}})


def test_pubmedqa_reproduction_small(registry_raw: Path, verifier_dir: Path) -> None:
    from kit.reproductions.guard import pubmedqa_guard

    t = pubmedqa_guard(registry_raw, verifier_dir, n=10, seed=0)
    auc = t["guard_pubmedqa_auc"].set_index("negative_type")
    assert list(auc.index) == list(NEG_TYPES)
    assert auc.loc["random", "auc"] > 0.9  # off-topic abstracts are easy
    assert auc.loc["negated", "auc"] < 0.8  # a similarity verifier cannot see negation
    assert all(len(v) for v in t.values())
    transfer = t["guard_pubmedqa_transfer"]
    # 5 calibration items per half cannot carry any of the targets: explicit refusals, not NaN
    assert set(transfer["verdict"]) == {"refused: k > n_cal"}
    assert {
        "guard_pubmedqa_transfer",
        "guard_pubmedqa_reattribution",
        "guard_pubmedqa_scope",
    } <= set(t)
