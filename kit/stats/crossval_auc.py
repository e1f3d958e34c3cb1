"""Cross-validated AUC of a refitted scorer against a fixed one, fold by fold (pure).

The question a cross-validation answers for ``kit guard adapt``: how will a model fitted on the
whole sample rank pairs it has not seen, and is it better than the model it started from? Each
fold ``f`` is scored by its own model, fitted on the other folds. Separately fitted models do
not share a score scale (one fold's model may read every pair 0.1 higher), so *pooling* their
out-of-fold scores into one AUC compares fold-A positives with fold-B negatives across scales:
the between-model offsets enter the ranking and the pooled AUC is biased (low, for offsets
unrelated to the label; tests/stats/test_crossval_auc.py measures it). Here every comparison
stays inside one fold:

    AUC_f   = AUC of fold f's own scores on fold f's pairs (Mann-Whitney, ties 1/2)
    w_f     = n_pos,f * n_neg,f          (the positive-negative comparisons fold f holds)
    AUC_cv  = sum_f w_f AUC_f / sum_f w_f

i.e. the fraction of concordant positive-negative comparisons among those *within* a fold --
the stratified Mann-Whitney statistic (van Elteren 1960; Bradley, "The use of the area under
the ROC curve", 1997, averages per-fold AUCs likewise). The fixed model (the parent card) is
scored the same way on the very same held-out folds, so the difference

    D = sum_f w_f (AUC_f^A - AUC_f^B) / sum_f w_f

is paired. Its CI is a stratified cluster percentile bootstrap
(:func:`kit.stats.bootstrap.cluster_bootstrap_ci` with ``strata`` = folds): clusters (claims,
or whatever unit the folds kept whole) are resampled within their fold, every fold's scores stay
on their own model's scale, and both scorers are resampled together. The interval covers the
variation of the pairs, not of refitting the fold models (one fit each); its target is the
AUC of a model fitted on (k-1)/k of the sample, a little below the model fitted on all of it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from kit.core.errors import ConfigError, check_param
from kit.stats.bootstrap import cluster_bootstrap_ci
from kit.stats.roc import auc_score

VERDICTS = ("improved", "no_evidence", "worse")


@dataclass(frozen=True)
class FoldAUC:
    """One fold: what its model saw (the other folds) and the two AUCs on its held-out pairs."""

    fold: int
    train_pairs: int
    train_units: int
    test_pairs: int
    test_units: int
    n_pos: int
    n_neg: int
    auc_a: float  # the fold's own refitted model
    auc_b: float  # the fixed model on the same pairs

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class CrossValAUC:
    """Within-fold cross-validated AUCs of A (refitted per fold) and B (fixed), and A - B."""

    auc_a: float
    auc_a_lo: float
    auc_a_hi: float
    auc_b: float
    auc_b_lo: float
    auc_b_hi: float
    diff: float  # auc_a - auc_b
    lo: float
    hi: float
    fold_sd_a: float  # spread of the per-fold AUC_f^A (sd, ddof 1)
    fold_sd_diff: float  # spread of the per-fold differences
    verdict: str  # improved | no_evidence | worse, from the CI of the difference
    level: float
    n_boot: int
    folds: tuple[FoldAUC, ...]

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["folds"] = [f.to_dict() for f in self.folds]
        return d


def verdict_of(lo: float, hi: float) -> str:
    """``improved`` when the CI of A - B lies above 0, ``worse`` below 0, else ``no_evidence``
    (the data do not tell the two apart at the CI's level)."""
    if lo > 0:
        return "improved"
    if hi < 0:
        return "worse"
    return "no_evidence"


def within_fold_auc(scores: np.ndarray, labels: np.ndarray, folds: np.ndarray) -> float:
    """sum_f w_f AUC_f / sum_f w_f with w_f = n_pos,f n_neg,f (module doc); folds lacking a
    class carry no comparison (w_f = 0). NaN when no fold holds both classes.

    Equals sum_f U_f / sum_f n_pos,f n_neg,f, with U_f fold f's Mann-Whitney count of the
    positives (ties 1/2), computed at once: pairs ordered by (fold, score), so a pair's
    midrank is the pairs of lower folds plus its midrank within its fold.
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels).astype(bool)
    _, f = np.unique(np.asarray(folds), return_inverse=True)
    _, code = np.unique(s, return_inverse=True)
    _, inv, counts = np.unique(f * s.size + code, return_inverse=True, return_counts=True)
    midrank = (np.cumsum(counts) - (counts - 1) / 2.0)[inv]
    size = np.bincount(f)
    pos = np.bincount(f, weights=y.astype(float), minlength=size.size)
    below = np.cumsum(size) - size  # pairs in lower folds
    den = float(np.sum(pos * (size - pos)))
    if den == 0:
        return float("nan")
    u = midrank[y].sum() - np.sum(pos * below) - np.sum(pos * (pos + 1) / 2.0)
    return float(u / den)


def _sd(x: np.ndarray) -> float:
    return float(x.std(ddof=1)) if x.size > 1 else float("nan")


def _difference(a: np.ndarray, b: np.ndarray, y: np.ndarray, f: np.ndarray) -> float:
    return within_fold_auc(a, y, f) - within_fold_auc(b, y, f)


def _a_only(a: np.ndarray, b: np.ndarray, y: np.ndarray, f: np.ndarray) -> float:
    return within_fold_auc(a, y, f)


def _b_only(a: np.ndarray, b: np.ndarray, y: np.ndarray, f: np.ndarray) -> float:
    return within_fold_auc(b, y, f)


def crossval_auc(
    scores_a: np.ndarray,
    scores_b: np.ndarray,
    labels: np.ndarray,
    folds: np.ndarray,
    clusters: np.ndarray,
    rng: np.random.Generator,
    n_boot: int = 2000,
    level: float = 0.95,
) -> CrossValAUC:
    """Within-fold AUC of A and B, their paired difference, percentile CIs and the verdict.

    Parameters
    ----------
    scores_a : (n,) out-of-fold scores: each pair scored by the model fitted without its fold.
    scores_b : (n,) the fixed model's scores of the same pairs (higher = positive, both).
    labels : (n,) bool, True = positive (supported).
    folds : (n,) fold of each pair; every fold must hold both classes.
    clusters : (n,) the unit each pair belongs to (constant within a fold: folds keep units
        whole); the bootstrap resamples units within folds.

    The three CIs come from the same resamples (one seed drawn from ``rng``).
    """
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    y = np.asarray(labels).astype(bool)
    f = np.asarray(folds)
    c = np.asarray(clusters)
    func = "crossval_auc"
    ok = a.size >= 1 and a.size == b.size == y.size == f.size == c.size
    check_param("scores_b", b.size, ok, "aligned with scores_a, labels, folds, clusters", func)
    rows = []
    for v in np.unique(f):
        m = f == v
        n_pos, n_neg = int(y[m].sum()), int((~y[m]).sum())
        if n_pos == 0 or n_neg == 0:
            raise ConfigError(
                "undefined_statistic",
                f"{func}: fold {v} holds {n_pos} positive and {n_neg} negative pairs; its AUC "
                "is undefined (every fold needs both)",
            )
        rows.append(
            FoldAUC(
                fold=int(v),
                train_pairs=int((~m).sum()),
                train_units=int(np.unique(c[~m]).size),
                test_pairs=int(m.sum()),
                test_units=int(np.unique(c[m]).size),
                n_pos=n_pos,
                n_neg=n_neg,
                auc_a=auc_score(a[m], y[m]),
                auc_b=auc_score(b[m], y[m]),
            )
        )
    seed = int(rng.integers(2**63))
    data = (a, b, y, f)
    cis = [
        cluster_bootstrap_ci(data, c, stat, np.random.default_rng(seed), n_boot, level, strata=f)
        for stat in (_a_only, _b_only, _difference)
    ]
    ca, cb, cd = cis
    per_a = np.array([r.auc_a for r in rows])
    per_d = per_a - np.array([r.auc_b for r in rows])
    return CrossValAUC(
        auc_a=ca.estimate,
        auc_a_lo=ca.lo,
        auc_a_hi=ca.hi,
        auc_b=cb.estimate,
        auc_b_lo=cb.lo,
        auc_b_hi=cb.hi,
        diff=cd.estimate,
        lo=cd.lo,
        hi=cd.hi,
        fold_sd_a=_sd(per_a),
        fold_sd_diff=_sd(per_d),
        verdict=verdict_of(cd.lo, cd.hi),
        level=level,
        n_boot=n_boot,
        folds=tuple(rows),
    )
