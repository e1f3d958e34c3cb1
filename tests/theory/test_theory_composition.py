"""Theorem 2, Corollaries 2-3 and Theorem 3 on cases with a known truth (Appendix A.4, F.4)."""

from __future__ import annotations

import numpy as np
import ot
import pytest
from scipy.stats import wasserstein_distance

from kit.certify import composition as C
from kit.core.errors import ConfigError


def test_recursion_equals_product_form() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        K = int(rng.integers(1, 7))
        L, eps, xi = rng.uniform(0, 2, K), rng.uniform(0, 0.2, K), rng.uniform(0, 0.1, K)
        e0 = float(rng.uniform(0, 0.5))
        rec, unr = C.composed_bound(e0, L, eps, xi), C.unrolled_bound(e0, L, eps, xi)
        np.testing.assert_allclose(rec, unr, rtol=1e-12, atol=1e-15)
        # explicit Eq. (12) at m = K
        m = K
        manual = e0 * np.prod(L) + sum((eps[k] + xi[k]) * np.prod(L[k + 1 : m]) for k in range(m))
        assert rec[-1] == pytest.approx(manual, rel=1e-12)


def test_nonexpansive_chains_reduce_to_the_additive_corollary() -> None:
    rng = np.random.default_rng(1)
    eps, xi = rng.uniform(0, 0.1, 5), rng.uniform(0, 0.05, 5)
    ones = np.ones(5)
    np.testing.assert_allclose(C.composed_bound(0.1, ones, eps, xi), C.additive_bound(0.1, eps, xi))
    L = rng.uniform(0, 1, 5)
    assert C.is_nonexpansive(L) and not C.is_nonexpansive(np.append(L, 1.01))
    assert np.all(C.composed_bound(0.1, L, eps, xi) <= C.additive_bound(0.1, eps, xi) + 1e-15)


def test_window_bound_special_cases() -> None:
    rng = np.random.default_rng(2)
    L, eps, xi = rng.uniform(0.5, 1.5, 5), rng.uniform(0, 0.1, 5), rng.uniform(0, 0.05, 5)
    # the window is the whole pipeline: Eq. (14) is Theorem 2 at m = K
    assert C.window_bound(0.07, L, eps, xi, 1, 5) == pytest.approx(
        C.composed_bound(0.07, L, eps, xi)[-1]
    )
    # Eq. (14) written out for i = 2, j = 3, K = 5
    i, j = 2, 3
    inner = 0.07 * L[1] * L[2] + (eps[1] + xi[1]) * L[2] + (eps[2] + xi[2])
    manual = L[3] * L[4] * inner + xi[3] * L[4] + xi[4]
    assert C.window_bound(0.07, L, eps, xi, i, j) == pytest.approx(manual, rel=1e-12)
    with pytest.raises(ConfigError):
        C.window_bound(0.0, L, eps, xi, 4, 2)


def test_linear_shift_chain_is_tight() -> None:
    """Deterministic maps z -> a_k z + c_{X,k}, point-mass entries: the bound is attained."""
    a = np.array([0.8, 1.3, 0.5])
    c_a, c_b = np.array([0.05, 0.02, 0.01]), np.zeros(3)
    za, zb = 0.4, 0.2
    for k in range(3):
        za, zb = a[k] * za + c_a[k], a[k] * zb + c_b[k]
    observed = wasserstein_distance([za], [zb])
    bound = C.composed_bound(0.2, a, np.abs(c_a - c_b))[-1]
    assert observed == pytest.approx(bound, abs=1e-15)
    assert C.utility_bound(2.0, 0.2, a, np.abs(c_a - c_b)) == pytest.approx(2 * bound)


def test_wasserstein_1d_against_pot_and_scipy() -> None:
    rng = np.random.default_rng(3)
    s = np.sort(rng.uniform(0, 1, 9))
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(9)), rng.dirichlet(np.ones(9))
        w = C.wasserstein_1d(s, p, q)
        assert w == pytest.approx(wasserstein_distance(s, s, p, q), abs=1e-12)
        assert w == pytest.approx(ot.emd2(p, q, np.abs(s[:, None] - s[None, :])), abs=1e-10)


def test_probes_of_binomial_stage_give_the_exact_constant() -> None:
    knobs = C.ChainKnobs(entry=0.8, recall=0.7, retention=0.9, order=0.5, writing=0.9)
    mats = C.stage_matrices(knobs, 20, 5)
    x, y = C.probe_pairs(mats[0])
    np.testing.assert_allclose(y, 0.7 * x, atol=1e-12)  # W = |p(z) - p(z')| = recall |z - z'|
    (L, xi), *_ = C.stage_constants(mats, "ratio_sup")
    assert (L, xi) == (pytest.approx(0.7), 0.0)
    assert C.replacement_error(mats[0], mats[0]) == 0.0


def test_synthetic_chains_never_exceed_the_exact_constant_bound() -> None:
    rng = np.random.default_rng(4)
    for chain in range(15):
        a, b = C.draw_knobs(rng)
        for r in C.check_chain(chain, a, b, n=12, levels=4, designs=("ratio_sup",)):
            assert r.observed <= r.bound + 1e-12
            assert r.utility_gap <= r.utility_bound + 1e-12
            assert r.bound == pytest.approx(r.bound_unrolled, abs=1e-12)


def test_bad_inputs() -> None:
    with pytest.raises(ConfigError):
        C.composed_bound(-0.1, [1.0], [0.0])
    with pytest.raises(ConfigError):
        C.composed_bound(0.1, [1.0, 1.0], [0.0])
    with pytest.raises(ConfigError):
        C.composed_bound(0.1, [np.nan], [0.0])
    assert C.composed_bound(0.0, [np.inf], [0.0])[-1] == 0.0  # no incoming error, none carried
    assert C.composed_bound(0.1, [np.inf], [0.0])[-1] == np.inf


def test_sampled_runs_follow_the_exact_laws() -> None:
    knobs = C.ChainKnobs(entry=0.7, recall=0.8, retention=0.9, order=0.6, writing=0.8)
    laws = C.chain_laws(knobs, 10, 4)
    runs = C.sample_chain(knobs, 10, 4, 20_000, np.random.default_rng(5))
    grid = np.arange(11) / 10
    for k in range(5):
        assert runs[:, k].mean() == pytest.approx(float(grid @ laws[k]), abs=0.01)
    a, b = C.draw_knobs(np.random.default_rng(6))
    rows = C.check_chain(0, a, b, n=10, levels=4, designs=("ratio_sup",))
    assert all(np.isnan(r.observed_sampled) for r in rows)
    rows = C.check_chain(
        0, a, b, n=10, levels=4, designs=("ratio_sup",), rng=np.random.default_rng(1)
    )
    assert all(r.observed_sampled >= 0 for r in rows)
