"""Statistics of the guard against independent reference implementations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa
from statsmodels.stats.proportion import proportion_confint

from kit.core.errors import ConfigError
from kit.stats import agreement as ag
from kit.stats.bootstrap import bootstrap_ci, cluster_bootstrap_mean
from kit.stats.roc import matched_catch_comparison, roc_auc
from kit.stats.wilson import wilson_ci


@pytest.mark.parametrize(("k", "n"), [(0, 10), (2, 250), (7, 13), (50, 50), (1, 1)])
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    w = wilson_ci(k, n)
    assert w.lo == pytest.approx(lo, abs=1e-12) and w.hi == pytest.approx(hi, abs=1e-12)


def test_wilson_paper_example_and_refusals() -> None:
    w = wilson_ci(2, 250)  # published: 0.8% [0.2, 2.9]
    assert round(100 * w.lo, 1) == 0.2 and round(100 * w.hi, 1) == 2.9
    with pytest.raises(ConfigError):
        wilson_ci(0, 0)
    with pytest.raises(ConfigError):
        wilson_ci(5, 4)


def test_auc_matches_mannwhitney_with_ties() -> None:
    rng = np.random.default_rng(1)
    pos = np.round(rng.normal(0.6, 0.2, 80), 1)
    neg = np.round(rng.normal(0.4, 0.2, 60), 1)
    u = mannwhitneyu(pos, neg).statistic
    r = roc_auc(np.concatenate([pos, neg]), np.r_[np.ones(80), np.zeros(60)])
    assert r.auc == pytest.approx(u / (80 * 60), abs=1e-12)
    assert r.lo < r.auc < r.hi


def test_delong_se_matches_brute_force() -> None:
    rng = np.random.default_rng(2)
    pos, neg = rng.normal(1, 1, 30), rng.normal(0, 1, 20)
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    v10, v01 = psi.mean(1), psi.mean(0)
    se = np.sqrt(v10.var(ddof=1) / 30 + v01.var(ddof=1) / 20)
    r = roc_auc(np.r_[pos, neg], np.r_[np.ones(30), np.zeros(20)])
    assert r.se == pytest.approx(se, rel=1e-12)


def test_auc_undefined_with_one_class() -> None:
    with pytest.raises(ConfigError):
        roc_auc([0.1, 0.2], [1, 1])


def test_kappa_matches_statsmodels_and_specific_agreement() -> None:
    rng = np.random.default_rng(3)
    x = rng.random(300) < 0.9
    y = np.where(rng.random(300) < 0.85, x, ~x)
    table = np.array([[np.sum(x & y), np.sum(x & ~y)], [np.sum(~x & y), np.sum(~x & ~y)]])
    assert ag.cohens_kappa(x, y) == pytest.approx(sm_kappa(table).kappa, abs=1e-12)
    a, b, c, d = table.ravel()
    psa, nsa = ag.specific_agreement(x, y)
    assert psa == pytest.approx(2 * a / (2 * a + b + c))
    assert nsa == pytest.approx(2 * d / (2 * d + b + c))


def test_gwet_ac1_worked_example() -> None:
    # Gwet (2008)-style 2x2: a=118, b=5, c=2, d=0 -> kappa < 0 but AC1 high (base-rate paradox)
    x = np.array([1] * 118 + [1] * 5 + [0] * 2, dtype=bool)
    y = np.array([1] * 118 + [0] * 5 + [1] * 2, dtype=bool)
    n = 125
    po = 118 / n
    pi = (123 + 120) / (2 * n)
    pe = 2 * pi * (1 - pi)
    assert ag.gwet_ac1(x, y) == pytest.approx((po - pe) / (1 - pe))
    assert ag.gwet_ac1(x, y) > 0.9 and ag.cohens_kappa(x, y) < 0.05


def test_agreement_bundle_and_bootstrap_ci() -> None:
    rng = np.random.default_rng(4)
    x = rng.random(200) < 0.8
    y = np.where(rng.random(200) < 0.9, x, ~x)
    res = ag.agreement(x, y, np.random.default_rng(0), n_boot=300)
    assert res.kappa_ci.lo <= res.kappa <= res.kappa_ci.hi
    assert res.negative_specific_ci.lo <= res.negative_specific <= res.negative_specific_ci.hi


def test_bootstrap_ci_of_mean_close_to_normal_theory() -> None:
    rng = np.random.default_rng(5)
    v = rng.normal(0, 1, 400)
    ci = bootstrap_ci((v,), np.mean, np.random.default_rng(0), n_boot=2000)
    se = v.std(ddof=1) / 20
    assert ci.hi - ci.lo == pytest.approx(2 * 1.96 * se, rel=0.15)


def test_cluster_bootstrap_wider_than_iid_when_clustered() -> None:
    rng = np.random.default_rng(6)
    clusters = np.repeat(np.arange(40), 10)
    p = np.repeat(rng.random(40), 10)  # strong within-answer correlation
    v = (rng.random(400) < p).astype(float)
    cl = cluster_bootstrap_mean(v, clusters, np.random.default_rng(0), n_boot=1000)
    iid = bootstrap_ci((v,), np.mean, np.random.default_rng(0), n_boot=1000)
    assert (cl.hi - cl.lo) > 1.5 * (iid.hi - iid.lo)


def test_matched_catch_comparison_prefers_separating_verifier() -> None:
    rng = np.random.default_rng(7)
    y = np.r_[np.ones(200, bool), np.zeros(200, bool)]
    good = np.where(y, rng.normal(0.8, 0.1, 400), rng.normal(0.3, 0.1, 400))
    weak = np.where(y, rng.normal(0.6, 0.2, 400), rng.normal(0.4, 0.2, 400))
    r = matched_catch_comparison(good, weak, y, 0.9, np.random.default_rng(0), n_boot=200)
    assert r.catch_a >= 0.9 and r.catch_b >= 0.9
    assert r.false_flag_a < r.false_flag_b and r.diff_hi < 0
