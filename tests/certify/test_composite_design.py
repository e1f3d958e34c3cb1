"""Normalisation, axes and composite; the design file and its schema."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kit.certify.composite import composite, normalise_quality, normalise_style
from kit.certify.design import parse_design
from kit.certify.engine import certify_board
from kit.certify.simulate import simulate_board
from kit.core.errors import ConfigError, InputError
from kit.core.schema import read_yaml, validate_json

REPO = Path(__file__).resolve().parents[2]


def test_quality_normalisation_to_human_band() -> None:
    z = normalise_quality(np.array([0.1, 0.3, 0.5, 0.9]), np.full(4, 0.2), np.full(4, 0.6))
    np.testing.assert_allclose(z, [0.0, 0.25, 0.75, 1.0])
    assert np.isnan(normalise_quality(np.array([0.5]), np.array([0.6]), np.array([0.6]))[0])


def test_style_normalisation_by_distance_to_band() -> None:
    z = normalise_style(np.array([0.5, 0.35, 0.9]), np.full(3, 0.4), np.full(3, 0.6))
    np.testing.assert_allclose(z, [1.0, 0.75, 0.0])


def test_composite_needs_every_axis() -> None:
    cube = np.array(
        [
            [[0.2, np.nan, 0.4]],  # r1
            [[0.4, np.nan, np.nan]],  # r2
            [[0.6, 0.5, 0.8]],  # r3
        ]
    )
    comp, axes = composite(cube, ["r1", "r2", "r3"], {"x": ("r1", "r2"), "y": ("r3",)})
    np.testing.assert_allclose(axes["x"][0], [0.3, np.nan, 0.4])
    np.testing.assert_allclose(comp[0], [0.45, np.nan, 0.6])


def test_targets_path_normalises_quality_readouts() -> None:
    frame = simulate_board(
        np.random.default_rng(0), {"A": 0.05, "B": 0.0}, n_tasks=20, n_clusters=5, readouts=["q"]
    )
    design = parse_design({"readouts": {"q": {"kind": "quality"}}})
    with pytest.raises(InputError) as exc:
        certify_board(frame, design)
    assert exc.value.reason == "missing_targets"
    targets = pd.DataFrame({"task_id": sorted(frame["task_id"].unique())}).assign(
        readout="q", q10_peers=0.0, target=2.0, band_lo=np.nan, band_hi=np.nan
    )
    halved = certify_board(frame, design, targets).pairs
    plain = certify_board(frame, parse_design({})).pairs
    assert halved["gap"].iloc[0] == pytest.approx(plain["gap"].iloc[0] / 2)


def test_example_design_validates_and_parses() -> None:
    raw = read_yaml(REPO / "examples/certify/design.yaml", "design")
    d = parse_design(raw)
    assert d.axes is not None and d.nuisance is not None and d.clusters is not None


def test_issue_design_is_accepted() -> None:
    raw = {
        "alpha": 0.05,
        "family": "all_pairs",
        "window": "scaffold",
        "min_common_tasks": 10,
        "tolerance": {"default": 0.2},
        "nuisance": {
            "L_s": 1.0,
            "L_C": 1.0,
            "eps_protocol": 0.0,
            "systems": {"SysA": {"L_M": 0.89, "eps_in": 0.4, "xi": 0.0, "eps_cont": 0.0}},
        },
    }
    d = parse_design(validate_json(raw, "design"))
    assert d.nuisance is not None and d.nuisance.systems["SysA"].L_M == 0.89


def test_design_cross_checks() -> None:
    with pytest.raises(ConfigError):
        parse_design({"family": [["A", "A"]]})
    with pytest.raises(ConfigError):
        parse_design({"axes": {"x": ["r1"], "y": ["r1"]}})
    with pytest.raises(InputError):
        validate_json({"alpha": 2}, "design")
