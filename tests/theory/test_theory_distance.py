"""Theorem 4, Proposition 2, Definitions 10-11 on random and closed-form kernels (A.5, F.6-F.7)."""

from __future__ import annotations

import numpy as np
import ot
import pytest
from scipy.stats import wasserstein_distance

from kit.certify import distance as D
from kit.core.errors import ConfigError

GAMMA, BETA = 0.9, 0.5
LABELS = ("search", "read", "write")


def random_kernels(rng: np.random.Generator, n: int, name: str) -> D.BranchKernels:
    states = [f"{name}{i}" for i in range(n)]
    tr = []
    for i in range(n - 2):  # the last two states are terminal (absorbing)
        for _ in range(int(rng.integers(1, 4))):
            j = int(rng.integers(i + 1, n))
            tr.append(
                (states[i], LABELS[int(rng.integers(3))], states[j], float(rng.integers(1, 5)))
            )
    return D.empirical_kernels(states, rng.uniform(size=n), tr, labels=list(LABELS))


@pytest.fixture(scope="module")
def pair() -> tuple[D.BranchKernels, D.BranchKernels]:
    rng = np.random.default_rng(7)
    return random_kernels(rng, 9, "a"), random_kernels(rng, 8, "b")


def test_emd2_matches_scipy_in_one_dimension() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        u, v = rng.uniform(size=5), rng.uniform(size=7)
        p, q = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(7))
        w = ot.emd2(p, q, np.abs(u[:, None] - v[None, :]))
        assert w == pytest.approx(wasserstein_distance(u, v, p, q), abs=1e-10)


def test_contraction_and_uniqueness(pair) -> None:
    ka, kb = pair
    cc = D.contraction_check(ka, kb, GAMMA, BETA, np.random.default_rng(1), n_random=8)
    assert cc.modulus_theory == pytest.approx(0.45)
    assert cc.modulus_observed <= 0.45 + 1e-9
    assert cc.modulus_random <= 0.45 + 1e-9
    assert cc.start_gap <= 1e-9
    d0 = D.fixed_point(ka, kb, GAMMA, BETA).d
    d1 = D.fixed_point(ka, kb, GAMMA, BETA, d0=np.ones((ka.n, kb.n))).d
    d2 = D.fixed_point(ka, kb, GAMMA, BETA, d0=np.random.default_rng(2).uniform(size=d0.shape)).d
    assert np.max(np.abs(d0 - d1)) <= 1e-9 and np.max(np.abs(d0 - d2)) <= 1e-9
    assert np.all((d0 >= 0) & (d0 <= 1))
    # it is a fixed point
    assert np.max(np.abs(D.apply_operator(ka, kb, d0, GAMMA, BETA) - d0)) <= 1e-9


def test_union_is_a_pseudometric_whose_block_is_d_ab(pair) -> None:
    ka, kb = pair
    u = D.disjoint_union([ka, kb], ["A", "B"])
    fu = D.fixed_point(u, u, GAMMA, BETA, symmetric=True)
    full = D.fixed_point(u, u, GAMMA, BETA)  # without the symmetric shortcut
    assert np.max(np.abs(fu.d - full.d)) <= 1e-9
    chk = D.pseudometric_check(fu.d)
    assert chk.max_diagonal <= 1e-12 and chk.max_asymmetry <= 1e-12
    assert chk.max_triangle_violation <= 1e-9 and chk.n_triples == u.n**3
    dab = D.fixed_point(ka, kb, GAMMA, BETA).d
    assert np.max(np.abs(fu.d[: ka.n, ka.n :] - dab)) <= 1e-9


def test_pseudometric_check_catches_a_violation() -> None:
    d = np.array([[0, 0.1, 0.9], [0.1, 0, 0.1], [0.9, 0.1, 0]])
    assert D.pseudometric_check(d).max_triangle_violation == pytest.approx(0.7)
    sampled = D.pseudometric_check(d, np.random.default_rng(0), max_triples=5000)
    assert sampled.max_triangle_violation == pytest.approx(0.7)


def test_closed_form_absorbing_states() -> None:
    """Two terminal states: d = (1 - g)|z - z'| + g (1 - b) d  =>  d = (1 - g)|dz| / (1 - g(1 - b))."""
    ka = D.empirical_kernels(["x"], [0.2], [])
    kb = D.empirical_kernels(["y"], [0.7], [])
    d = D.fixed_point(ka, kb, GAMMA, BETA).d[0, 0]
    assert d == pytest.approx(0.1 * 0.5 / (1 - 0.45), abs=1e-9)
    # gamma = 0: the interface term alone
    assert D.fixed_point(ka, kb, 0.0, BETA).d[0, 0] == pytest.approx(0.5)


