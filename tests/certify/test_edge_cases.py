"""Edge cases of the certify engine (issue 15, item 3): each one failed on the earlier code."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.certify.admissibility import PairConditions, admit
from kit.certify.calibration import sign_flip_null
from kit.certify.contrast import decide
from kit.certify.design import PerReadout, parse_design
from kit.certify.engine import calibrate_board, certify_board
from kit.certify.simulate import simulate_board
from kit.cli import cli
from kit.core.errors import ConfigError, InputError
from kit.core.schema import read_table, validate_frame
from kit.core.tables import to_csv
from kit.stats.cluster import SE_FLOOR


def _board(effects: dict[str, float], **kw: object) -> pd.DataFrame:
    opts: dict[str, object] = {"n_tasks": 24, "n_clusters": 6}
    opts.update(kw)
    frame = simulate_board(np.random.default_rng(0), effects, **opts)  # type: ignore[arg-type]
    return validate_frame(frame, "scores")


def _run(tmp: Path, frame: pd.DataFrame, design: str, *extra: str) -> tuple[int, str]:
    scores, d = tmp / "scores.csv", tmp / "design.yaml"
    scores.write_text(to_csv(frame))
    d.write_text(design)
    args = ["certify", str(scores), "--design", str(d), "--out", str(tmp / "o"), "--no-figure"]
    res = CliRunner().invoke(cli, [*args, *extra])
    return res.exit_code, res.output


def test_one_system_board_is_exit_2_naming_the_file(tmp_path: Path) -> None:
    frame = _board({"A": 0.0})
    with pytest.raises(InputError) as exc:
        certify_board(frame, parse_design({}), source="s.csv")
    assert exc.value.reason == "too_few_systems"
    code, out = _run(tmp_path, frame, "alpha: 0.05\n")
    assert code == 2 and "too_few_systems" in out and "scores.csv" in out
    assert "Traceback" not in out


def test_constant_gap_is_too_little_variation_not_certified() -> None:
    frame = _board({"A": 0.0, "B": 0.0})
    b = frame[frame["system"] == "B"].index
    a = frame[frame["system"] == "A"].index
    frame.loc[b, "score"] = frame.loc[a, "score"].to_numpy() - 0.1  # gap 0.1 on every task
    row = certify_board(frame, parse_design({})).pairs.iloc[0]
    assert row["se"] <= SE_FLOOR
    assert row["verdict"] == "too_little_variation" and row["winner"] == ""
    assert row["gap"] == pytest.approx(0.1)


def test_identical_systems_zero_gap_labels_and_t_filled() -> None:
    frame = _board({"A": 0.0, "B": 0.0})
    b = frame[frame["system"] == "B"].index
    a = frame[frame["system"] == "A"].index
    frame.loc[b, "score"] = frame.loc[a, "score"].to_numpy()
    row = certify_board(frame, parse_design({})).pairs.iloc[0]
    assert row["verdict"] == "too_little_variation"
    assert row["t"] == 0.0 and row["p"] == 1.0


def test_zero_gap_with_variation_on_exact_pair_is_sampling_limited() -> None:
    # eps_outside = 0: a gap of exactly 0 is not "attribution-limited" (more tasks could decide)
    v = decide(
        np.array([True]), np.array([50]), np.array([8]), np.array([0.0]), np.array([0.02]),
        np.array([0.0]), 10, np.array([0.01]),
    )  # fmt: skip
    assert v[0] == "undecided_sampling"
    w = decide(
        np.array([True]), np.array([50]), np.array([8]), np.array([0.0]), np.array([0.02]),
        np.array([0.05]), 10, np.array([0.01]),
    )  # fmt: skip
    assert w[0] == "undecided_attribution"


def test_two_clusters_calibration_has_no_floating_point_blowup() -> None:
    """K = 2 equal clusters: a flipped se is 0 in exact arithmetic (rounding noise here)."""
    rng = np.random.default_rng(3)
    codes = np.repeat([0, 1], 12)
    d = rng.normal(0.0, 0.1, size=(1, 24))
    null = sign_flip_null(d, codes, 2, np.zeros(1), 0.05, 100, rng)
    assert null.exact and null.fwer == 0.0 and null.c_star < 1.0


def test_two_clusters_cli_null_draws(tmp_path: Path) -> None:
    frame = _board({"A": 0.0, "B": 0.0, "C": 0.0}, n_clusters=2)
    code, out = _run(tmp_path, frame, "min_common_tasks: 5\n", "--null-draws", "64")
    assert code == 0, out
    cal = pd.read_csv(tmp_path / "o" / "calibration.csv").set_index("quantity")["value"]
    assert cal["c_star"] < 1e3 and cal["fwer_false_certification"] < 0.5


def test_calibration_and_decide_agree_on_zero_se() -> None:
    assert decide(
        np.array([True]), np.array([50]), np.array([8]), np.array([0.3]), np.array([0.0]),
        np.array([0.0]), 10, np.array([0.0]),
    )[0] == "too_little_variation"  # fmt: skip
    # a contrast whose every flip has se at the floor certifies nothing in the null either
    codes = np.repeat(np.arange(4), 5)
    null = sign_flip_null(np.full((1, 20), 0.3), codes, 4, np.zeros(1), 0.05, 64, None)  # type: ignore[arg-type]
    assert null.per_contrast[0] == 0.0 and null.fwer == 0.0


def _quality_board() -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = _board({"A": 0.05, "B": 0.0})
    tasks = sorted(frame["task_id"].unique())
    targets = pd.DataFrame(
        {
            "task_id": tasks,
            "readout": "quality",
            "q10_peers": 0.1,
            "target": 0.9,
            "band_lo": np.nan,
            "band_hi": np.nan,
        }
    )
    return frame, targets


@pytest.mark.parametrize("kind", ["quality", "style"])
def test_degenerate_targets_are_exit_2_naming_file_row_column(tmp_path: Path, kind: str) -> None:
    frame, targets = _quality_board()
    if kind == "quality":
        targets.loc[3, "target"] = 0.05  # target <= q10
        column = "target"
    else:
        targets[["band_lo", "band_hi"]] = [0.2, 0.8]
        targets.loc[3, ["band_lo", "band_hi"]] = [0.5, 0.5]  # empty band
        column = "band_hi"
    design = f"readouts: {{quality: {{kind: {kind}}}}}\n"
    with pytest.raises(InputError) as exc:
        certify_board(frame, parse_design({"readouts": {"quality": {"kind": kind}}}), targets)
    assert exc.value.reason == "degenerate_target"
    tpath = tmp_path / "targets.csv"
    tpath.write_text(to_csv(targets))
    code, out = _run(tmp_path, frame, design, "--targets", str(tpath))
    assert code == 2, out
    assert "targets.csv" in out and "row 5" in out and f"column '{column}'" in out


def test_usable_targets_still_certify() -> None:
    frame, targets = _quality_board()
    res = certify_board(
        frame, parse_design({"readouts": {"quality": {"kind": "quality"}}}), targets
    )
    assert (res.pairs["n_common"] == 24).all()


def test_tolerance_outside_range_is_exit_2_even_for_exact_pairs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_design({"tolerance": {"default": 0.6}}, "d.yaml")
    assert exc.value.reason == "bad_tolerance" and "d.yaml" in exc.value.message
    frame = _board({"A": 0.2, "B": 0.0})  # exact pair (same entries, channel, protocol)
    code, out = _run(tmp_path, frame, "tolerance: {default: 0.6}\n")
    assert code == 2 and "bad_tolerance" in out and "design.yaml" in out
    design = dataclasses.replace(parse_design({}), tolerance=PerReadout(0.6))
    exact = PairConditions(True, True, True, True)
    adm = admit("A", "B", "r", exact, design)
    assert not adm.admissible and adm.reason == "tolerance_unusable"


def test_one_system_failing_everything_counts_lost_and_failed(tmp_path: Path) -> None:
    frame = _board({"A": 0.1, "B": 0.0, "X": 0.0}, readouts=("r1", "r2"))
    x = frame["system"] == "X"
    frame.loc[x, "failed"] = True
    frame.loc[x, "score"] = np.nan
    res = certify_board(frame, parse_design({}))
    comp = res.pairs[res.pairs["readout"] == "composite"].set_index(["system_a", "system_b"])
    assert comp.loc[("A", "B"), "n_common"] == 0
    assert comp.loc[("A", "B"), "n_lost"] == 24  # both scored, dropped from the common set
    assert comp.loc[("A", "X"), "n_failed_b"] == 24 and comp.loc[("A", "X"), "n_lost"] == 0
    r1 = res.pairs[res.pairs["readout"] == "r1"].set_index(["system_a", "system_b"])
    assert r1.loc[("A", "B"), "n_lost"] == 0 and r1.loc[("A", "B"), "n_common"] == 24
    assert res.n_failed_runs == 48 and res.n_composite_tasks == 0 and res.n_tasks == 24
    code, out = _run(tmp_path, frame, "alpha: 0.05\n")
    assert code == 0, out
    assert "failed runs: 48" in out and "0 of 24 tasks (24 lost" in out


def test_pairs_csv_carries_full_precision(tmp_path: Path) -> None:
    frame = _board({"A": 0.1, "B": 0.0, "C": 0.0})
    code, out = _run(tmp_path, frame, "alpha: 0.05\n")
    assert code == 0, out
    back = pd.read_csv(tmp_path / "o" / "pairs.csv")
    res = certify_board(read_table(tmp_path / "scores.csv", "scores"), parse_design({}))
    for col in ("gap", "se", "q", "crit"):
        np.testing.assert_array_equal(back[col].to_numpy(), res.pairs[col].to_numpy())
    md = (tmp_path / "o" / "ranks.md").read_text()
    cells = [c.strip() for c in md.split("|") if c.strip().startswith("0.")]
    assert cells and all(len(c.split(".")[-1]) == 3 for c in cells)  # markdown rounds


def test_calibrate_board_uses_the_design_inference() -> None:
    frame = _board({"A": 0.1, "B": 0.0, "C": 0.0}, n_clusters=6, cluster_sizes=[1, 2, 3, 4, 6, 8])
    for method in ("cr1", "cr2", "signflip"):
        design = parse_design({"inference": method})
        res = certify_board(frame, design)
        cal, _ = calibrate_board(frame, design, res, 64, np.random.default_rng(0))
        assert 0 <= cal.set_index("quantity").loc["fwer_false_certification", "value"] <= 1


@pytest.mark.parametrize(
    ("design", "change", "verdict"),
    [
        ("min_common_tasks: 1000\n", {}, "too_few_tasks"),
        ("alpha: 0.05\n", {"cluster": "only"}, "too_few_clusters"),
    ],
)
def test_rows_without_a_radius_carry_empty_statistics(
    tmp_path: Path, design: str, change: dict[str, str], verdict: str
) -> None:
    frame = _board({"A": 0.1, "B": 0.0, "C": 0.0}).assign(**change)
    code, out = _run(tmp_path, frame, design)
    assert code == 0, out
    text = (tmp_path / "o" / "pairs.csv").read_text()
    assert "nan" not in text.lower()
    raw = pd.read_csv(tmp_path / "o" / "pairs.csv", keep_default_na=False)
    assert set(raw["verdict"]) == {verdict}
    for col in ("se", "q", "df", "crit", "t", "p", "mde"):
        assert (raw[col] == "").all(), col  # empty cells, not numbers that look like evidence
    assert (raw["gap"] != "").all()  # the descriptive gap stays
