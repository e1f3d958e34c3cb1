"""ROC-AUC with a DeLong confidence interval, the paired DeLong test of two verifiers' AUCs, and
matched-catch-rate verifier comparison (pure).

Seed 001, Section S2 "Verifier" and Table 1 (AUC with 95% CI per verifier on SciFact gold;
verifiers compared "at a matched catch rate"). Convention: higher score = more support; the
positive class is *supported*. AUC = P(score_pos > score_neg) + 0.5 P(tie), the Mann-Whitney
U statistic divided by n_pos n_neg (assumption: pairs independent; for clustered pairs use a
cluster bootstrap).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm, rankdata

from kit.core.errors import ConfigError, check_param


@dataclass(frozen=True)
class AUC:
    auc: float
    lo: float
    hi: float
    se: float
    n_pos: int
    n_neg: int
    level: float


def _split(scores: np.ndarray, labels: np.ndarray, func: str) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels).astype(bool)
    check_param("scores", s.size, s.size == y.size, "aligned with labels", func)
    pos, neg = s[y], s[~y]
    if pos.size == 0 or neg.size == 0:
        raise ConfigError(
            "undefined_statistic",
            f"{func}: AUC is undefined with {pos.size} positive and {neg.size} negative items",
        )
    return pos, neg


def roc_auc(
    scores: np.ndarray | list[float], labels: np.ndarray | list[bool], level: float = 0.95
) -> AUC:
    """AUC (Mann-Whitney, ties 1/2) with DeLong et al. (1988) variance via midranks.

    V10_i = (rank of pos_i in all - rank of pos_i among pos) / n_neg, V01_j likewise;
    var = var(V10)/n_pos + var(V01)/n_neg. The CI is the normal interval clipped to [0, 1].
    """
    pos, neg = _split(np.asarray(scores), np.asarray(labels), "roc_auc")
    m, n = pos.size, neg.size
    v10, v01 = _placements(pos, neg)
    auc = float(v10.mean())
    var = (v10.var(ddof=1) / m if m > 1 else 0.0) + (v01.var(ddof=1) / n if n > 1 else 0.0)
    se = float(np.sqrt(var))
    z = float(norm.ppf(1 - (1 - level) / 2))
    return AUC(
        auc=auc,
        lo=max(0.0, auc - z * se),
        hi=min(1.0, auc + z * se),
        se=se,
        n_pos=m,
        n_neg=n,
        level=level,
    )


@dataclass(frozen=True)
class AUCDifference:
    """AUC of verifier A minus AUC of verifier B on the same items (paired)."""

    auc_a: float
    auc_b: float
    diff: float
    lo: float
    hi: float
    se: float
    p_value: float  # two-sided, H0: AUC_A = AUC_B
    n_pos: int
    n_neg: int
    level: float


def _placements(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's structural components via midranks: V10 (one per positive), V01 (per negative).

    V10_i = P(pos_i > neg) + P(tie)/2 over the negatives; V01_j = P(pos > neg_j) + P(tie)/2 over
    the positives. The AUC is the mean of either.
    """
    m, n = pos.size, neg.size
    allr = rankdata(np.concatenate([pos, neg]))
    v10 = (allr[:m] - rankdata(pos)) / n
    v01 = 1.0 - (allr[m:] - rankdata(neg)) / m
    return v10, v01