def test_one_step_closed_form() -> None:
    """h -> {t1 (label a, w 1), t2 (label b, w 1)} vs g -> {s (label a)}; terminals absorb."""
    ka = D.empirical_kernels(
        ["h", "t1", "t2"], [0.5, 0.2, 0.4], [("h", "a", "t1", 1), ("h", "b", "t2", 1)]
    )
    kb = D.empirical_kernels(["g", "s"], [0.5, 0.2], [("g", "a", "s", 1)], labels=list(ka.labels))
    d = D.fixed_point(ka, kb, GAMMA, BETA).d
    k = 1 - GAMMA * (1 - BETA)
    d_t1_s = 0.0
    d_t2_s = (1 - GAMMA) * 0.2 / k
    # the only coupling moves both branches to (a, s): cost b * dL + (1 - b) * d(succ)
    w = 0.5 * (BETA * 0 + (1 - BETA) * d_t1_s) + 0.5 * (BETA * 1 + (1 - BETA) * d_t2_s)
    assert d[1, 1] == pytest.approx(d_t1_s, abs=1e-9)
    assert d[2, 1] == pytest.approx(d_t2_s, abs=1e-9)
    assert d[0, 0] == pytest.approx((1 - GAMMA) * 0 + GAMMA * w, abs=1e-9)


def test_identical_systems_are_at_distance_zero(pair) -> None:
    ka, _ = pair
    d = D.fixed_point(ka, ka, GAMMA, BETA).d
    assert np.max(np.abs(np.diag(d))) <= 1e-12
    sd = D.whole_system_distance(
        d, [(np.array([0, 1]), np.array([1, 3]))] * 2, [(np.array([0, 1]), np.array([1, 3]))] * 2
    )
    assert sd.mean == pytest.approx(0, abs=1e-12) and sd.n_contexts == 2


def test_contextwise_radius_bracket() -> None:
    # F.6: entry term bracketed by |e_A - e_B| .. e_A + e_B where no direct distance is stored
    r = D.contextwise_radius(
        exit_dist=np.array([0.4, 0.6]),
        entry_dist=np.array([np.nan, 0.1]),
        e_a=np.array([0.3, np.nan]),
        e_b=np.array([0.1, np.nan]),
    )
    assert r.entry_lo == pytest.approx((0.2 + 0.1) / 2) and r.entry_hi == pytest.approx(
        (0.4 + 0.1) / 2
    )
    assert r.radius_lo == pytest.approx(0.5 * 0.15 + 0.5 * 0.5)
    assert r.radius_hi == pytest.approx(0.5 * 0.25 + 0.5 * 0.5)
    assert r.sup_hi == pytest.approx(max(0.5 * 0.4 + 0.2, 0.5 * 0.1 + 0.3))
    assert r.n_direct_entry == 1 and r.radius_lo <= r.radius_hi
    with pytest.raises(ConfigError, match="neither"):
        D.contextwise_radius(np.array([0.1]), None, np.array([0.1]), None)


def test_parameter_checks(pair) -> None:
    ka, kb = pair
    for g, b in ((1.0, 0.5), (0.5, 0.0), (-0.1, 0.5)):
        with pytest.raises(ConfigError):
            D.fixed_point(ka, kb, g, b)
    with pytest.raises(ConfigError):
        D.empirical_kernels(["x"], [1.5], [])
    with pytest.raises(ConfigError):
        D.empirical_kernels(["x"], [0.5], [("x", "a", "nowhere", 1)])


def test_coupled_radius_is_below_the_contextwise_one() -> None:
    """Definition 11: restricting the coupling to the task diagonal can only raise the value."""
    rng = np.random.default_rng(9)
    for _ in range(10):
        n = int(rng.integers(2, 7))
        ce, cx = rng.uniform(size=(2, n, n))
        coupled = D.controllability_radius(ce, cx, 0.5)
        ctx = D.contextwise_radius(np.diag(cx), np.diag(ce), lam_in=0.5)
        assert coupled <= ctx.radius_lo + 1e-12
    # one task: the only coupling is the diagonal
    one = D.controllability_radius(np.array([[0.2]]), np.array([[0.6]]), 0.5)
    assert one == pytest.approx(0.4)
