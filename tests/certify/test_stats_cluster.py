"""The cluster-robust radius against statsmodels (CR1) and scipy's paired t."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from kit.core.errors import ConfigError
from kit.stats.cluster import cluster_t, naive_t


@pytest.mark.parametrize("seed", range(5))
def test_se_matches_statsmodels_cr1(seed: int) -> None:
    """statsmodels' default cluster correction K/(K-1)*(N-1)/(N-k), k=1, equals ours exactly."""
    rng = np.random.default_rng(seed)
    n, g = 50, 23
    codes = np.sort(rng.integers(0, g, size=n))
    d = rng.normal(0.05, 0.2, size=n) + rng.normal(0, 0.1, size=g)[codes]
    res = sm.OLS(d, np.ones(n)).fit(cov_type="cluster", cov_kwds={"groups": codes})
    ours = cluster_t(d[None, :], codes, g, 0.05)
    assert ours.gap[0] == pytest.approx(res.params[0], rel=1e-12)
    assert ours.se[0] == pytest.approx(res.bse[0], rel=1e-10)
    k = len(np.unique(codes))
    assert ours.k[0] == k
    assert ours.t[0] == pytest.approx(res.tvalues[0], rel=1e-10)
    # statsmodels' normal-reference p differs; with df_correction + t reference it matches ours:
    res_t = sm.OLS(d, np.ones(n)).fit(
        cov_type="cluster", cov_kwds={"groups": codes, "df_correction": True}, use_t=True
    )
    assert ours.p[0] == pytest.approx(res_t.pvalues[0], rel=1e-8)
    half = res_t.conf_int(alpha=0.05)[0]
    assert ours.q[0] == pytest.approx((half[1] - half[0]) / 2, rel=1e-8)


def test_singleton_clusters_reduce_to_paired_t() -> None:
    rng = np.random.default_rng(7)
    d = rng.normal(0.1, 0.3, size=30)
    ours = naive_t(d, 0.05)
    ref = stats.ttest_1samp(d, 0.0)
    assert ours.t[0] == pytest.approx(ref.statistic, rel=1e-10)
    assert ours.p[0] == pytest.approx(ref.pvalue, rel=1e-10)
    assert ours.se[0] == pytest.approx(d.std(ddof=1) / np.sqrt(30), rel=1e-12)


def test_missing_tasks_and_vectorised_rows_match_per_row() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(size=(6, 40))
    d[rng.random(d.shape) < 0.2] = np.nan
    codes = rng.integers(0, 8, size=40)
    both = cluster_t(d, codes, 8, 0.01)
    for i in range(6):
        keep = np.isfinite(d[i])
        one = cluster_t(d[i, keep][None, :], codes[keep], 8, 0.01)
        assert both.se[i] == pytest.approx(one.se[0], rel=1e-12)
        assert both.q[i] == pytest.approx(one.q[0], rel=1e-12)
        assert both.n[i] == keep.sum()


def test_one_cluster_is_undefined_not_zero() -> None:
    out = cluster_t(np.array([[0.1, 0.2, 0.3]]), np.array([0, 0, 0]), 1, 0.05)
    assert out.k[0] == 1
    assert np.isnan(out.se[0]) and np.isnan(out.q[0])


def test_bad_delta_is_config_error() -> None:
    with pytest.raises(ConfigError):
        cluster_t(np.zeros((1, 3)), np.arange(3), 3, 1.5)
