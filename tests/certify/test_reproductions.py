"""The published checks recomputed from the registry's published/ files."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.reproductions.certify import lira_refusal, motivating_example, published_pipelines


def _values(table: object) -> dict[str, float]:
    return dict(zip(table["quantity"], table["kit_value"], strict=True))  # type: ignore[index]


def test_motivating_example(registry_raw: Path) -> None:
    v = _values(motivating_example(registry_raw)["certify_motivating_example"])
    assert v["observed_contrast"] == pytest.approx(-0.04)
    assert v["controlled_contrast"] == pytest.approx(0.15)
    assert v["nuisance_radius"] == pytest.approx(0.29)
    assert v["radius_covers_discrepancy"] == 1.0
    assert v["attribution_limited_with_infinite_tasks"] == 1.0


def test_lira_refusal(registry_raw: Path) -> None:
    table = lira_refusal(registry_raw)["certify_lira_refusal"]
    v = _values(table)
    assert v["radius_AutoSurvey_LiRA"] == pytest.approx(0.725, abs=1e-3)
    assert 0.695 <= v["radius_range_low"] and v["radius_range_high"] <= 0.735
    assert v["refused_at_median_tolerance"] == 1.0
    assert v["largest_L_M_at_median_tolerance"] == pytest.approx(0.208 / (0.833 * 0.977))
    assert 0 < v["implied_eps_fair_of_that_readout"] < 0.5


def test_published_pipelines_refuse_eleven(registry_raw: Path) -> None:
    out = published_pipelines(registry_raw)
    pairs = out["certify_published_pipelines"]
    assert len(pairs) == 21
    refused = pairs[~pairs["admissible"]]
    assert len(refused) == 11
    backbone = refused[refused["reason"] == "backbone_differs"]
    assert len(backbone) == 6
    assert ((backbone["system_a"] == "DR-Tulu") | (backbone["system_b"] == "DR-Tulu")).all()
    entry = refused[refused["reason"] == "radius_exceeds_tolerance"]
    assert len(entry) == 5
    assert ((entry["system_a"] == "LiRA") | (entry["system_b"] == "LiRA")).all()
    counts = out["certify_published_pipelines_counts"].set_index("quantity")
    assert counts.loc["refused", "kit_value"] == counts.loc["refused", "paper_value"] == 11
