"""The fold judges of `kit audit --adapt` (kit.guard.training.fold_judges), on a tiny trainable
cross-encoder (random weights: plumbing, not accuracy) and CONSTRUCTION-LABELLED pairs.

Asserted: every fold judge predicts P(unsupported) in [0, 1] for exactly the items asked; the
fine-tuned fold judges differ from the parent (they were trained) and from each other (on
different folds), and the same seed gives the same predictions; the recombined ones are the
kit's fitted rule on the parent's window signals; an unsupported gold item trains as the kind
its gold names.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kit.anchor.cross_fit import cross_fit
from kit.guard.training.adapt import ADAPT_LR, FitSettings, rule_scores, window_signals
from kit.guard.training.fold_judges import (
    GoldPairs,
    fine_tune_judge,
    nli_labels,
    recombine_judge,
)
from kit.guard.verifiers.fitted_rule import fit_rule, pair_scores
from kit.guard.verifiers.load import load_verifier
from tests.guard.training.test_adapt_estimate import trainable_tiny_parent

pytest.importorskip("torch")


def _pairs(n: int = 16, n_gold: int = 10) -> GoldPairs:
    claims, passages = [], []
    for i in range(n):
        claims.append(f"drug {i % 5} reduced mortality in cohort {i}")
        verb = "reduced" if i % 2 == 0 else "did not change"
        passages.append(f"In cohort {i}, drug {i % 5} {verb} mortality. Follow-up was one year.")
    gold_index = np.arange(n_gold)
    unsupported = (gold_index % 2 == 1).astype(float)
    return GoldPairs(claims, passages, gold_index, unsupported, nli_labels(unsupported, None))


@pytest.mark.slow  # four tiny fine-tunings: ~12 s on 2 cores
def test_fine_tuned_fold_judges(tmp_path: Path) -> None:
    parent = trainable_tiny_parent(tmp_path / "parent")
    pairs = _pairs()
    fold = np.array([0, 0, 1, 1, 0, 0, 1, 1, 0, 1])
    settings = FitSettings(1, ADAPT_LR * 10, 8, 0, "cpu")
    unl = np.arange(10, 16)
    a = cross_fit(fold, pairs.gold_index, unl, fine_tune_judge(parent, pairs, settings))
    b = cross_fit(fold, pairs.gold_index, unl, fine_tune_judge(parent, pairs, settings))
    assert a.judge_unlabelled.shape == (6, 2)
    assert ((a.judge_gold >= 0) & (a.judge_gold <= 1)).all()
    np.testing.assert_array_equal(a.judge_gold, b.judge_gold)  # seeded: the same bytes
    np.testing.assert_array_equal(a.judge_unlabelled, b.judge_unlabelled)
    v = load_verifier(parent)
    base = (
        1
        - rule_scores(v, [pairs.claims[i] for i in unl], [pairs.passages[i] for i in unl])[
            "entailment"
        ]
    )
    for k in range(2):
        assert np.abs(a.judge_unlabelled[:, k] - base).max() > 1e-6  # trained: not the parent
    assert np.abs(a.judge_unlabelled[:, 0] - a.judge_unlabelled[:, 1]).max() > 1e-6


def test_recombined_fold_judges_are_the_fitted_rule(tmp_path: Path) -> None:
    parent = trainable_tiny_parent(tmp_path / "parent")
    v = load_verifier(parent)
    pairs = _pairs()
    fit = recombine_judge(v, pairs)
    train = np.array([0, 1, 2, 3, 4, 5])
    items = np.array([6, 7, 8, 12, 15])
    got = fit(train, items)
    sig = window_signals(v, pairs.claims, pairs.passages)
    rows = sig.rows[pairs.gold_index[train]]
    rule = fit_rule(sig.x[rows], 1 - pairs.unsupported[train], sig.features)
    want = 1 - pair_scores(rule, sig.x, sig.owner, len(pairs.claims))[items]
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert ((got >= 0) & (got <= 1)).all()


def test_training_labels_follow_the_gold_kind() -> None:
    y = np.array([0.0, 1.0, 1.0, 1.0])
    assert nli_labels(y, None) == ["entailment", "neutral", "neutral", "neutral"]
    kinds = ["supported", "contradicted", "not_enough_info", None]
    assert nli_labels(y, kinds) == ["entailment", "contradiction", "neutral", "neutral"]
