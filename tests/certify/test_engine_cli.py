"""The whole-board engine and the `kit certify` / `kit simulate board` commands."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.certify.design import parse_design
from kit.certify.engine import certify_board
from kit.certify.simulate import simulate_board
from kit.cli import cli
from kit.core.errors import InputError
from kit.core.schema import read_table, validate_frame
from kit.stats.cluster import cluster_t

EFFECTS = {"A": 0.1, "B": 0.0, "C": 0.0, "D": -0.1}


@pytest.fixture(scope="module")
def board() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    return validate_frame(
        simulate_board(rng, EFFECTS, readouts=["r1", "r2"], fail_rate=0.03), "scores"
    )


@pytest.mark.parametrize("method", ["cr1", "cr2", "crv3"])
def test_pairs_match_a_per_pair_recomputation(board: pd.DataFrame, method: str) -> None:
    design = parse_design({"alpha": 0.05, "tolerance": {"default": 0.2}, "inference": method})
    res = certify_board(board, design)
    assert res.m == 6 * 3  # default family: 6 pairs x (r1, r2, composite)
    row = res.pairs.query("system_a == 'A' and system_b == 'D' and readout == 'r1'").iloc[0]
    wide = board[board["readout"] == "r1"].pivot(index="task_id", columns="system", values="score")
    clusters = board.drop_duplicates("task_id").set_index("task_id")["cluster"].loc[wide.index]
    d = (wide["A"] - wide["D"]).to_numpy()
    keep = np.isfinite(d)
    codes = pd.factorize(clusters.to_numpy()[keep])[0]
    ref = cluster_t(d[keep][None, :], codes, codes.max() + 1, 0.05 / 18, method)
    assert row["n_common"] == keep.sum()
    assert row["gap"] == pytest.approx(ref.gap[0])
    assert row["q"] == pytest.approx(ref.q[0])
    assert row["q"] == pytest.approx(row["crit"] * row["se"], rel=1e-12)
    failed = board[(board["readout"] == "r1") & board["failed"]]
    assert row["n_failed_a"] == (failed["system"] == "A").sum()
    assert row["verdict"] == "certified" and row["winner"] == "A"


def test_composite_uses_one_common_task_set(board: pd.DataFrame) -> None:
    res = certify_board(board, parse_design({"axes": {"x": ["r1"], "y": ["r2"]}}))
    comp = res.pairs[res.pairs["readout"] == "composite"]
    assert comp["n_common"].nunique() == 1
    assert (res.ranks["n_tasks"] == comp["n_common"].iloc[0]).all()
    top = res.ranks.iloc[0]
    assert top["system"] == "A" and top["rank_lo"] == 1


def test_too_few_tasks_and_skipped_pairs_count_in_m(board: pd.DataFrame) -> None:
    design = parse_design({"min_common_tasks": 1000, "systems": ["A", "B", "C", "D", "E"]})
    res = certify_board(board, design)
    assert res.m == 10 * 3  # E is declared but absent: its pairs still count (x 3 readouts)
    assert set(res.pairs["verdict"]) == {"too_few_tasks"}
    assert (res.pairs["reason"] == "system_absent").sum() == 4 * 3


def test_one_cluster_gives_too_few_clusters(board: pd.DataFrame) -> None:
    one = board.assign(cluster="only")
    res = certify_board(one, parse_design({}))
    assert set(res.pairs["verdict"]) == {"too_few_clusters"}


def test_undeclared_cluster_is_an_error(board: pd.DataFrame) -> None:
    declared = sorted(board["cluster"].unique())[1:]
    with pytest.raises(InputError) as exc:
        certify_board(board, parse_design({"clusters": declared}), source="s.csv")
    assert exc.value.reason == "undeclared_cluster"


def _write_inputs(tmp: Path, design: str) -> tuple[Path, Path]:
    runner = CliRunner()
    scores = tmp / "scores.csv"
    res = runner.invoke(
        cli,
        [
            "simulate",
            "board",
            "--out",
            str(scores),
            "--seed",
            "3",
            "--tasks",
            "30",
            "--clusters",
            "8",
            "--readouts",
            "r1,r2",
        ],
    )
    assert res.exit_code == 0, res.output
    d = tmp / "design.yaml"
    d.write_text(design)
    return scores, d


def test_cli_writes_all_outputs(tmp_path: Path) -> None:
    scores, design = _write_inputs(
        tmp_path,
        "alpha: 0.05\nfamily: all_pairs\nwindow: system\nmin_common_tasks: 10\n"
        "tolerance: {default: 0.2}\nnuisance: {L_s: 1.0, L_C: 1.0, eps_protocol: 0.0, "
        "systems: {A: {L_M: 0.89, eps_in: 0.4, xi: 0.0, eps_cont: 0.0}}}\n",
    )
    assert (tmp_path / "scores.csv.synthetic.json").is_file()
    assert read_table(scores, "scores")["entry_hash"].str.startswith("synthetic:").all()
    out = tmp_path / "out"
    res = CliRunner().invoke(
        cli,
        ["certify", str(scores), "--design", str(design), "--out", str(out), "--null-draws", "64"],
    )
    assert res.exit_code == 0, res.output
    for name in (
        "pairs.csv",
        "ranks.csv",
        "ranks.md",
        "ranks.tex",
        "conventional.csv",
        "conventional_counts.csv",
        "calibration.csv",
        "loco.csv",
        "ranks.png",
    ):
        assert (out / name).is_file(), name
    pairs = read_table(out / "pairs.csv", "certify_pairs")
    assert len(pairs) == 6 * 3
    read_table(out / "ranks.csv", "certify_ranks")
    loco = read_table(out / "loco.csv", "certify_loco")
    assert len(loco) == 8
    cal = read_table(out / "calibration.csv", "certify_calibration")
    assert "c_star" in set(cal["quantity"])


@pytest.mark.parametrize(
    ("design", "reason"),
    [
        ("alpha: 1.5\n", "schema_violation"),
        ("window: nope\n", "schema_violation"),
        ("clusters: [nope]\n", "undeclared_cluster"),
    ],
)
def test_cli_bad_input_exits_2(tmp_path: Path, design: str, reason: str) -> None:
    scores, d = _write_inputs(tmp_path, design)
    res = CliRunner().invoke(
        cli, ["certify", str(scores), "--design", str(d), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 2
    assert reason in res.output


def test_cli_bad_scores_exit_2(tmp_path: Path) -> None:
    scores, d = _write_inputs(tmp_path, "alpha: 0.05\n")
    text = scores.read_text().splitlines()
    text[1] = text[1].replace(",False,", ",maybe,")
    scores.write_text("\n".join(text) + "\n")
    res = CliRunner().invoke(
        cli, ["certify", str(scores), "--design", str(d), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 2
    assert "row 2" in res.output


def test_simulate_bad_systems_exit_2(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        cli, ["simulate", "board", "--out", str(tmp_path / "x.csv"), "--systems", "A=oops,B=1"]
    )
    assert res.exit_code == 2


def test_null_score_without_failure_is_an_error(board: pd.DataFrame) -> None:
    bad = board.copy()
    bad.loc[3, ["score", "failed"]] = [np.nan, False]
    with pytest.raises(InputError) as exc:
        certify_board(bad, parse_design({}), source="s.csv")
    assert exc.value.reason == "score_missing" and "row 5" in exc.value.message


def test_conventional_rules_are_nested(board: pd.DataFrame) -> None:
    design = parse_design({"window": "scaffold", "tolerance": {"default": 0.2}})
    frame = board.copy()
    frame.loc[frame["system"] == "D", "backbone"] = "other"
    conv = certify_board(frame, design).conventional
    for hi, lo in (("R2", "R3"), ("R3", "R4"), ("R4", "R5")):
        assert (conv[hi] | ~conv[lo]).all(), (hi, lo)
    assert not conv.loc[(conv["system_b"] == "D"), "R4"].any()
    assert conv.loc[(conv["system_b"] == "D"), "R1"].any()


def test_undeclared_system_is_an_error(board: pd.DataFrame) -> None:
    with pytest.raises(InputError) as exc:
        certify_board(board, parse_design({"systems": ["A", "B", "C"]}))
    assert exc.value.reason == "undeclared_system" and "D" in exc.value.message


def test_cli_outputs_are_deterministic(tmp_path: Path) -> None:
    scores, design = _write_inputs(tmp_path, "alpha: 0.05\n")
    texts = []
    for name in ("a", "b"):
        out = tmp_path / name
        args = ["certify", str(scores), "--design", str(design), "--out", str(out)]
        res = CliRunner().invoke(cli, [*args, "--null-draws", "50", "--no-figure"])
        assert res.exit_code == 0, res.output
        texts.append(
            {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        )
    assert texts[0] == texts[1]
