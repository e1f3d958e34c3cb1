"""The cluster sign-flip randomisation test of a mean of paired differences, as a radius.

Under H0: mu = mu0 with cluster totals of (d - mu0) symmetric about 0 (exchangeable systems
within a cluster make each cluster's paired differences symmetric), flipping the sign of whole
clusters leaves the law of the data unchanged. The statistic is the studentised
|gap - mu0| / max(se, SE_FLOOR) with the CR1 se recomputed on every flipped data set. Its
randomisation distribution over all 2^K sign vectors (each weight 2^-K) -- or over the identity
plus ``draws`` uniform random vectors when 2^K > draws, which keeps the test valid (Hemerik and
Goeman 2018) -- gives the critical value c: the smallest value with weight{stat > c} <= delta'.
Rejecting when the observed statistic exceeds c has level <= delta' (Canay, Romano and Shaikh
2017 for the cluster approximate-symmetry version). The radius is q = c * se, so the Eq. (4)
verdict |gap| > q + eps is the test of H0 at mu0 = clip(gap, -eps, eps), the point of
{|mu| <= eps} nearest the estimate.

With K clusters no p-value is below 2 / 2^K: a board with few clusters cannot certify at a
Bonferroni level below that, whatever its gaps (an honest zero power, not a failure).

Vectorisation (as in :mod:`kit.certify.calibration`): with T[p, g] the cluster totals of
d - mu0 and n[p, g] the counts, a sign vector s gives gap' = T s / N and
sum_g w S_g'^2 = sum w T^2 - 2 gap' (w T n) s + gap'^2 sum w n^2.
"""

from __future__ import annotations

import itertools

import numpy as np

from kit.core.errors import check_param
from kit.stats.cluster import SE_FLOOR, ClusterT, cluster_sums, cluster_t, variance_weights

TIE_MARGIN = 1e-9  # relative widening of c (ties and rounding never certify)


def sign_vectors(
    n_clusters: int, draws: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, bool]:
    """All 2^K sign vectors when 2^K <= draws (exact), else ``draws`` random ones."""
    check_param("draws", draws, draws >= 1, "an integer >= 1", "sign_vectors")
    if n_clusters <= 30 and 2**n_clusters <= draws:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n_clusters)))
        return signs, np.full(len(signs), 1.0 / len(signs)), True
    signs = rng.choice(np.array([1.0, -1.0]), size=(draws, n_clusters))
    return signs, np.full(draws, 1.0 / draws), False


def test_vectors(
    n_clusters: int, draws: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Sign vectors for a valid randomisation test: all 2^K, or the identity + ``draws`` random."""
    signs, weights, exact = sign_vectors(n_clusters, draws, rng)
    if exact:
        return signs, weights, True
    signs = np.vstack([np.ones((1, n_clusters)), signs])
    return signs, np.full(len(signs), 1.0 / len(signs)), False


def flipped_statistics(
    totals: np.ndarray, counts: np.ndarray, signs: np.ndarray, chunk: int = 512
) -> np.ndarray:
    """|gap'| / max(se', SE_FLOOR) (P, B) for every contrast and sign vector (CR1 se)."""
    w = np.nan_to_num(variance_weights(counts, "cr1"))
    n = counts.sum(axis=1)[:, None]
    a_term = (w * totals**2).sum(axis=1)[:, None]
    wtn = w * totals * counts
    wn2 = (w * counts**2).sum(axis=1)[:, None]
    out = np.empty((len(totals), len(signs)))
    for start in range(0, len(signs), chunk):
        sg = signs[start : start + chunk].T
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = (totals @ sg) / n
            ss = a_term - 2 * gap * (wtn @ sg) + gap**2 * wn2
            se = np.sqrt(np.maximum(ss, 0.0)) / n
            out[:, start : start + chunk] = np.abs(gap) / np.maximum(se, SE_FLOOR)
    return out


def upper_critical(stat: np.ndarray, weights: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Per row, the smallest value c of ``stat`` with weight{stat > c} <= delta."""
    order = np.sort(stat, axis=1)
    tail = 1.0 - np.cumsum(np.broadcast_to(weights, stat.shape), axis=1)
    # the weight above a value is the tail after its LAST copy (ties share one tail)
    last = np.concatenate(
        [order[:, 1:] != order[:, :-1], np.ones((len(order), 1), dtype=bool)], axis=1
    )
    j = np.argmax((tail <= delta[:, None] + 1e-12) & last, axis=1)
    return order[np.arange(len(order)), j]


def _randomisation(
    totals: np.ndarray, counts: np.ndarray, signs: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(statistics (P, B), p-values (P,)); row 0 of ``signs`` is the identity (observed)."""
    stat = flipped_statistics(totals, counts, signs)
    observed = stat[:, :1]
    p = ((stat >= observed * (1 - 1e-12)) * weights).sum(axis=1)
    return stat, p


def signflip_t(
    d: np.ndarray,
    codes: np.ndarray,
    n_clusters: int,
    delta: float | np.ndarray,
    eps: np.ndarray,
    draws: int,
    rng: np.random.Generator,
) -> ClusterT:
    """The sign-flip radius of every row of ``d`` (module docstring): q = c * se (CR1 se).

    ``eps`` (P,) are the nuisance radii of Eq. (4) (the null point is clip(gap, -eps, eps));
    ``p`` is the randomisation p-value of mu = 0. ``df`` is NaN (no t reference).
    """
    base = cluster_t(d, codes, n_clusters, delta, "cr1")
    size = len(base.n)
    delta_arr = np.broadcast_to(np.asarray(delta, dtype=float), (size,))
    eps = np.broadcast_to(np.asarray(eps, dtype=float), (size,))
    ok = np.isfinite(base.se)
    gap = base.gap[ok]
    _, _, s, counts = cluster_sums(d, codes, n_clusters)
    s, counts = s[ok], counts[ok]
    signs, weights, _ = test_vectors(n_clusters, draws, rng)  # row 0: the identity
    bound = np.where(np.isfinite(eps[ok]), eps[ok], 0.0)
    mu0 = np.clip(gap, -bound, bound)
    stat, p_null = _randomisation(s + counts * (gap - mu0)[:, None], counts, signs, weights)
    crit = np.full(size, np.nan)
    # widened by TIE_MARGIN: the observed statistic is itself one of the values, and rounding
    # of crit * se must not let a statistic equal to c certify (the test rejects on stat > c)
    crit[ok] = upper_critical(stat, weights, delta_arr[ok]) * (1.0 + TIE_MARGIN)
    if np.any(mu0 != 0):
        _, p_null = _randomisation(s + counts * gap[:, None], counts, signs, weights)
    p = np.full(size, np.nan)
    p[ok] = p_null
    return ClusterT(
        n=base.n,
        k=base.k,
        gap=base.gap,
        se=base.se,
        t=base.t,
        p=p,
        q=crit * base.se,
        df=np.full(size, np.nan),
        crit=crit,
    )
