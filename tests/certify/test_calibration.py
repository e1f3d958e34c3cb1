"""The vectorised sign-flip null against a direct re-application of the rule; LOCO."""

from __future__ import annotations

import numpy as np
import pytest

from kit.certify.calibration import loco_row, sign_flip_null, sign_vectors
from kit.certify.design import parse_design
from kit.certify.engine import calibrate_board, certify_board
from kit.certify.simulate import simulate_board
from kit.stats.cluster import cluster_t


def test_exact_enumeration_matches_direct_recomputation() -> None:
    rng = np.random.default_rng(0)
    n_clusters, t = 4, 24
    codes = np.sort(np.arange(t) % n_clusters)
    d = rng.normal(0.05, 0.1, size=(3, t))
    d[1, [2, 9]] = np.nan
    eps = np.array([0.0, 0.01, 0.0])
    delta = 0.05 / 3
    null = sign_flip_null(d, codes, n_clusters, eps, delta, draws=64, rng=rng)
    assert null.exact and len(null.statistic) == 16
    signs, _, _ = sign_vectors(n_clusters, 64, rng)
    gap = np.nanmean(d, axis=1, keepdims=True)
    for b, s in enumerate(signs):
        flipped = (d - gap) * s[codes][None, :]
        res = cluster_t(flipped, codes, n_clusters, delta)
        want = np.max(np.abs(res.gap) / (res.q + eps))
        assert null.statistic[b] == pytest.approx(want, rel=1e-9)
    assert null.fwer == pytest.approx(np.mean(null.statistic > 1))


def test_random_draws_when_enumeration_is_too_big() -> None:
    signs, w, exact = sign_vectors(23, 100, np.random.default_rng(1))
    assert not exact and signs.shape == (100, 23) and w.sum() == pytest.approx(1.0)


def test_calibrate_board_tables() -> None:
    rng = np.random.default_rng(2)
    frame = simulate_board(rng, {"A": 0.08, "B": 0.0, "C": 0.0}, n_tasks=40, n_clusters=10)
    design = parse_design({})
    res = certify_board(frame, design)
    cal, loco = calibrate_board(frame, design, res, 200, np.random.default_rng(3))
    values = dict(zip(cal["quantity"], cal["value"], strict=False))
    assert 0 <= values["fwer_false_certification"] <= 1
    assert values["n_contrasts"] == 3
    assert len(loco) == 10 and loco["jaccard"].between(0, 1).all()


def test_loco_row_counts_flips() -> None:
    full = {("A", "B", "r", "A"), ("A", "C", "r", "A")}
    left = {("A", "B", "r", "B")}
    row = loco_row("g", full, left)
    assert row["n_winner_flips"] == 1 and row["n_lost"] == 2 and row["n_gained"] == 1
    assert row["jaccard"] == 0.0


def test_removed_by_c_star_keeps_only_marginal_relations() -> None:
    import pandas as pd

    from kit.certify.calibration import removed_by_c_star

    pairs = pd.DataFrame(
        {
            "system_a": ["A", "A"],
            "system_b": ["B", "C"],
            "readout": ["composite", "composite"],
            "verdict": ["certified", "certified"],
            "winner": ["A", "C"],
            "gap": [0.102, -0.5],
            "q": [0.1, 0.1],
            "eps_outside": [0.0, 0.0],
        }
    )
    out = removed_by_c_star(pairs, 1.05)
    assert list(out["system_b"]) == ["B"] and out["ratio"].iloc[0] == pytest.approx(1.02)


def test_per_contrast_rates_bound_the_family_rate() -> None:
    rng = np.random.default_rng(4)
    codes = np.sort(np.arange(60) % 15)
    d = rng.normal(0, 0.1, size=(5, 60))
    null = sign_flip_null(d, codes, 15, np.zeros(5), 0.05 / 5, 500, rng)
    assert null.per_contrast.max() <= null.fwer + 1e-12
    assert null.fwer <= null.per_contrast.sum() + 1e-12