def _paired(
    scores_a: np.ndarray | list[float],
    scores_b: np.ndarray | list[float],
    labels: np.ndarray | list[bool],
    func: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two verifiers' scores and the labels of the same items, as arrays, checked aligned."""
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    y = np.asarray(labels).astype(bool)
    check_param(
        "scores_b", b.size, a.size == b.size == y.size, "aligned with scores_a and labels", func
    )
    return a, b, y


def paired_auc_difference(
    scores_a: np.ndarray | list[float],
    scores_b: np.ndarray | list[float],
    labels: np.ndarray | list[bool],
    level: float = 0.95,
) -> AUCDifference:
    """AUC_A - AUC_B on the same items with the paired DeLong variance and a z test.

    DeLong, DeLong & Clarke-Pearson (1988), Biometrics 44:837, eq. for correlated ROC curves:
    with structural components V10 (positives) and V01 (negatives) of each verifier, S10 and S01
    their 2x2 sample covariance matrices (ddof 1) and c = (1, -1),
    var(AUC_A - AUC_B) = c'S10c / n_pos + c'S01c / n_neg. The CI is the normal interval (not
    clipped); p = 2 (1 - Phi(|diff| / se)). Assumption: items independent (for clustered items
    use a cluster bootstrap of the difference). Both verifiers scored every item; the
    correlation between their scores is what the pairing removes from the variance.
    """
    a, b, y = _paired(scores_a, scores_b, labels, "paired_auc_difference")
    check_param("level", level, 0.0 < level < 1.0, "in (0, 1)", "paired_auc_difference")
    pos_a, neg_a = _split(a, y, "paired_auc_difference")
    v10a, v01a = _placements(pos_a, neg_a)
    v10b, v01b = _placements(b[y], b[~y])
    m, n = v10a.size, v01a.size
    d10, d01 = v10a - v10b, v01a - v01b
    var = (d10.var(ddof=1) / m if m > 1 else 0.0) + (d01.var(ddof=1) / n if n > 1 else 0.0)
    se = float(np.sqrt(max(var, 0.0)))
    auc_a, auc_b = float(v10a.mean()), float(v10b.mean())
    diff = auc_a - auc_b
    z = float(norm.ppf(1 - (1 - level) / 2))
    if se > 0:
        p = float(2 * norm.sf(abs(diff) / se))
    else:
        p = 1.0 if diff == 0 else 0.0
    return AUCDifference(
        auc_a=auc_a,
        auc_b=auc_b,
        diff=diff,
        lo=diff - z * se,
        hi=diff + z * se,
        se=se,
        p_value=p,
        n_pos=m,
        n_neg=n,
        level=level,
    )


@dataclass(frozen=True)
class MatchedCatch:
    """Two verifiers at the same catch rate on unsupported items: compare what else they flag."""

    target_catch: float
    tau_a: float
    tau_b: float
    catch_a: float
    catch_b: float
    false_flag_a: float  # flag rate on supported items (the review cost)
    false_flag_b: float
    diff: float  # false_flag_a - false_flag_b
    diff_lo: float
    diff_hi: float


def _tau_at_catch(neg: np.ndarray, target: float) -> float:
    s = np.sort(neg)
    k = int(np.ceil(target * s.size - 1e-9))
    return float(s[max(k, 1) - 1])


def matched_catch_comparison(
    scores_a: np.ndarray,
    scores_b: np.ndarray,
    labels: np.ndarray,
    target_catch: float,
    rng: np.random.Generator,
    n_boot: int = 2000,
    level: float = 0.95,
) -> MatchedCatch:
    """Compare verifiers A and B on the same items at a matched catch rate (seed 001, Table 1).

    For each verifier tau is the smallest unsupported-score order statistic catching >= target
    of the unsupported items (flag s <= tau); the cost is the flag rate on supported items.
    The CI of the difference is a paired percentile bootstrap over items (thresholds refitted
    per resample).
    """
    check_param(
        "target_catch", target_catch, 0 < target_catch <= 1, "in (0, 1]", "matched_catch_comparison"
    )
    a, b, y = _paired(scores_a, scores_b, labels, "matched_catch_comparison")

    def stat(a: np.ndarray, b: np.ndarray, y: np.ndarray) -> tuple[float, ...]:
        if y.all() or not y.any():
            return (np.nan,) * 5
        ta, tb = _tau_at_catch(a[~y], target_catch), _tau_at_catch(b[~y], target_catch)
        ca, cb = np.mean(a[~y] <= ta), np.mean(b[~y] <= tb)
        fa, fb = np.mean(a[y] <= ta), np.mean(b[y] <= tb)
        return ta, tb, ca, cb, fa, fb

    ta, tb, ca, cb, fa, fb = stat(a, b, y)
    reps = []
    for _ in range(n_boot):
        idx = rng.integers(0, y.size, y.size)
        r = stat(a[idx], b[idx], y[idx])
        if np.isfinite(r[0]):
            reps.append(r[4] - r[5])
    q = (1 - level) / 2
    lo, hi = np.quantile(reps, [q, 1 - q]) if reps else (np.nan, np.nan)
    return MatchedCatch(
        target_catch=float(target_catch),
        tau_a=float(ta),
        tau_b=float(tb),
        catch_a=float(ca),
        catch_b=float(cb),
        false_flag_a=float(fa),
        false_flag_b=float(fb),
        diff=float(fa - fb),
        diff_lo=float(lo),
        diff_hi=float(hi),
    )


def auc_score(scores: np.ndarray, labels: np.ndarray) -> float:
    """AUC = P(score_pos > score_neg) + 0.5 P(tie) as one float; NaN when a class is empty.

    The point estimate of :func:`roc_auc` without the DeLong variance: the Mann-Whitney U of
    the positives divided by n_pos n_neg, computed from midranks. Meant as the statistic of a
    resampling loop (a bootstrap resample may lack a class, hence NaN rather than an error).
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels).astype(bool)
    m = int(y.sum())
    n = y.size - m
    if m == 0 or n == 0:
        return float("nan")
    _, inv, counts = np.unique(s, return_inverse=True, return_counts=True)
    midranks = np.cumsum(counts) - (counts - 1) / 2.0  # as scipy.stats.rankdata, but cheaper
    return float((midranks[inv][y].sum() - m * (m + 1) / 2.0) / (m * n))
