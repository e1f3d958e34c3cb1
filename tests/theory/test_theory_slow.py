"""Longer seeded checks of Theorems 2 and 4 (run with `make test-slow`)."""

from __future__ import annotations

import numpy as np
import pytest

from kit.certify import composition as C
from kit.certify import distance as D

pytestmark = pytest.mark.slow


def test_theorem2_on_fine_grids_and_many_chains() -> None:
    rng = np.random.default_rng(101)
    for chain in range(100):
        a, b = C.draw_knobs(rng)
        for r in C.check_chain(chain, a, b, n=40, levels=7, designs=("ratio_sup",)):
            assert r.observed <= r.bound + 1e-12
            assert r.utility_gap <= r.utility_bound + 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_theorem4_on_larger_random_kernels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gamma, beta = float(rng.uniform(0.5, 0.95)), float(rng.uniform(0.1, 0.9))
    parts = []
    for _ in range(3):
        n = 14
        states = [f"s{i}" for i in range(n)]
        tr = []
        for i in range(n - 3):
            for _ in range(int(rng.integers(1, 5))):
                j = int(rng.integers(i + 1, n))
                tr.append(
                    (states[i], f"l{int(rng.integers(5))}", states[j], float(rng.integers(1, 9)))
                )
        parts.append(D.empirical_kernels(states, rng.uniform(size=n), tr))
    u = D.disjoint_union(parts, ["X", "Y", "Z"])
    cc = D.contraction_check(u, u, gamma, beta, rng, n_random=3, symmetric=True)
    kappa = gamma * (1 - beta)
    assert cc.modulus_observed <= kappa + 1e-9 and cc.modulus_random <= kappa + 1e-9
    assert cc.start_gap <= 1e-9
    fp = D.fixed_point(u, u, gamma, beta, symmetric=True)
    chk = D.pseudometric_check(fp.d)
    assert chk.max_triangle_violation <= 1e-9 and chk.max_diagonal <= 1e-12
