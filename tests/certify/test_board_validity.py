"""`kit certify --validate N`: the validity report of the user's own board (kit/certify/validity.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from statsmodels.stats.proportion import proportion_confint

from kit.certify.design import parse_design
from kit.certify.engine import prepare_board
from kit.certify.simulate import simulate_board, unequal_sizes
from kit.certify.validity import _synthetic, board_shape, validity_report
from kit.cli import cli
from kit.core.schema import read_table, validate_frame

NULL5 = dict.fromkeys("ABCDE", 0.0)


def _row(v: pd.DataFrame, quantity: str, readout: str = "all") -> pd.Series:
    return v[(v["quantity"] == quantity) & (v["readout"] == readout)].iloc[0]


@pytest.mark.parametrize(("k", "cluster_sd"), [(23, 0.05), (6, 0.1), (12, 0.0)])
def test_board_shape_recovers_the_variance_components(k: int, cluster_sd: float) -> None:
    design = parse_design({})
    est = []
    for i in range(12):
        frame = simulate_board(
            np.random.default_rng([i, k]),
            dict.fromkeys("ABCDEF", 0.0),
            n_tasks=120,
            n_clusters=k,
            cluster_sizes=unequal_sizes(120, k),
            readouts=("r1",),
            cluster_sd=cluster_sd,
            noise_sd=0.08,
            task_sd=0.05,
            fail_rate=0.05,
        )
        s = board_shape(prepare_board(frame, design))
        est.append((s.noise_sd[0], s.cluster_sd[0], s.task_sd[0]))
    noise, clus, task = np.mean(est, axis=0)
    assert noise == pytest.approx(0.08, rel=0.05)
    assert clus == pytest.approx(cluster_sd, abs=0.015)
    assert task == pytest.approx(0.05, rel=0.2)  # shapes only the clipping at 0 and 1


def test_board_shape_recovers_system_effects() -> None:
    effects = {"A": 0.1, "B": 0.0, "C": -0.05}
    frame = simulate_board(np.random.default_rng(3), effects, n_tasks=200, readouts=("r1", "r2"))
    s = board_shape(prepare_board(frame, parse_design({})))
    truth = np.array([0.1, 0.0, -0.05]) - np.mean([0.1, 0.0, -0.05])
    assert np.allclose(s.effects, truth[None, :], atol=0.02)


def test_synthetic_boards_keep_the_failure_pattern_and_clusters() -> None:
    frame = simulate_board(
        np.random.default_rng(4),
        NULL5,
        n_tasks=40,
        n_clusters=5,
        readouts=("r1", "r2"),
        fail_rate=0.1,
    )
    design = parse_design({})
    board = prepare_board(frame, design)
    shape = board_shape(board)
    syn = _synthetic(board, design, shape, shape.effects, np.random.default_rng(0))
    assert np.array_equal(np.isfinite(syn.cube), np.isfinite(board.cube))
    assert np.array_equal(syn.composite_tasks, board.composite_tasks)
    assert np.array_equal(syn.codes, board.codes) and syn.systems == board.systems
    assert not np.allclose(syn.cube[np.isfinite(syn.cube)], board.cube[np.isfinite(board.cube)])


def test_report_is_deterministic_and_schema_valid() -> None:
    frame = simulate_board(np.random.default_rng(5), NULL5, n_tasks=40, n_clusters=8)
    design = parse_design({})
    board = prepare_board(frame, design)
    a = validity_report(board, design, 30, seed=1)
    b = validity_report(board, design, 30, seed=1)
    pd.testing.assert_frame_equal(a, b)
    c = validity_report(board, design, 30, seed=2)
    assert not a["value"].equals(c["value"])
    validate_frame(a, "certify_validity", "validity.csv")
    assert all("SYNTHETIC" in d for d in a.loc[a["readout"] == "all", "detail"].iloc[1:])


def test_wilson_interval_matches_statsmodels() -> None:
    frame = simulate_board(
        np.random.default_rng(6),
        NULL5,
        n_tasks=40,
        n_clusters=4,
        cluster_sizes=unequal_sizes(40, 4),
        cluster_sd=0.1,
    )
    design = parse_design({"inference": "cr1"})
    v = validity_report(prepare_board(frame, design), design, 60, seed=0)
    row = _row(v, "fwer_false_certification")
    hits = round(row["value"] * 60)
    lo, hi = proportion_confint(hits, 60, alpha=0.05, method="wilson")
    assert (row["lo"], row["hi"]) == pytest.approx((lo, hi), abs=1e-12)


def _fwer_on(frame: pd.DataFrame, inference: str, n: int) -> float:
    design = parse_design({"inference": inference, "multiplicity": "pairs"})
    v = validity_report(prepare_board(frame, design), design, n, seed=0)
    return float(_row(v, "fwer_false_certification")["value"])


def test_report_sees_that_cr1_fails_with_four_unequal_clusters() -> None:
    """A board like the issue's (4 unequal clusters, strong cluster effect): the report shows
    cr1 false-certifying above alpha and cr2 (the default) within MC slack."""
    frame = simulate_board(
        np.random.default_rng(7),
        NULL5,
        n_tasks=60,
        n_clusters=4,
        cluster_sizes=unequal_sizes(60, 4),
        cluster_sd=0.08,
        noise_sd=0.08,
    )
    n = 300
    slack = 0.05 + 3 * math.sqrt(0.05 * 0.95 / n)
    # one readout: its composite repeats it, so the family is narrowed to its pairs (m = 10,
    # the setting); the default family (m = 20) would also count the composite rows
    cr1, cr2 = _fwer_on(frame, "cr1", n), _fwer_on(frame, "cr2", n)
    assert cr1 > slack, cr1
    assert cr2 <= slack, cr2


def test_power_at_large_observed_gaps_is_high_and_small_gaps_low() -> None:
    design = parse_design({})
    big = simulate_board(np.random.default_rng(8), {"A": 0.3, "B": 0.0}, n_tasks=60)
    v = validity_report(prepare_board(big, design), design, 40, seed=0)
    assert _row(v, "power_at_observed_gaps")["value"] > 0.9
    assert _row(v, "wrong_winner_alternative")["value"] == 0.0
    small = simulate_board(np.random.default_rng(8), {"A": 0.005, "B": 0.0}, n_tasks=60)
    w = validity_report(prepare_board(small, design), design, 40, seed=0)
    assert _row(w, "power_at_observed_gaps")["value"] < 0.3


def test_cli_writes_validity_and_the_board_page_shows_it(tmp_path: Path) -> None:
    scores = tmp_path / "s.csv"
    simulate_board(np.random.default_rng(9), NULL5, n_tasks=40, n_clusters=6).to_csv(
        scores, index=False
    )
    design = tmp_path / "d.yaml"
    design.write_text("alpha: 0.05\n")
    out = tmp_path / "out"
    args = ["certify", str(scores), "--design", str(design), "--out", str(out), "--no-figure"]
    res = CliRunner().invoke(cli, [*args, "--validate", "40", "--seed", "3"])
    assert res.exit_code == 0, res.output
    assert "validity: On 40 SYNTHETIC boards shaped like yours with no true differences" in (
        res.output
    )
    v = read_table(out / "validity.csv", "certify_validity")
    assert int(_row(v, "fwer_false_certification")["n_boards"]) == 40
    again = tmp_path / "again"
    res2 = CliRunner().invoke(
        cli,
        [
            "certify",
            str(scores),
            "--design",
            str(design),
            "--out",
            str(again),
            "--no-figure",
            "--validate",
            "40",
            "--seed",
            "3",
        ],
    )
    assert res2.exit_code == 0
    assert (again / "validity.csv").read_bytes() == (out / "validity.csv").read_bytes()
    page = CliRunner().invoke(cli, ["report", "board", str(out)])
    assert page.exit_code == 0, page.output
    html = (out / "board.html").read_text()
    assert "On 40 SYNTHETIC boards shaped like yours" in html
    assert "the target is at most 5.0% (alpha)" in html


@pytest.mark.parametrize("n", [7, 60, 500])
def test_wilson_bounds_at_zero_and_all_hits_are_exact(n: int) -> None:
    from kit.stats.wilson import wilson_ci

    assert wilson_ci(0, n).lo == 0.0 and wilson_ci(n, n).hi == 1.0  # not 5.6e-17 off
    _lo, hi = proportion_confint(0, n, alpha=0.05, method="wilson")
    assert wilson_ci(0, n).hi == pytest.approx(hi, abs=1e-12)
