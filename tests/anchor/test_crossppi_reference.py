"""kit.stats.crossppi against ppi-python 0.2.3's cross-prediction functions
(``crossppi_mean_pointestimate`` / ``crossppi_mean_ci``, the reference implementation of Zrnic &
Candes 2024), to 1e-6, on the same folds and the same fold judges; and the power-tuned variant
against ppi-python's PPI++ on the cross-fitted arrays.

The fold judges are a least-squares fit (SYNTHETIC features and labels), fitted by the kit's
own :func:`kit.anchor.cross_fit.cross_fit` on the kit's own folds; ppi-python is given the
predictions they made. As in test_ppi_reference.py, ppi-python's outputs are frozen in
``crossppi_python_reference.json`` (written by make_ppi_reference.py with the sha256 of each
case's inputs) and compared live where ppi_py is importable.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from ppi_reference_helpers import _triple, inputs_sha256

from kit.anchor.cross_fit import cross_fit, gold_folds
from kit.core.errors import ConfigError
from kit.stats.crossppi import cluster_crossppi_mean, crossppi_lambda, crossppi_mean
from kit.stats.ppi import cluster_ppi_mean

TOL = 1e-6
REFERENCE = Path(__file__).with_name("crossppi_python_reference.json")

# (seed, n gold, N unlabelled, signal strength, folds, alpha)
CASES = [
    (0, 60, 600, 1.5, 5, 0.05),
    (1, 150, 300, 3.0, 5, 0.1),
    (2, 40, 2000, 0.0, 4, 0.05),  # no signal: the fold judges learn nothing
    (3, 250, 1200, 2.0, 10, 0.05),
    (4, 24, 80, 1.0, 2, 0.2),
]
CASE_ARGS = ("seed", "n", "big_n", "signal", "k", "alpha")


def _items(seed: int, n: int, big_n: int, signal: float) -> tuple[np.ndarray, np.ndarray]:
    """SYNTHETIC: 3 features, gold ~ Bernoulli(sigmoid(signal * x . beta - 0.5))."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n + big_n, 3))
    p = 1 / (1 + np.exp(-(signal * x @ np.array([1.0, -0.5, 0.25]) - 0.5)))
    return x, (rng.random(n + big_n) < p).astype(float)


def _least_squares(x: np.ndarray, y: np.ndarray):
    """fit_predict: least squares of gold on [1, x] over the training gold items, clipped to
    [0, 1] (a SYNTHETIC stand-in for adapting a verifier)."""

    def fit(train: np.ndarray, idx: np.ndarray) -> np.ndarray:
        a = np.column_stack([np.ones(train.size), x[train]])
        coef, *_ = np.linalg.lstsq(a, y[train], rcond=None)
        return np.clip(np.column_stack([np.ones(idx.size), x[idx]]) @ coef, 0, 1)

    return fit


