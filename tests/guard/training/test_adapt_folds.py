"""Cross-validation units of `kit guard adapt`: pairs sharing a claim, a passage or a group
value never straddle a fold (else a fine-tuned model is scored on passages it memorised)."""

from __future__ import annotations

import numpy as np

from kit.guard.training.adapt_folds import grouped_folds, independent_units


def test_units_join_pairs_sharing_a_claim_or_a_passage() -> None:
    claims = ["c1", "c2", "c3", "c3", "c4", "c5"]
    passages = ["p1", "p1", "p2", "p3", "p4", "p2"]
    u = independent_units(claims, passages)
    assert u[0] == u[1] and u[2] == u[3] == u[5] and len({u[0], u[2], u[4]}) == 3
    # a group column joins what text alone does not
    g = independent_units(claims, passages, ["a", "b", "x", "y", "a", "z"])
    assert g[4] == g[0] and g[2] != g[0]
    # deterministic: the first unit seen is 0
    assert u[0] == 0 and np.array_equal(u, independent_units(claims, passages))


def test_folds_keep_units_whole_balanced_and_seeded() -> None:
    rng = np.random.default_rng(0)
    units = np.repeat(np.arange(60), rng.integers(1, 6, size=60))
    positive = rng.uniform(size=units.size) < 0.4
    fold = grouped_folds(units, positive, 3, seed=7)
    for u in np.unique(units):
        assert np.unique(fold[units == u]).size == 1  # a unit is never split
    sizes = np.bincount(fold, minlength=3)
    assert sizes.min() >= 0.8 * sizes.max()
    pos = np.bincount(fold[positive], minlength=3)
    assert pos.min() >= 1 and pos.min() >= 0.6 * pos.max()
    assert np.array_equal(fold, grouped_folds(units, positive, 3, seed=7))
    assert not np.array_equal(fold, grouped_folds(units, positive, 3, seed=8))
