"""Calibration of the certification rule (Appendix F.5): sign-flip null and leave-one-cluster-out.

Sign-flip null. Each contrast's paired differences are centred (so no system differs), and
their signs are flipped per cluster with ONE sign vector per draw shared by every contrast, so
that the family is defined jointly. The rule is re-applied to every flipped contrast with its
radius recomputed; the statistic of a draw is max over contrasts of |gap'| / (q' + eps_outside)
(= |mean|/q on exact cells), so a draw falsely certifies something iff the statistic exceeds 1.
Family-wise false certification = P(stat > 1); c* = the 95th percentile of the statistic (the
radius scale at which the rate is nominal). With K clusters there are only 2^K sign vectors;
when 2^K <= draws they are enumerated exactly, each with weight 2^-K.

Vectorisation: with C[p, g] the cluster sums of centred differences and n[p, g] the cluster
task counts, a draw with signs s has gap' = C s / N and
sum_g S_g'^2 = sum_g C^2 - 2 gap' (C * n) s + gap'^2 sum_g n^2, so every draw of every contrast
is a handful of matrix products.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from kit.core.parallel import SerialMap, split
from kit.stats.cluster import SE_FLOOR, cluster_sums, variance_weights
from kit.stats.signflip import sign_vectors

DECIDABLE = ("certified", "undecided_sampling", "undecided_attribution")


@dataclass(frozen=True)
class SignFlipNull:
    """The null distribution of the family statistic."""

    statistic: np.ndarray  # (B,) max over contrasts of |gap'| / (q' + eps)
    weights: np.ndarray  # (B,) probabilities (uniform, or 2^-K when enumerated)
    exact: bool
    fwer: float  # P(stat > 1)
    c_star: float  # weighted 95th percentile of the statistic
    per_contrast: np.ndarray  # (P,) P(contrast p falsely certifies) under the null


def _weighted_quantile(x: np.ndarray, w: np.ndarray, q: float) -> float:
    order = np.argsort(x, kind="stable")
    cum = np.cumsum(w[order])
    return float(x[order][np.searchsorted(cum, q - 1e-12)])


def _flip_chunks(
    c: np.ndarray,
    n: np.ndarray,
    a_term: np.ndarray,
    cn: np.ndarray,
    n2: np.ndarray,
    crit: np.ndarray,
    eps: np.ndarray,
    signs: np.ndarray,
    weights: np.ndarray,
    chunk: int,
    starts: list[int],
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(statistic per draw, weighted false certifications per contrast) of the draw chunks
    beginning at ``starts`` (see :func:`sign_flip_null`; the module doc's algebra)."""
    results = []
    for start in starts:
        sg = signs[start : start + chunk].T  # (G, b)
        gap = (c @ sg) / n[:, None]
        ss = a_term - 2 * gap * (cn @ sg) + gap**2 * n2
        se = np.sqrt(np.maximum(ss, 0.0)) / n[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.abs(gap) / (crit[:, None] * se + eps)
        # a degenerate draw (se at the floor, or undefined) certifies nothing
        ratio = np.where(np.isfinite(ratio) & (se > SE_FLOOR), ratio, 0.0)
        stat = ratio.max(axis=0) if len(ratio) else np.zeros(sg.shape[1])
        results.append((stat, (ratio > 1) @ weights[start : start + chunk]))
    return results


def sign_flip_null(
    d: np.ndarray,
    codes: np.ndarray,
    n_clusters: int,
    eps_outside: np.ndarray,
    delta: float,
    draws: int,
    rng: np.random.Generator,
    chunk: int = 256,
    method: str = "cr1",
    crit: np.ndarray | None = None,
    mapper: Any = None,
) -> SignFlipNull:
    """Family-wise false certification under the sign-flip null (Appendix F.5).

    ``d`` (P, T) holds the paired differences of the decidable contrasts (NaN = dropped);
    ``eps_outside`` (P,) their nuisance radii; ``delta`` the per-contrast level alpha/m.
    ``method`` is the variance of the radius (``cr1``, ``cr2``, ``crv3``) and ``crit`` (P,) its
    critical values (default: the t quantile with K - 1 df); a flipped se at or below
    ``SE_FLOOR`` certifies nothing, exactly as ``decide`` labels it too_little_variation.
    The sign vectors are drawn here from ``rng``; ``mapper`` (:class:`kit.core.parallel.SerialMap`
    when None, or a Ray one) evaluates groups of ``chunk`` draws, and the results are summed
    in draw order, so every mapper gives the same floats.
    """
    d = np.atleast_2d(np.asarray(d, dtype=float))
    n, _, s_sum, counts = cluster_sums(d, codes, n_clusters)
    # cluster_sums centres d, so s_sum already holds the centred cluster sums C[p, g].
    c = s_sum
    k = (counts > 0).sum(axis=1)
    if crit is None:
        with np.errstate(invalid="ignore"):
            crit = stats.t.ppf(1 - delta / 2, k - 1)
    crit = np.asarray(crit, dtype=float)
    w = np.nan_to_num(variance_weights(counts, method))
    a_term = (w * c**2).sum(axis=1)[:, None]
    cn = w * c * counts
    n2 = (w * counts**2).sum(axis=1)[:, None]
    eps = np.asarray(eps_outside, dtype=float)[:, None]
    signs, weights, exact = sign_vectors(n_clusters, draws, rng)  # drawn here, in one stream
    starts = range(0, len(signs), chunk)
    run = mapper or SerialMap()
    groups = [[starts[i] for i in part] for part in split(len(starts), run.parts)]
    stats_of = functools.partial(
        _flip_chunks, c, n, a_term, cn, n2, crit, eps, signs, weights, chunk
    )
    out = np.empty(len(signs))
    per = np.zeros(len(c))
    for group, results in zip(groups, run.map(stats_of, groups), strict=True):
        for start, (stat, hits) in zip(group, results, strict=True):  # in draw order
            out[start : start + chunk] = stat
            per += hits
    fwer = float(weights[out > 1].sum())
    c_star = _weighted_quantile(out, weights, 0.95)
    return SignFlipNull(out, weights, exact, fwer, c_star, per)


def removed_by_c_star(pairs: pd.DataFrame, c_star: float) -> pd.DataFrame:
    """Certified rows whose |gap| / (q + eps_outside) does not exceed c* (removed if c* > 1)."""
    cert = pairs[pairs["verdict"] == "certified"]
    ratio = cert["gap"].abs() / (cert["q"] + cert["eps_outside"])
    out = cert.assign(ratio=ratio)[ratio <= c_star]
    return out[["system_a", "system_b", "readout", "winner", "ratio"]].reset_index(drop=True)


def certified_set(pairs: pd.DataFrame) -> set[tuple[str, str, str, str]]:
    """The certified relations as (system_a, system_b, readout, winner) tuples."""
    cert = pairs[pairs["verdict"] == "certified"]
    return set(
        cert[["system_a", "system_b", "readout", "winner"]].itertuples(index=False, name=None)
    )


def loco_row(
    cluster: str, full: set[tuple[str, str, str, str]], left: set[tuple[str, str, str, str]]
) -> dict[str, object]:
    """Leave-one-cluster-out comparison of two certified sets (Jaccard, lost, gained, flips)."""
    union = full | left
    full_pairs = {(a, b, r): w for a, b, r, w in full}
    left_pairs = {(a, b, r): w for a, b, r, w in left}
    flips = sum(1 for key, w in left_pairs.items() if key in full_pairs and full_pairs[key] != w)
    return {
        "cluster_left_out": cluster,
        "n_certified_full": len(full),
        "n_certified": len(left),
        "jaccard": 1.0 if not union else len(full & left) / len(union),
        "n_lost": len(full - left),
        "n_gained": len(left - full),
        "n_winner_flips": flips,
    }
