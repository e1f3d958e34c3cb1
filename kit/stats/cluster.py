"""Cluster-robust t radius for a mean of paired differences (DESIGN.md section A, Eq. (4)).

The sampling radius q_n(delta') of Eq. (4) in "What Can a Leaderboard Certify?" is the
half-width of a cluster-robust t interval for the mean paired difference:

    gap  = mean_t d_t
    S_g  = sum_{t in g} (d_t - gap)
    se   = sqrt(K / (K - 1) * sum_g S_g^2) / N
    q    = t_{K-1}(1 - delta'/2) * se

This is exactly the CR1 standard error that statsmodels reports for OLS of ``d`` on a constant
with ``cov_type='cluster'`` and its default ``use_correction=True``: statsmodels multiplies by
K/(K-1) * (N-1)/(N-k) with k = 1 regressor, and (N-1)/(N-1) = 1, so ``bse`` equals ``se`` to
rounding. Its p-value and interval match ours only with ``use_t=True`` (t reference with K-1
degrees of freedom; the default is a normal reference); tests/certify/test_stats_cluster.py
checks se, t, p and the half-width q against statsmodels. With singleton clusters (K = N) it
reduces to s / sqrt(N) with t_{N-1}, the ordinary paired t (checked against scipy).

Everything here is vectorised over many contrasts at once: the rows of a (P, T) matrix of
differences with NaN where a task is missing for that contrast (a failure in either system).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from kit.errors import check_param


@dataclass(frozen=True)
class ClusterT:
    """Per-contrast cluster-robust t quantities (arrays of shape (P,)).

    ``se``, ``t``, ``p`` and ``q`` are NaN where the statistic is undefined (K < 2 or N == 0);
    callers turn those into explicit verdicts, never a silent 0.
    """

    n: np.ndarray  # tasks used (both sides scored)
    k: np.ndarray  # clusters among those tasks
    gap: np.ndarray  # mean paired difference
    se: np.ndarray  # CR1 standard error of the mean
    t: np.ndarray  # gap / se
    p: np.ndarray  # two-sided p-value against t_{K-1}
    q: np.ndarray  # t_{K-1}(1 - delta'/2) * se


def cluster_sums(
    d: np.ndarray, codes: np.ndarray, n_clusters: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-contrast task counts, means, cluster sums of centred d and cluster task counts.

    ``d`` is (P, T) with NaN for missing tasks, ``codes`` (T,) integer cluster codes in
    ``[0, n_clusters)``. Returns ``(n, gap, S, counts)`` with ``S`` and ``counts`` of shape
    (P, G), vectorised over contrasts (no loop over clusters or rows).
    """
    d = np.atleast_2d(np.asarray(d, dtype=float))
    codes = np.asarray(codes, dtype=np.int64)
    if np.any(np.diff(codes) < 0):  # group columns by cluster once, so sums are contiguous
        order = np.argsort(codes, kind="stable")
        d, codes = d[:, order], codes[order]
    mask = np.isfinite(d)
    n = mask.sum(axis=1).astype(float)
    filled = np.where(mask, d, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = filled.sum(axis=1) / n
    centred = np.where(mask, d - gap[:, None], 0.0)
    s = np.zeros((d.shape[0], n_clusters))
    counts = np.zeros((d.shape[0], n_clusters))
    if d.shape[1]:
        # reduceat over contiguous cluster blocks: memory-bound, unlike a dense one-hot product
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        s[:, codes[starts]] = np.add.reduceat(centred, starts, axis=1)
        counts[:, codes[starts]] = np.add.reduceat(mask, starts, axis=1, dtype=float)
    return n, gap, s, counts


def cluster_t(
    d: np.ndarray, codes: np.ndarray, n_clusters: int, delta: float | np.ndarray
) -> ClusterT:
    """Cluster-robust (CR1) t radius of the mean of each row of ``d`` (Eq. (4), DESIGN A).

    ``delta`` is the per-contrast two-sided level delta' (already Bonferroni-divided); a scalar
    or one value per row. Rows with fewer than two clusters get NaN ``se``/``t``/``p``/``q``.
    """
    delta_arr = np.broadcast_to(np.asarray(delta, dtype=float), (np.atleast_2d(d).shape[0],))
    check_param(
        "delta", delta, bool(np.all((delta_arr > 0) & (delta_arr < 1))), "in (0, 1)", "cluster_t"
    )
    n, gap, s, counts = cluster_sums(d, codes, n_clusters)
    k = (counts > 0).sum(axis=1).astype(float)
    ok = (k >= 2) & (n > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        var_sum = np.where(ok, k / (k - 1) * (s**2).sum(axis=1), np.nan)
        se = np.sqrt(var_sum) / n
        df = np.where(ok, k - 1, np.nan)
        t = gap / se
        p = np.where(ok, 2 * stats.t.sf(np.abs(t), df), np.nan)
        crit = np.where(ok, stats.t.ppf(1 - delta_arr / 2, df), np.nan)
        q = crit * se
    # se == 0 (all differences equal within the pair): t is +-inf or NaN; p follows from it.
    p = np.where(ok & (se == 0) & (gap != 0), 0.0, p)
    p = np.where(ok & (se == 0) & (gap == 0), 1.0, p)
    return ClusterT(n=n, k=k, gap=gap, se=se, t=t, p=p, q=q)


def naive_t(d: np.ndarray, alpha: float) -> ClusterT:
    """Ordinary paired t (rule R1 of the paper's Table 2): tasks as independent units.

    Equivalent to :func:`cluster_t` with one cluster per task (se = s / sqrt(N), t_{N-1}).
    """
    d = np.atleast_2d(np.asarray(d, dtype=float))
    codes = np.arange(d.shape[1])
    return cluster_t(d, codes, d.shape[1], alpha)
