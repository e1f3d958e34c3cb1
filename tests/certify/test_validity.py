"""Seeded simulations: family-wise false certification on null boards, and power.

The fast versions use few boards; the @slow ones use enough for tight Monte-Carlo error.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from kit.certify.design import parse_design
from kit.certify.engine import certify_board
from kit.certify.simulate import simulate_board

NULL = {"A": 0.0, "B": 0.0, "C": 0.0, "D": 0.0, "E": 0.0}


def _fwer(n_boards: int, seed: int) -> float:
    design = parse_design({"alpha": 0.05})
    hits = 0
    for i in range(n_boards):
        rng = np.random.default_rng([seed, i])
        frame = simulate_board(
            rng, NULL, n_tasks=50, n_clusters=23, cluster_sd=0.05, fail_rate=0.02
        )
        pairs = certify_board(frame, design).pairs
        hits += bool((pairs.loc[pairs["readout"] == "quality", "verdict"] == "certified").any())
    return hits / n_boards


def _assert_at_most_alpha(rate: float, n: int, alpha: float = 0.05) -> None:
    mc = math.sqrt(alpha * (1 - alpha) / n)
    assert rate <= alpha + 3 * mc, (rate, alpha, mc)


def test_null_fwer_fast() -> None:
    _assert_at_most_alpha(_fwer(150, seed=1), 150)


@pytest.mark.slow
def test_null_fwer_slow() -> None:
    _assert_at_most_alpha(_fwer(2000, seed=2), 2000)


def _power(n_tasks: int, n_boards: int, seed: int) -> float:
    design = parse_design({"alpha": 0.05, "min_common_tasks": 5})
    hits = 0
    for i in range(n_boards):
        rng = np.random.default_rng([seed, n_tasks, i])
        frame = simulate_board(
            rng,
            {"A": 0.04, "B": 0.0},
            n_tasks=n_tasks,
            n_clusters=max(2, n_tasks // 2),
            cluster_sd=0.03,
        )
        row = certify_board(frame, design).pairs.iloc[0]
        hits += row["verdict"] == "certified" and row["winner"] == "A"
    return hits / n_boards


def test_power_rises_with_tasks() -> None:
    powers = [_power(n, 40, seed=3) for n in (10, 40, 120)]
    assert powers[0] < powers[1] < powers[2], powers
    assert powers[2] > 0.8


@pytest.mark.slow
def test_power_rises_with_tasks_slow() -> None:
    powers = [_power(n, 300, seed=4) for n in (10, 20, 40, 80, 160)]
    assert all(a < b for a, b in itertools.pairwise(powers)), powers
