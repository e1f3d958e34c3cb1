"""CR2 (Bell-McCaffrey df), CRV3 and the cluster sign-flip radius against independent versions.

CR2: the general matrix formulas (Bell and McCaffrey 2002; Imbens and Kolesar 2016) written
here with dense matrices for X = 1. CRV3: brute-force leave-one-cluster-out refits with
statsmodels. Sign flip: a plain loop over every sign vector.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg
import statsmodels.api as sm
from scipy import stats

from kit.certify.design import parse_design
from kit.certify.inference import sampling_radius
from kit.core.errors import ConfigError
from kit.stats.cluster import cluster_t
from kit.stats.signflip import signflip_t

SIZES = [2, 3, 5, 9, 17]  # unequal clusters


def _data(seed: int, sizes: list[int] = SIZES) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(len(sizes)), sizes)
    d = rng.normal(0.03, 0.1, size=codes.size) + rng.normal(0, 0.08, size=len(sizes))[codes]
    return d, codes


def _cr2_dense(d: np.ndarray, codes: np.ndarray) -> tuple[float, float]:
    """se and Bell-McCaffrey df from the textbook matrices (no closed form used)."""
    n = d.size
    x = np.ones((n, 1))
    bread = np.linalg.inv(x.T @ x)
    h = x @ bread @ x.T
    e = d - (x @ (bread @ x.T @ d))
    meat = 0.0
    g_cols = []
    for g in np.unique(codes):
        idx = np.flatnonzero(codes == g)
        a_g = scipy.linalg.inv(scipy.linalg.sqrtm(np.eye(idx.size) - h[np.ix_(idx, idx)])).real
        u = x[idx].T @ a_g @ e[idx]
        meat += float(u @ u)
        # G_g = (I - H)_{., g} A_g X_g (X'X)^{-1}
        g_cols.append(((np.eye(n) - h)[:, idx] @ a_g @ x[idx] @ bread).ravel())
    var = float((bread @ np.atleast_2d(meat) @ bread)[0, 0])
    gm = np.column_stack(g_cols)
    m = gm.T @ gm
    df = np.trace(m) ** 2 / np.trace(m @ m)
    return np.sqrt(var), df


@pytest.mark.parametrize("seed", range(4))
def test_cr2_matches_dense_matrix_formulas(seed: int) -> None:
    d, codes = _data(seed)
    se, df = _cr2_dense(d, codes)
    ours = cluster_t(d[None, :], codes, len(SIZES), 0.01, "cr2")
    assert ours.se[0] == pytest.approx(se, rel=1e-10)
    assert ours.df[0] == pytest.approx(df, rel=1e-10)
    assert ours.q[0] == pytest.approx(stats.t.ppf(1 - 0.005, df) * se, rel=1e-9)
    assert ours.df[0] < len(SIZES) - 1  # unequal sizes cost degrees of freedom


def test_cr2_balanced_equals_cr1() -> None:
    d, codes = _data(9, [6] * 5)
    cr1 = cluster_t(d[None, :], codes, 5, 0.01, "cr1")
    cr2 = cluster_t(d[None, :], codes, 5, 0.01, "cr2")
    assert cr2.se[0] == pytest.approx(cr1.se[0], rel=1e-12)
    assert cr2.df[0] == pytest.approx(4.0, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_crv3_matches_leave_one_cluster_out_refits(seed: int) -> None:
    d, codes = _data(seed)
    full = sm.OLS(d, np.ones(d.size)).fit().params[0]
    drops = np.array(
        [
            sm.OLS(d[codes != g], np.ones(int((codes != g).sum()))).fit().params[0]
            for g in range(len(SIZES))
        ]
    )
    k = len(SIZES)
    var = (k - 1) / k * np.sum((drops - full) ** 2)
    ours = cluster_t(d[None, :], codes, k, 0.01, "crv3")
    assert ours.se[0] == pytest.approx(np.sqrt(var), rel=1e-10)
    assert ours.df[0] == k - 1


def test_crv3_and_cr2_vectorised_with_missing_tasks() -> None:
    rng = np.random.default_rng(5)
    codes = np.repeat(np.arange(6), [2, 3, 4, 6, 8, 12])
    d = rng.normal(size=(5, codes.size))
    d[rng.random(d.shape) < 0.2] = np.nan
    for method in ("cr2", "crv3"):
        both = cluster_t(d, codes, 6, 0.01, method)
        for i in range(5):
            keep = np.isfinite(d[i])
            one = cluster_t(d[i, keep][None, :], codes[keep], 6, 0.01, method)
            assert both.se[i] == pytest.approx(one.se[0], rel=1e-12)
            assert both.df[i] == pytest.approx(one.df[0], rel=1e-12)


def _brute_signflip(
    d: np.ndarray, codes: np.ndarray, delta: float, mu0: float
) -> tuple[float, float]:
    """(critical value, p of mu = 0) by looping over all 2^K sign vectors."""
    k = codes.max() + 1

    def stat(x: np.ndarray) -> float:
        m = x.mean()
        sums = np.array([(x[codes == g] - m).sum() for g in range(k)])
        se = np.sqrt(k / (k - 1) * np.sum(sums**2)) / x.size
        return abs(m) / max(se, 1e-9)

    vectors = list(itertools.product((1.0, -1.0), repeat=k))
    shifted = np.array([stat((d - mu0) * np.array(s)[codes]) for s in vectors])
    crit = min(c for c in shifted if np.mean(shifted > c) <= delta)
    at_zero = np.array([stat(d * np.array(s)[codes]) for s in vectors])
    p = float(np.mean(at_zero >= at_zero[0] * (1 - 1e-12)))
    return crit, p


@pytest.mark.parametrize(("seed", "eps"), [(0, 0.0), (1, 0.0), (2, 0.01), (3, 0.05)])
def test_signflip_matches_brute_force_enumeration(seed: int, eps: float) -> None:
    d, codes = _data(seed, [3, 4, 5, 6, 8, 10, 12])
    delta = 0.05
    ours = signflip_t(d[None, :], codes, 7, delta, np.array([eps]), 200, np.random.default_rng(0))
    gap = d.mean()
    crit, p = _brute_signflip(d, codes, delta, float(np.clip(gap, -eps, eps)))
    assert ours.crit[0] == pytest.approx(crit, rel=1e-8)
    assert ours.p[0] == pytest.approx(p, abs=1e-12)
    assert ours.q[0] == pytest.approx(ours.crit[0] * ours.se[0], rel=1e-12)
    assert np.isnan(ours.df[0])


def test_signflip_cannot_certify_below_two_over_two_to_the_k() -> None:
    """K = 4: the smallest attainable p is 2/16, so delta' = 0.005 never certifies."""
    codes = np.repeat(np.arange(4), 10)
    d = np.random.default_rng(1).normal(1.0, 0.01, size=(3, 40))  # huge, obvious gaps
    out = signflip_t(d, codes, 4, 0.005, np.zeros(3), 9999, np.random.default_rng(0))
    assert np.all(np.abs(out.gap) <= out.q)
    assert np.allclose(out.p, 2 / 16)


def test_signflip_random_draws_include_the_identity() -> None:
    d, codes = _data(4, [2] * 20)
    a = signflip_t(d[None, :], codes, 20, 0.05, np.zeros(1), 500, np.random.default_rng(3))
    b = signflip_t(d[None, :], codes, 20, 0.05, np.zeros(1), 500, np.random.default_rng(3))
    assert a.crit[0] == b.crit[0]  # seeded: deterministic
    assert 1 / 501 <= a.p[0] <= 1  # the observed statistic is one of the 501 values


def test_design_selects_inference_and_rejects_unknown() -> None:
    assert parse_design({"inference": "crv3"}).inference == "crv3"
    with pytest.raises(ConfigError):
        parse_design({"inference": "cr9"})
    with pytest.raises(ConfigError):
        sampling_radius(np.zeros((1, 4)), np.arange(4), 4, 0.05, "nope", np.zeros(1), 10, None)  # type: ignore[arg-type]
