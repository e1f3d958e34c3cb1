"""The cross-validated AUC of `kit guard adapt` read within folds (kit/stats/crossval_auc.py).

Seeded simulations where the truth is known: every fold's model ranks pairs equally well (scores
binormal, positives shifted by ``mu``: AUC = Phi(mu / sqrt 2)) but reads them with its own
offset, as separately fine-tuned models do. The within-fold estimate is unbiased; one AUC over
the pooled out-of-fold scores is not.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from kit.core.errors import ConfigError
from kit.stats.bootstrap import cluster_bootstrap_ci
from kit.stats.crossval_auc import crossval_auc, verdict_of, within_fold_auc
from kit.stats.roc import auc_score

K = 5
OFFSETS = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])  # per fold model, unrelated to the label


def _draw(
    rng: np.random.Generator, n: int, mu: float, offsets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels, folds (by pair) and out-of-fold scores: fold f's model reads mu*y + e + offset_f."""
    y = rng.uniform(size=n) < 0.4
    fold = rng.permutation(np.arange(n) % K)
    s = mu * y + rng.standard_normal(n) + offsets[fold]
    return y, fold, s


def test_within_fold_auc_is_the_share_of_concordant_within_fold_comparisons() -> None:
    """Against an independent count: every (positive, negative) comparison inside one fold,
    ties 1/2, divided by the number of such comparisons."""
    rng = np.random.default_rng(3)
    y = rng.uniform(size=90) < 0.5
    fold = rng.integers(0, 4, 90)
    s = np.round(rng.standard_normal(90) + y + fold, 1)  # ties included
    wins = total = 0.0
    for i in np.flatnonzero(y):
        for j in np.flatnonzero(~y):
            if fold[i] == fold[j]:
                total += 1
                wins += 1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0
    assert within_fold_auc(s, y, fold) == pytest.approx(wins / total, abs=1e-12)
    # one fold: the ordinary AUC
    assert within_fold_auc(s, y, np.zeros(90)) == pytest.approx(auc_score(s, y), abs=1e-12)


def test_pooled_auc_is_biased_by_fold_offsets_and_the_within_fold_estimate_is_not() -> None:
    rng = np.random.default_rng(20261204)
    mu, n, reps = 1.0, 150, 600
    truth = float(norm.cdf(mu / np.sqrt(2)))  # 0.760
    within, pooled, control = [], [], []
    for _ in range(reps):
        y, fold, s = _draw(rng, n, mu, OFFSETS)
        within.append(within_fold_auc(s, y, fold))
        pooled.append(auc_score(s, y))
        y0, _, s0 = _draw(rng, n, mu, np.zeros(K))  # same models, one scale
        control.append(auc_score(s0, y0))
    for name, est in (("within", within), ("pooled", pooled), ("control", control)):
        e = np.asarray(est)
        print(
            f"{name}: mean {e.mean():.4f} (truth {truth:.4f}), bias {e.mean() - truth:+.4f} "
            f"+- {e.std(ddof=1) / np.sqrt(reps):.4f}"
        )
    se = np.std(within, ddof=1) / np.sqrt(reps)
    assert abs(np.mean(within) - truth) < 3 * se  # unbiased
    # pooled across fold models: a positive of fold f meets a negative of fold g with
    # P = Phi((mu + o_f - o_g) / sqrt 2); averaged over fold pairs this is what pooling
    # estimates -- below the truth, by far more than the Monte Carlo error
    expected = float(np.mean(norm.cdf((mu + OFFSETS[:, None] - OFFSETS[None, :]) / np.sqrt(2))))
    se_p = np.std(pooled, ddof=1) / np.sqrt(reps)
    print(f"pooled expected {expected:.4f}")
    assert abs(np.mean(pooled) - expected) < 3 * se_p + 0.002  # + O(1/n) finite-fold slack
    assert truth - expected > 0.04 and np.mean(pooled) < truth - 10 * se_p
    # pooled scores of one model (no offsets) are unbiased: the bias is the offsets'
    se_c = np.std(control, ddof=1) / np.sqrt(reps)
    assert abs(np.mean(control) - truth) < 3 * se_c


