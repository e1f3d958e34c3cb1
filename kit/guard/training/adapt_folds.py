"""The folds of ``kit guard adapt``'s cross-validation: independent units (pairs sharing a
claim, a passage or a group value are one unit, never on both sides of a fold), grouped and
roughly stratified folds, the most folds that keep both labels on each side, and the
out-of-fold scores of every candidate (:mod:`kit.guard.training.adapt`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd


def independent_units(
    claims: list[str], passages: list[str], groups: list[str] | None = None
) -> np.ndarray:
    """The unit of cross-validation of each pair: pairs sharing a claim, a passage or a
    ``group`` value are joined (connected components), so no passage or claim is on both
    sides of a fold. A model fine-tuned on one label of a passage and tested on another label
    of the same passage learns the passage, not the relation: random folds then misstate the
    AUC after, in either direction (COVID-Fact's dev split: 130 passages for 419 claims)."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def find(k: tuple[str, str]) -> tuple[str, str]:
        parent.setdefault(k, k)
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for i, (c, p) in enumerate(zip(claims, passages, strict=True)):
        keys = [("c", c), ("p", p)] + ([("g", str(groups[i]))] if groups is not None else [])
        roots = [find(k) for k in keys]
        for r in roots[1:]:
            parent[r] = roots[0]
    roots = [find(("c", c)) for c in claims]
    index = {r: j for j, r in enumerate(dict.fromkeys(roots))}
    return np.array([index[r] for r in roots], dtype=int)


def grouped_folds(units: np.ndarray, positive: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Fold of each pair: whole units, in a seeded random order, each to the fold that has the
    fewest pairs of the unit's majority class so far (balanced and roughly stratified)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(np.unique(units))
    fold = np.zeros(len(units), dtype=int)
    count = np.zeros((k, 2))
    for u in order:
        rows = units == u
        pos = int(positive[rows].sum())
        cls = int(pos * 2 >= rows.sum())
        f = int(np.lexsort((count.sum(axis=1), count[:, cls]))[0])
        fold[rows] = f
        count[f] += (rows.sum() - pos, pos)
    return fold


def cv_scores(
    frame: pd.DataFrame,
    folds: np.ndarray,
    score_fn: Callable[[pd.DataFrame, pd.DataFrame], dict[str, np.ndarray]],
) -> dict[str, np.ndarray]:
    """Out-of-fold scores under each scoring rule ``score_fn`` returns: every fold scored by
    a model fitted on the other folds. Each fold's scores are on its own model's scale: read
    them within folds (:func:`kit.stats.crossval_auc.crossval_auc`), never pooled."""
    scores: dict[str, np.ndarray] = {}
    for f in np.unique(folds):
        test = folds == f
        for rule, s in score_fn(frame[~test], frame[test]).items():
            scores.setdefault(rule, np.zeros(len(frame)))[test] = s
    return scores


def choose_folds(
    units: np.ndarray, positive: np.ndarray, most: int, seed: int
) -> tuple[int, np.ndarray] | None:
    """The most folds, at most ``most`` and at least 2, for which every held-out fold holds
    both labels (its AUC is defined) and so does every training part; with the folds
    (:func:`grouped_folds`). None when not even two folds can be made so."""
    for k in range(most, 1, -1):
        fold = grouped_folds(units, positive, k, seed)
        if all(
            positive[fold == f].any()
            and not positive[fold == f].all()
            and positive[fold != f].any()
            and not positive[fold != f].all()
            for f in range(k)
        ):
            return k, fold
    return None
