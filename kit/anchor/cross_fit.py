"""Cross-fitting a judge on the gold sample it is anchored on (pure, the fitting injected).

A lab with one labelled sample wants two things from it: a judge adapted to its citations, and
rates anchored on gold. :func:`cross_fit` does both without double-dipping (Zrnic & Candes
2024, cross-prediction): the gold items are split into K folds that keep every unit whole (the
citations of one run, pairs sharing a claim or a passage: :func:`gold_folds`); for each fold a
judge is fitted on the other folds (``fit``, injected: a verifier fine-tuned or its signals
recombined, :mod:`kit.guard.training.fold_judges`; a logistic regression in the simulations), and
predicts that fold's gold items and every unlabelled item. The result feeds
:func:`kit.stats.crossppi.crossppi_mean` / :func:`~kit.stats.crossppi.cluster_crossppi_mean`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kit.guard.training.adapt_folds import choose_folds
from kit.stats.crossppi import cluster_crossppi_mean
from kit.stats.ppi import MeanEstimate

# fit_predict(train, items): a fold judge fitted on the gold items ``train`` (positions in the
# gold sample) predicts ``items`` (numbers in the caller's one numbering of every judged item):
# each one's predicted gold label, in [0, 1]
FitPredict = Callable[[np.ndarray, np.ndarray], np.ndarray]

FOLDS = 5  # as `kit guard adapt`: each fold judge sees 4/5 of the gold sample


@dataclass(frozen=True)
class CrossFitted:
    """Out-of-fold predictions of the gold items, every fold judge's predictions of the
    unlabelled items, and the folds."""

    judge_gold: np.ndarray  # [n]: each gold item by the fold judge that did not see it
    judge_unlabelled: np.ndarray  # [N, K]: every unlabelled item by each fold judge
    fold: np.ndarray  # [n]: the fold of each gold item
    k: int


def gold_folds(units: np.ndarray, gold: np.ndarray, k: int, seed: int) -> tuple[int, np.ndarray]:
    """The folds of the gold items: whole units (``units[i]`` the unit of gold item i: one
    run's citations, and pairs sharing a claim or passage, are one), at most ``k`` folds and
    fewer where a fold or its complement would hold one label only (a fold judge needs both to
    learn from; :func:`kit.guard.training.adapt_folds.choose_folds`). ValueError when not even
    two such folds exist."""
    chosen = choose_folds(np.asarray(units), np.asarray(gold).astype(bool), k, seed)
    if chosen is None:
        raise ValueError(
            f"the gold sample's {np.unique(units).size} independent unit(s) cannot be split into "
            "2 folds that each hold both gold labels (and leave both outside): cross-fitting "
            "needs more gold items, from more runs"
        )
    return chosen


def cross_fit(
    fold: np.ndarray, gold_index: np.ndarray, unlabelled_index: np.ndarray, fit: FitPredict
) -> CrossFitted:
    """For each fold j: a judge fitted on the gold items outside j predicts the gold items of j
    and every unlabelled item (one ``fit`` call per fold). ``gold_index`` /
    ``unlabelled_index`` are the items' numbers in the caller's numbering; ``fold[i]`` is gold
    item i's fold."""
    fold = np.asarray(fold, dtype=int)
    gold_index = np.asarray(gold_index, dtype=int)
    unlabelled_index = np.asarray(unlabelled_index, dtype=int)
    if fold.shape != gold_index.shape:
        raise ValueError(f"{fold.size} folds for {gold_index.size} gold items")
    folds = np.unique(fold)
    if folds.size < 2:
        raise ValueError("cross-fitting needs at least 2 folds")
    oof = np.full(gold_index.size, np.nan)
    unl = np.full((unlabelled_index.size, folds.size), np.nan)
    for j, f in enumerate(folds):
        held = fold == f
        asked = np.concatenate([gold_index[held], unlabelled_index])
        pred = np.asarray(fit(np.flatnonzero(~held), asked), dtype=float)
        if pred.shape != asked.shape:
            raise ValueError(f"a fold judge gave {pred.size} predictions for {asked.size} items")
        oof[held] = pred[: int(held.sum())]
        unl[:, j] = pred[int(held.sum()) :]
    if not (np.isfinite(oof).all() and np.isfinite(unl).all()):
        raise ValueError("a fold judge gave a non-finite prediction")
    return CrossFitted(oof, unl, fold, int(folds.size))


def cross_fitted_mean(
    gold: np.ndarray,
    gold_index: np.ndarray,
    unlabelled_index: np.ndarray,
    units: np.ndarray,
    clusters_gold: np.ndarray,
    clusters_unlabelled: np.ndarray,
    fit: FitPredict,
    folds: int = FOLDS,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[MeanEstimate, CrossFitted]:
    """The cross-fitted rate of the gold labels: folds of whole ``units`` (:func:`gold_folds`),
    one judge per fold (:func:`cross_fit`), the cross-PPI estimate with lambda = 1 (the paper's)
    and its cluster-robust interval (:func:`kit.stats.crossppi.cluster_crossppi_mean`; the
    units must nest the clusters, so a fold never splits a cluster)."""
    _, fold = gold_folds(units, gold, folds, seed)
    fitted = cross_fit(fold, gold_index, unlabelled_index, fit)
    est = cluster_crossppi_mean(
        gold,
        fitted.judge_gold,
        fitted.judge_unlabelled,
        clusters_gold,
        clusters_unlabelled,
        alpha,
        lam=1.0,
    )
    return est, fitted
