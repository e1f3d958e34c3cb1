"""The ``fitted`` scoring rule: a logistic combination of a cross-encoder's signals, fitted on a
lab's own labelled sample by ``kit guard adapt`` (pure functions, no I/O).

For one (claim, window) with P(entailment) e, P(contradiction) c and the relatedness
bi-encoder's score r = clip((1 + cos) / 2, 0, 1):

    s = sigmoid(b + w_e * e + w_c * c + w_r * r),   s(pair) = max over windows.

The fixed rules weigh these signals by hand (``entailment``: e alone; ``two_signal``: (e + r)/2).
Which balance separates supported from unsupported citations depends on the lab's domain and
on what its unsupported citations look like (off-topic papers: r matters; same paper, wrong
finding: c matters), so adaptation may learn it: four numbers, fitted by ridge-penalised
maximum likelihood (Newton-Raphson / IRLS), on the window each pair's parent rule reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

FEATURES = ("entailment", "contradiction", "relatedness")
RIDGE = 1.0  # L2 penalty on the weights (not the intercept); features lie in [0, 1]


@dataclass(frozen=True)
class FittedRule:
    """The fitted rule's parameters (a card's ``extra.fitted``)."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    intercept: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "weights": [round(float(w), 6) for w in self.weights],
            "intercept": round(float(self.intercept), 6),
            "formula": "s = sigmoid(intercept + sum(weights * features)) per (claim, window); "
            "s = max over windows",
        }


def rule_from_dict(d: Mapping[str, Any]) -> FittedRule:
    """A card's ``extra.fitted`` read back; ValueError naming what is wrong."""
    feats = tuple(str(f) for f in d.get("features", ()))
    weights = tuple(float(w) for w in d.get("weights", ()))
    if not feats or any(f not in FEATURES for f in feats) or len(set(feats)) != len(feats):
        raise ValueError(f"features must be distinct names among {', '.join(FEATURES)}")
    if len(weights) != len(feats):
        raise ValueError(f"{len(feats)} features need {len(feats)} weights; got {len(weights)}")
    b = float(d.get("intercept", float("nan")))
    if not np.all(np.isfinite([*weights, b])):
        raise ValueError("weights and intercept must be finite numbers")
    # round-trip through to_dict: a rule read from a card scores exactly as it was written
    return FittedRule(feats, tuple(round(w, 6) for w in weights), round(b, 6))


def feature_matrix(signals: Mapping[str, np.ndarray], features: Sequence[str]) -> np.ndarray:
    """[n, len(features)] from per-(claim, window) signal arrays named as in :data:`FEATURES`."""
    return np.column_stack([np.asarray(signals[f], dtype=np.float64) for f in features])


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # stable for large |z|


def fitted_score(rule: FittedRule, x: np.ndarray) -> np.ndarray:
    """s = sigmoid(b + x @ w) for feature rows ``x`` [n, k] in the rule's feature order."""
    x = np.asarray(x, dtype=np.float64).reshape(-1, len(rule.features))
    return _sigmoid(rule.intercept + x @ np.asarray(rule.weights, dtype=np.float64))


def fit_rule(
    x: np.ndarray, y: np.ndarray, features: Sequence[str], ridge: float = RIDGE
) -> FittedRule:
    """Ridge-penalised logistic regression of ``y`` (1 = supported) on ``x`` [n, k]:
    maximise sum(y log p + (1 - y) log(1 - p)) - ridge / 2 * |w|^2 by Newton-Raphson
    (deterministic; the penalty keeps it finite when the classes separate)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, k = x.shape
    if n == 0 or y.min() == y.max():
        raise ValueError("fitting needs both supported and unsupported pairs")
    a = np.column_stack([np.ones(n), x])
    pen = np.full(k + 1, float(ridge))
    pen[0] = 0.0
    beta = np.zeros(k + 1)
    beta[0] = np.log(y.mean() / (1.0 - y.mean()))
    for _ in range(100):
        p = _sigmoid(a @ beta)
        grad = a.T @ (y - p) - pen * beta
        hess = (a * (p * (1.0 - p))[:, None]).T @ a + np.diag(pen) + 1e-9 * np.eye(k + 1)
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    return FittedRule(
        tuple(features),
        tuple(round(float(v), 6) for v in beta[1:]),
        round(float(beta[0]), 6),
    )


def best_rows(window_scores: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Per pair, the index of its highest-scoring window (ties: the earlier), -1 without one."""
    best = np.full(n, -1)
    top = np.full(n, -np.inf)
    for j, i in enumerate(np.asarray(owner, dtype=int)):
        if window_scores[j] > top[i]:
            top[i], best[i] = window_scores[j], j
    return best


def pair_scores(rule: FittedRule, x_windows: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """The rule's pair scores: max over each pair's windows (0 for a pair without a window)."""
    out = np.zeros(n)
    if len(owner):
        np.maximum.at(out, np.asarray(owner, dtype=int), fitted_score(rule, x_windows))
    return out


def cross_validated(
    x_windows: np.ndarray,
    owner: np.ndarray,
    rows: np.ndarray,
    y: np.ndarray,
    folds: np.ndarray,
    features: Sequence[str],
    ridge: float = RIDGE,
) -> np.ndarray:
    """Out-of-fold pair scores of the fitted rule: for each fold, the rule is fitted on the
    other folds' pairs (each read at its window ``rows``) and scores this fold's pairs over
    all their windows -- the same max-over-windows rule a card applies."""
    n = len(y)
    owner = np.asarray(owner, dtype=int)
    y = np.asarray(y, dtype=float)
    out = np.zeros(n)
    for f in np.unique(folds):
        fit_mask = (folds != f) & (rows >= 0)
        rule = fit_rule(x_windows[rows[fit_mask]], y[fit_mask], features, ridge)
        test = folds == f
        out[test] = pair_scores(rule, x_windows, owner, n)[test]
    return out


__all__ = [
    "FEATURES",
    "FittedRule",
    "best_rows",
    "cross_validated",
    "feature_matrix",
    "fit_rule",
    "fitted_score",
    "pair_scores",
    "rule_from_dict",
]
