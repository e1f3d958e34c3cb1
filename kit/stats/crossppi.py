"""Cross-prediction-powered inference for a mean (a rate) (pure).

Setting as in :mod:`kit.stats.ppi`: gold labels Y on n items drawn uniformly from the judged
items, N judged items without gold. Here the judge is *fitted on the gold items themselves*
(a verifier adapted to the lab's labelled citations). Using the same labels to fit the judge
and to rectify it would double-dip; cross-prediction (Zrnic & Candes, "Cross-prediction-powered
inference", PNAS 121(15) e2322083121, 2024) splits the gold items into K folds, fits one judge
f^(-j) on every fold but j, and uses it only where it has not seen the labels:

    theta_cross = mean_N( fbar(X~_i) ) + mean_n( Y_i - f^(-j(i))(X_i) ),
    fbar = (1/K) sum_j f^(-j)                      (the paper's estimator, for a mean)

-- the unlabelled items predicted by the average of the K fold judges, the rectifier over each
gold item's own out-of-fold prediction. Its interval is the paper's CLT interval, valid under
its stability condition on the fold judges, with the plug-in variances of ppi-python's
``crossppi_mean_ci`` (github.com/aangelopoulos/ppi_py)::

    theta_cross +- z * sqrt( Var_N(fbar) / N + Var_n(f^(-j) - Y) / n ).

Both are exactly PPI (lambda = 1) on the arrays (Y, out-of-fold predictions, fbar), so they are
computed by :func:`kit.stats.ppi.ppi_mean`; ``lam=None`` applies PPI++'s power tuning to the
cross-fitted predictions (lambda_hat of :func:`kit.stats.ppi.ppi_lambda`, clipped to [0, 1]:
every lambda keeps the rectified estimate unbiased, lambda = 0 is gold-only), so a fold judge
that learnt nothing cannot make the interval wider than the gold labels alone (asymptotically).
Clustered items (the citations of one answer): the cluster-robust (CR1) variance with a t
reference on G - 1 degrees of freedom (:func:`kit.stats.ppi.cluster_ppi_mean`); the folds must
then keep each cluster whole (the caller's folds), or a fold judge has seen the cluster-mates
of the items it rectifies.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from kit.core.errors import check_param
from kit.stats.ppi import MeanEstimate, cluster_ppi_mean, ppi_lambda, ppi_mean


def fold_average(judge_unlabelled: ArrayLike) -> np.ndarray:
    """fbar: the K fold judges' predictions of each unlabelled item averaged ([N, K] -> [N])."""
    u = np.asarray(judge_unlabelled, dtype=float)
    check_param(
        "judge_unlabelled",
        f"shape {u.shape}",
        u.ndim == 2 and u.shape[0] >= 1 and u.shape[1] >= 2,
        "an [N, K] array (N >= 1 unlabelled items, K >= 2 fold judges)",
        "crossppi",
    )
    check_param("judge_unlabelled", "non-finite", bool(np.isfinite(u).all()), "finite", "crossppi")
    return u.mean(axis=1)


def crossppi_lambda(gold: ArrayLike, judge_gold: ArrayLike, judge_unlabelled: ArrayLike) -> float:
    """PPI++'s power-tuned lambda on the cross-fitted predictions: :func:`ppi_lambda` of (Y,
    the out-of-fold predictions, fbar)."""
    return ppi_lambda(gold, judge_gold, fold_average(judge_unlabelled))


def crossppi_mean(
    gold: ArrayLike,
    judge_gold: ArrayLike,
    judge_unlabelled: ArrayLike,
    alpha: float = 0.05,
    lam: float | None = 1.0,
) -> MeanEstimate:
    """Cross-prediction-powered estimate of E[Y] and its 1 - alpha CLT interval (Zrnic &
    Candes 2024, the mean; CLT interval under the paper's stability condition).

    ``judge_gold`` [n]: each gold item's prediction by the fold judge that did not see it;
    ``judge_unlabelled`` [N, K]: every unlabelled item predicted by each of the K fold judges.
    ``lam=1`` is the paper's estimator (ppi-python's ``crossppi_mean_pointestimate`` /
    ``crossppi_mean_ci``); ``lam=None`` power-tunes lambda (:func:`crossppi_lambda`)."""
    fbar = fold_average(judge_unlabelled)
    return ppi_mean(gold, judge_gold, fbar, alpha, lam)


def cluster_crossppi_mean(
    gold: ArrayLike,
    judge_gold: ArrayLike,
    judge_unlabelled: ArrayLike,
    clusters_gold: ArrayLike,
    clusters_unlabelled: ArrayLike,
    alpha: float = 0.05,
    lam: float | None = 1.0,
) -> MeanEstimate:
    """:func:`crossppi_mean` for items in clusters: the same estimate, its variance the CR1
    cluster-robust variance of the linearisation (psi = lambda (fbar_i - mean fbar) / N for an
    unlabelled item, ((Y_j - lambda f_j) - mean) / n for a gold item, summed within clusters),
    t on G - 1 degrees of freedom (:func:`kit.stats.ppi.cluster_ppi_mean`). The folds that made
    ``judge_gold`` must keep every cluster whole."""
    fbar = fold_average(judge_unlabelled)
    return cluster_ppi_mean(gold, judge_gold, fbar, clusters_gold, clusters_unlabelled, alpha, lam)
