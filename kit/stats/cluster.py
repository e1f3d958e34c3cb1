"""Cluster-robust t radius for a mean of paired differences (Eq. (4); docs/architecture.md).

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

Small-sample variants (``method``), all of the form se^2 = sum_g w_g S_g^2 / N^2 for the
intercept-only model (X = 1, H_gg = J/N, so every matrix of the general formulas is closed form):

* ``cr1``  w_g = K/(K-1), reference t_{K-1} (the paper's radius; statsmodels' default).
* ``cr2``  the bias-reduced "CR2" of Bell and McCaffrey (2002): residuals of cluster g are
  pre-multiplied by (I - H_gg)^{-1/2}; for the intercept (I - J/N)^{-1/2} scales the cluster
  sum by (1 - n_g/N)^{-1/2}, so w_g = 1 / (1 - n_g/N). Reference t with the Bell-McCaffrey
  (Satterthwaite) degrees of freedom of Imbens and Kolesar (2016, Eq. 11 with the working
  covariance Omega = sigma^2 I; Pustejovsky and Tipton 2018 Section 3):
  df = (tr M)^2 / tr(M^2), M = G'G, G_g = (I - H)_{.,g} A_g X_g (X'X)^{-1} -- here
  M = C (diag(n) - n n'/N) C with C = diag((1 - n_g/N)^{-1/2}) (the common 1/N cancels).
* ``crv3`` the cluster jackknife "CV3" of MacKinnon, Nielsen and Webb (2023, Eq. 7):
  (K-1)/K sum_g (beta_{-g} - beta)^2, and beta_{-g} - beta = -S_g / (N - n_g) for the mean, so
  w_g = (K-1)/K * N^2 / (N - n_g)^2; reference t_{K-1}.

An se at or below :data:`SE_FLOOR` (score units) is no measured variation: the certify rule
labels it ``too_little_variation`` rather than dividing by it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from kit.core.errors import check_param

VARIANCES = ("cr1", "cr2", "crv3")
# Floating-point resolution of an se on the [0, 1] score scale: the rounding error of the sums
# behind an se over N <= 10^6 tasks is below N * 2^-52 ~ 2.2e-10, so an se <= 1e-9 carries no
# measured variation (a constant per-task gap, identical systems, a degenerate sign flip).
SE_FLOOR = 1e-9


@dataclass(frozen=True)
class ClusterT:
    """Per-contrast cluster-robust t quantities (arrays of shape (P,)).

    ``se``, ``t``, ``p``, ``q``, ``df`` and ``crit`` are NaN where the statistic is undefined
    (K < 2 or N == 0); callers turn those into explicit verdicts, never a silent 0. ``q`` is
    always ``crit * se``: the radius a verdict uses.
    """

    n: np.ndarray  # tasks used (both sides scored)
    k: np.ndarray  # clusters among those tasks
    gap: np.ndarray  # mean paired difference
    se: np.ndarray  # standard error of the mean (CR1, CR2 or CRV3)
    t: np.ndarray  # gap / se (0 when gap = se = 0, +-inf when only se = 0)
    p: np.ndarray  # two-sided p-value of gap = 0
    q: np.ndarray  # crit * se
    df: np.ndarray  # reference t degrees of freedom (NaN for a randomisation reference)
    crit: np.ndarray  # critical value at delta' (t quantile, or randomisation quantile)


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


def variance_weights(counts: np.ndarray, method: str) -> np.ndarray:
    """Weights w (P, G) with se^2 = sum_g w_g S_g^2 / N^2 for ``method`` in :data:`VARIANCES`.

    ``counts`` (P, G) are the task counts per cluster; empty clusters get weight 0. Rows with
    fewer than two clusters get NaN weights (the variance is undefined).
    """
    check_param("method", method, method in VARIANCES, f"one of {VARIANCES}", "variance_weights")
    counts = np.asarray(counts, dtype=float)
    present = counts > 0
    k = present.sum(axis=1, keepdims=True).astype(float)
    n = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "cr1":
            w = np.broadcast_to(k / (k - 1), counts.shape)
        elif method == "cr2":
            w = 1.0 / (1.0 - counts / n)
        else:
            w = (k - 1) / k * n**2 / (n - counts) ** 2
    w = np.where(present, w, 0.0)
    return np.where(k >= 2, w, np.nan)


def bell_mccaffrey_df(counts: np.ndarray) -> np.ndarray:
    """Bell-McCaffrey degrees of freedom of the CR2 mean, (tr M)^2 / tr(M^2) (module doc).

    M = D - v v' / N with D = diag(c_g^2 n_g), v_g = c_g n_g, c_g = (1 - n_g/N)^{-1/2}, so
    tr M = sum c^2 n - sum c^2 n^2 / N and
    tr M^2 = sum c^4 n^2 - 2 sum c^4 n^3 / N + (sum c^2 n^2)^2 / N^2 (no G x G matrix).
    Equal cluster sizes give K - 1; NaN for fewer than two clusters.
    """
    counts = np.asarray(counts, dtype=float)
    present = counts > 0
    k = present.sum(axis=1)
    n = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        c2 = np.where(present, 1.0 / (1.0 - counts / n), 0.0)
        n = n[:, 0]
        tr = (c2 * counts).sum(axis=1) - (c2 * counts**2).sum(axis=1) / n
        tr2 = (
            (c2**2 * counts**2).sum(axis=1)
            - 2 * (c2**2 * counts**3).sum(axis=1) / n
            + (c2 * counts**2).sum(axis=1) ** 2 / n**2
        )
        df = tr**2 / tr2
    return np.where(k >= 2, df, np.nan)


def cluster_t(
    d: np.ndarray,
    codes: np.ndarray,
    n_clusters: int,
    delta: float | np.ndarray,
    method: str = "cr1",
) -> ClusterT:
    """Cluster-robust t radius of the mean of each row of ``d`` (Eq. (4), DESIGN A).

    ``delta`` is the per-contrast two-sided level delta' (already Bonferroni-divided); a scalar
    or one value per row. ``method`` is ``cr1`` (the paper's), ``cr2`` (Bell-McCaffrey df) or
    ``crv3`` (jackknife); see the module docstring. Rows with fewer than two clusters get NaN
    ``se``/``t``/``p``/``q``.
    """
    delta_arr = np.broadcast_to(np.asarray(delta, dtype=float), (np.atleast_2d(d).shape[0],))
    check_param(
        "delta", delta, bool(np.all((delta_arr > 0) & (delta_arr < 1))), "in (0, 1)", "cluster_t"
    )
    n, gap, s, counts = cluster_sums(d, codes, n_clusters)
    k = (counts > 0).sum(axis=1).astype(float)
    ok = (k >= 2) & (n > 0)
    w = variance_weights(counts, method)
    with np.errstate(invalid="ignore", divide="ignore"):
        var_sum = np.where(ok, (w * s**2).sum(axis=1), np.nan)
        se = np.sqrt(var_sum) / n
        df = np.where(ok, bell_mccaffrey_df(counts) if method == "cr2" else k - 1, np.nan)
        t = gap / se
        p = np.where(ok, 2 * stats.t.sf(np.abs(t), df), np.nan)
        crit = np.where(ok, stats.t.ppf(1 - delta_arr / 2, df), np.nan)
        q = crit * se
    # se == 0 (all differences equal within the pair): t is +-inf, or 0 when the gap is 0 too.
    t = np.where(ok & (se == 0) & (gap == 0), 0.0, t)
    p = np.where(ok & (se == 0) & (gap != 0), 0.0, p)
    p = np.where(ok & (se == 0) & (gap == 0), 1.0, p)
    return ClusterT(n=n, k=k, gap=gap, se=se, t=t, p=p, q=q, df=df, crit=crit)


def naive_t(d: np.ndarray, alpha: float) -> ClusterT:
    """Ordinary paired t (rule R1 of the paper's Table 2): tasks as independent units.

    Equivalent to :func:`cluster_t` with one cluster per task (se = s / sqrt(N), t_{N-1}).
    """
    d = np.atleast_2d(np.asarray(d, dtype=float))
    codes = np.arange(d.shape[1])
    return cluster_t(d, codes, d.shape[1], alpha)