def arrays(case: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(gold, out-of-fold predictions, [N, K] unlabelled predictions, folds) of one case."""
    seed, n, big_n, signal, k, _ = case
    x, y = _items(seed, n, big_n, signal)
    _, fold = gold_folds(np.arange(n), y[:n], k, seed)
    fitted = cross_fit(fold, np.arange(n), np.arange(n, n + big_n), _least_squares(x, y))
    return y[:n], fitted.judge_gold, fitted.judge_unlabelled, fold


def reference(ppi: ModuleType, case: tuple) -> dict[str, Any]:
    """ppi-python's numbers on one case: its cross-prediction estimator and interval, and
    PPI++ (lam=None) on (gold, out-of-fold, fold average)."""
    alpha = case[-1]
    y, oof, unl, fold = arrays(case)
    return {
        "inputs_sha256": inputs_sha256(y, oof, unl, fold),
        "crossppi": _triple(
            ppi.crossppi_mean_pointestimate(y, oof, unl),
            ppi.crossppi_mean_ci(y, oof, unl, alpha=alpha),
        ),
        "crossppi_tuned": _triple(
            ppi.ppi_mean_pointestimate(y, oof, unl.mean(axis=1), lam=None),
            ppi.ppi_mean_ci(y, oof, unl.mean(axis=1), alpha=alpha, lam=None),
        ),
    }


def ours(case: tuple) -> dict[str, Any]:
    alpha = case[-1]
    y, oof, unl, fold = arrays(case)

    def t(e: Any) -> list[float]:
        return [e.estimate, e.ci_low, e.ci_high]

    return {
        "inputs_sha256": inputs_sha256(y, oof, unl, fold),
        "crossppi": t(crossppi_mean(y, oof, unl, alpha)),
        "crossppi_tuned": t(crossppi_mean(y, oof, unl, alpha, lam=None)),
    }


def _compare(got: dict[str, Any], want: dict[str, Any], case: tuple) -> None:
    assert got["inputs_sha256"] == want["inputs_sha256"], (
        f"case {case}: the synthetic inputs or folds differ from those the reference was made "
        "on: rerun tests/anchor/make_ppi_reference.py with ppi-python"
    )
    for key in ("crossppi", "crossppi_tuned"):
        assert got[key] == pytest.approx(want[key], abs=TOL), (case, key)


@pytest.mark.parametrize(CASE_ARGS, CASES)
def test_equals_frozen_ppi_python(seed, n, big_n, signal, k, alpha) -> None:
    case = (seed, n, big_n, signal, k, alpha)
    frozen = json.loads(REFERENCE.read_text())
    assert frozen["ppi_python"] == "0.2.3"
    _compare(ours(case), frozen["cases"][str(seed)], case)


@pytest.mark.parametrize(CASE_ARGS, CASES)
def test_live_equals_ppi_python(seed, n, big_n, signal, k, alpha) -> None:
    ppi = pytest.importorskip("ppi_py")
    case = (seed, n, big_n, signal, k, alpha)
    _compare(ours(case), reference(ppi, case), case)


@pytest.mark.parametrize(CASE_ARGS, CASES)
def test_the_estimator_written_out(seed, n, big_n, signal, k, alpha) -> None:
    """The paper's estimator by hand: the unlabelled items' fold-average prediction plus the
    gold items' out-of-fold rectifier; every fold judge predicted only what it did not see."""
    y, oof, unl, fold = arrays((seed, n, big_n, signal, k, alpha))
    assert unl.shape == (big_n, np.unique(fold).size)
    want = unl.mean(axis=1).mean() + (y - oof).mean()
    assert crossppi_mean(y, oof, unl, alpha).estimate == pytest.approx(want, abs=1e-12)


def test_the_cases_span_lambda() -> None:
    """The tuned variant is exercised near 0 (no signal) and near 1 (a strong signal)."""
    lams = [crossppi_lambda(*arrays(c)[:3]) for c in CASES]
    assert min(lams) < 0.2 and max(lams) > 0.8


def test_a_fold_judge_never_predicts_its_own_training_items() -> None:
    """cross_fit hands each fold judge only the other folds' gold items and asks it only for
    its held-out fold and the unlabelled items."""
    fold = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    seen: list[tuple[set[int], set[int]]] = []

    def fit(train: np.ndarray, idx: np.ndarray) -> np.ndarray:
        seen.append(({int(i) for i in train}, {int(i) for i in idx}))
        return np.full(idx.size, 0.5)

    gold_index = np.arange(10, 18)
    out = cross_fit(fold, gold_index, np.arange(100, 104), fit)
    assert out.k == 3 and out.judge_unlabelled.shape == (4, 3) and len(seen) == 3
    for trained, asked in seen:
        trained_items = {int(gold_index[i]) for i in trained}
        assert not trained_items & asked


def test_clustered_is_cluster_ppi_on_the_fold_average() -> None:
    """With clusters: the same estimate, its CR1 interval that of PPI on (gold, out-of-fold,
    fold average); with one item per cluster the plug-in variance times G / (G - 1)."""
    y, oof, unl, _ = arrays(CASES[0])
    cg = np.arange(y.size) % 12
    cu = np.arange(unl.shape[0]) % 30 + 100
    got = cluster_crossppi_mean(y, oof, unl, cg, cu, 0.05)
    want = cluster_ppi_mean(y, oof, unl.mean(axis=1), cg, cu, 0.05, 1.0)
    assert (got.estimate, got.ci_low, got.ci_high) == (want.estimate, want.ci_low, want.ci_high)
    single = cluster_crossppi_mean(
        y, oof, unl, np.arange(y.size), np.arange(unl.shape[0]) + y.size, 0.05
    )
    iid = crossppi_mean(y, oof, unl, 0.05)
    g = y.size + unl.shape[0]
    assert single.se == pytest.approx(iid.se * np.sqrt(g / (g - 1)), rel=1e-12)


def test_refuses_a_single_fold_judge() -> None:
    with pytest.raises(ConfigError, match="K >= 2"):
        crossppi_mean(np.array([0.0, 1.0]), np.array([0.2, 0.8]), np.ones((5, 1)))
