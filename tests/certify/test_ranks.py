"""Rank intervals against brute force over all linear extensions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kit.certify.ranks import rank_intervals, transitive_closure
from kit.core.errors import InputError


def _brute(above: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = above.shape[0]
    lo, hi = np.full(n, n + 1), np.zeros(n, dtype=int)
    edges = list(zip(*np.nonzero(above), strict=True))
    for perm in itertools.permutations(range(n)):
        pos = np.empty(n, dtype=int)
        pos[list(perm)] = np.arange(1, n + 1)
        if all(pos[i] < pos[j] for i, j in edges):
            lo, hi = np.minimum(lo, pos), np.maximum(hi, pos)
    return lo, hi


@pytest.mark.parametrize("seed", range(40))
def test_rank_intervals_equal_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    order = rng.permutation(n)  # a hidden order makes the random relation acyclic
    density = rng.uniform(0.1, 0.7)
    above = np.zeros((n, n), dtype=bool)
    for a in range(n):
        for b in range(a + 1, n):
            if rng.random() < density:
                above[order[a], order[b]] = True
    got = rank_intervals([f"S{i}" for i in range(n)], above)
    lo, hi = _brute(above)
    np.testing.assert_array_equal(got.rank_lo, lo)
    np.testing.assert_array_equal(got.rank_hi, hi)


def test_cycle_is_an_error_naming_the_systems() -> None:
    above = np.zeros((4, 4), dtype=bool)
    above[0, 1] = above[1, 2] = above[2, 0] = True
    with pytest.raises(InputError) as exc:
        rank_intervals(["A", "B", "C", "D"], above)
    assert exc.value.reason == "certified_cycle"
    assert all(s in exc.value.message for s in ("A", "B", "C"))
    assert "D" not in exc.value.message


def test_weak_order_tie_groups_and_pinned() -> None:
    # {A} > {B, C} > {D}: a weak order
    above = np.zeros((4, 4), dtype=bool)
    above[0, [1, 2, 3]] = True
    above[[1, 2], 3] = True
    r = rank_intervals(["A", "B", "C", "D"], above)
    assert r.tie_group is not None
    assert list(r.tie_group) == [1, 2, 2, 3]
    assert list(r.rank_lo) == [1, 2, 2, 4] and list(r.rank_hi) == [1, 3, 3, 4]


def test_not_weak_order_has_no_tie_groups() -> None:
    above = np.zeros((3, 3), dtype=bool)
    above[0, 1] = True  # C incomparable to both, A and B comparable
    assert rank_intervals(["A", "B", "C"], above).tie_group is None


def test_closure_adds_implied_relations() -> None:
    above = np.zeros((3, 3), dtype=bool)
    above[0, 1] = above[1, 2] = True
    assert transitive_closure(above)[0, 2]
