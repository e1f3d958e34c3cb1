"""Theorem 1's radius and Definition 1's decision, including invariance to the scores."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from kit.certify.admissibility import PairConditions, admit
from kit.certify.contrast import decide
from kit.certify.design import PerReadout, parse_design
from kit.certify.engine import certify_board
from kit.certify.nuisance import SystemNuisance, largest_admissible_L_M, nuisance_radius
from kit.certify.simulate import simulate_board
from kit.core.errors import ConfigError

MISMATCH = PairConditions(False, True, True, True)


def test_motivating_example_radius() -> None:
    """Section 3.1: 0.8 * 0.3 + 0.5 * 0.1 = 0.29 covers |-0.04 - 0.15| = 0.19."""
    r = nuisance_radius(SystemNuisance(L_M=0.8, eps_in=0.3), SystemNuisance(L_M=0.5, eps_in=0.1))
    assert r == pytest.approx(0.29, abs=1e-12)
    assert r >= abs(-0.04 - 0.15)


def test_full_formula_and_slack_only_when_entry_differs() -> None:
    a = SystemNuisance(L_M=0.9, eps_in=0.2, xi=0.05, eps_cont=0.01)
    b = SystemNuisance(L_M=0.7, eps_in=0.0, xi=0.5, eps_cont=0.02)  # xi_B not charged
    got = nuisance_radius(a, b, L_s=0.8, L_C=1.5, eps_protocol=0.03)
    want = 0.8 * (1.5 * (0.9 * 0.2 + 0.0 + 0.05) + 0.01 + 0.02) + 0.03
    assert got == pytest.approx(want, rel=1e-12)


def test_lira_radius_and_largest_L_M() -> None:
    lira, auto = SystemNuisance(0.890, 0.002), SystemNuisance(0.890, 0.975)
    assert nuisance_radius(auto, lira, L_s=0.833) == pytest.approx(0.7244, abs=5e-4)
    assert largest_admissible_L_M(0.208, 0.975, 0.002, L_s=0.833) == pytest.approx(
        0.208 / (0.833 * 0.977)
    )


def test_negative_constant_is_config_error() -> None:
    with pytest.raises(ConfigError):
        SystemNuisance(L_M=-1.0)


def _design(**extra: object) -> object:
    raw = {"alpha": 0.05, "tolerance": {"default": 0.2}}
    raw.update(extra)
    return parse_design(raw)


def test_decisions_and_reasons() -> None:
    nuis = {
        "L_s": 1.0,
        "L_C": 1.0,
        "eps_protocol": 0.0,
        "systems": {
            "A": {"L_M": 0.5, "eps_in": 0.1},
            "B": {"L_M": 0.5, "eps_in": 0.1},
            "C": {"L_M": 0.9, "eps_in": 0.9},
        },
    }
    d = _design(nuisance=nuis)
    exact = PairConditions(True, True, True, True)
    assert admit("A", "B", "r", exact, d).reason == "exact"
    ok = admit("A", "B", "r", MISMATCH, d)
    assert (
        ok.admissible and ok.reason == "within_tolerance" and ok.eps_outside == pytest.approx(0.1)
    )
    far = admit("A", "C", "r", MISMATCH, d)
    assert not far.admissible and far.reason == "radius_exceeds_tolerance"
    assert admit("A", "Z", "r", MISMATCH, d).reason == "undeclared_constants:Z"
    assert admit("A", "B", "r", MISMATCH, _design()).reason == "no_nuisance_constants"
    # parse_design refuses it (exit 2); a Design built in code is still refused per pair
    bad_tol = dataclasses.replace(_design(nuisance=nuis), tolerance=PerReadout(0.5))
    assert admit("A", "B", "r", MISMATCH, bad_tol).reason == "tolerance_unusable"
    none_tol = parse_design({"nuisance": nuis})
    assert admit("A", "B", "r", MISMATCH, none_tol).reason == "no_tolerance"
    scaffold = _design(window="scaffold")
    bb = PairConditions(True, True, True, False)
    refused = admit("A", "B", "r", bb, scaffold)
    assert not refused.admissible and refused.reason == "backbone_differs"
    assert math.isinf(refused.eps_outside)
    assert admit("A", "B", "r", bb, _design(window="system")).reason == "exact"


def test_decide_strict_inequality_and_undecided_kinds() -> None:
    v = decide(
        admissible=np.array([True, True, True, True, False, True, True]),
        n=np.array([20, 20, 20, 20, 20, 5, 20]),
        k=np.array([5, 5, 5, 5, 5, 5, 1]),
        gap=np.array([0.3, 0.2, 0.05, -0.15, 0.9, 0.9, 0.9]),
        q=np.array([0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]),
        eps_outside=np.array([0.1, 0.1, 0.1, 0.0, 0.0, 0.0, 0.0]),
        min_common_tasks=10,
    )
    assert list(v) == [
        "certified",  # 0.3 > 0.2
        "undecided_sampling",  # 0.2 == q + eps: strict inequality fails
        "undecided_attribution",  # 0.05 <= eps
        "certified",
        "refused",
        "too_few_tasks",
        "too_few_clusters",
    ]


def test_admissibility_does_not_change_when_scores_are_permuted() -> None:
    rng = np.random.default_rng(5)
    frame = simulate_board(rng, {"A": 0.1, "B": 0.0, "C": -0.05}, readouts=["r1", "r2"])
    frame.loc[frame["system"] == "C", "entry_hash"] = "other-entry"
    frame.loc[frame["system"] == "B", "backbone"] = "other-backbone"
    design = parse_design(
        {
            "window": "scaffold",
            "tolerance": {"default": 0.3},
            "nuisance": {
                "systems": {"A": {"L_M": 0.5, "eps_in": 0.1}, "C": {"L_M": 0.5, "eps_in": 0.2}}
            },
        }
    )
    base = certify_board(frame, design).pairs
    for seed in range(3):
        shuffled = frame.copy()
        perm = np.random.default_rng(seed).permutation(len(frame))
        shuffled["score"] = frame["score"].to_numpy()[perm]
        other = certify_board(shuffled, design).pairs
        cols = ["system_a", "system_b", "readout", "eps_outside", "reason"]
        pd.testing.assert_frame_equal(base[cols], other[cols])
        assert list(base["verdict"] == "refused") == list(other["verdict"] == "refused")
    by_pair = base[base["readout"] == "r1"].set_index(["system_a", "system_b"])["reason"]
    assert by_pair[("A", "B")] == "backbone_differs"
    assert by_pair[("A", "C")] == "within_tolerance"  # 0.5*0.1 + 0.5*0.2 = 0.15 <= 0.3
    assert by_pair[("B", "C")] == "backbone_differs"