@pytest.mark.slow  # 11 s on 2 cores, 37 s when shared (120 samples x 3 x 300 resamples)
def test_crossval_ci_covers_the_truth_and_the_paired_difference() -> None:
    """A fold model (offsets differ by fold) against a fixed parent that reads the same noise
    less well: both CIs and that of the difference cover the known truths at about 95%
    (measured: 0.933, 0.967, 0.933 of 120)."""
    rng = np.random.default_rng(7)
    mu_a, mu_b, n, reps = 1.2, 0.6, 120, 120
    truth_a = float(norm.cdf(mu_a / np.sqrt(2)))
    truth_b = float(norm.cdf(mu_b / np.sqrt(2)))
    hit = np.zeros(3)
    diffs = []
    for _ in range(reps):
        y = rng.uniform(size=n) < 0.4
        fold = rng.permutation(np.arange(n) % K)
        e = rng.standard_normal(n)
        a = mu_a * y + e + OFFSETS[fold]
        b = mu_b * y + 0.6 * e + 0.8 * rng.standard_normal(n)  # correlated with a, sd 1
        r = crossval_auc(a, b, y, fold, np.arange(n), rng, n_boot=300)
        hit += [
            r.auc_a_lo <= truth_a <= r.auc_a_hi,
            r.auc_b_lo <= truth_b <= r.auc_b_hi,
            r.lo <= truth_a - truth_b <= r.hi,
        ]
        diffs.append(r.diff)
    cover = hit / reps
    print(f"coverage (nominal 0.95) of AUC_A, AUC_B, A - B: {cover.round(3).tolist()}")
    assert (cover >= 0.88).all()
    assert abs(np.mean(diffs) - (truth_a - truth_b)) < 3 * np.std(diffs) / np.sqrt(reps)


def test_crossval_reports_each_fold_and_what_its_model_saw() -> None:
    rng = np.random.default_rng(0)
    units = np.repeat(np.arange(40), 2)  # two pairs per claim, kept in one fold
    fold = units % 4
    y = np.tile([True, False], 40)
    a = y + rng.standard_normal(80) + fold
    b = 0.2 * y + rng.standard_normal(80)
    r = crossval_auc(a, b, y, fold, units, np.random.default_rng(1), n_boot=200)
    assert [f.fold for f in r.folds] == [0, 1, 2, 3]
    for f in r.folds:
        m = fold == f.fold
        assert (f.test_pairs, f.test_units, f.train_pairs, f.train_units) == (20, 10, 60, 30)
        assert f.auc_a == pytest.approx(auc_score(a[m], y[m]))
        assert f.auc_b == pytest.approx(auc_score(b[m], y[m]))
    w = np.array([f.n_pos * f.n_neg for f in r.folds], dtype=float)
    assert r.auc_a == pytest.approx(np.dot(w, [f.auc_a for f in r.folds]) / w.sum())
    assert r.diff == pytest.approx(r.auc_a - r.auc_b)
    assert r.auc_a_lo <= r.auc_a <= r.auc_a_hi and r.lo <= r.diff <= r.hi
    assert r.verdict == verdict_of(r.lo, r.hi)
    # the same seed, the same CIs
    again = crossval_auc(a, b, y, fold, units, np.random.default_rng(1), n_boot=200)
    assert again == r
    with pytest.raises(ConfigError, match="fold 1 holds 0 positive"):
        crossval_auc(a, b, y & (fold != 1), fold, units, rng, n_boot=10)


def test_verdict_reads_the_side_of_zero() -> None:
    assert verdict_of(0.01, 0.2) == "improved"
    assert verdict_of(-0.2, -0.01) == "worse"
    assert verdict_of(-0.01, 0.2) == "no_evidence" == verdict_of(0.0, 0.1)


def test_stratified_cluster_bootstrap_keeps_every_stratum_whole() -> None:
    """With strata every resample draws each stratum's clusters among themselves, as many as
    it has; without, a stratum's share varies (and the unstratified draw is unchanged)."""
    strata = np.repeat([0, 1, 2], [10, 20, 30])
    clusters = np.arange(60) // 2  # pairs of rows, never across a stratum

    def share0(s: np.ndarray) -> float:
        return float(np.mean(s == 0))

    st = cluster_bootstrap_ci(
        (strata,), clusters, share0, np.random.default_rng(0), 300, strata=strata
    )
    assert st.lo == st.hi == pytest.approx(10 / 60)
    free = cluster_bootstrap_ci((strata,), clusters, share0, np.random.default_rng(0), 300)
    assert free.lo < 10 / 60 < free.hi
    with pytest.raises(ConfigError, match="constant within each cluster"):
        cluster_bootstrap_ci(
            (strata,), np.arange(60) // 15, share0, np.random.default_rng(0), 10, strata=strata
        )
