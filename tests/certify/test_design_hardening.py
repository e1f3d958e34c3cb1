"""Design files and score rows `kit certify` must refuse (exit 2, naming file, row/key, column)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kit.certify.simulate import simulate_board
from kit.cli import cli

EFFECTS = {"A": 0.1, "B": 0.0, "C": 0.0}


@pytest.fixture()
def scores(tmp_path: Path) -> Path:
    path = tmp_path / "scores.csv"
    frame = simulate_board(
        np.random.default_rng(0), EFFECTS, readouts=("r1", "r2", "r3"), fail_rate=0.05
    )
    frame.to_csv(path, index=False)
    return path


def _certify(scores: Path, design_text: str, tmp_path: Path) -> tuple[int, str]:
    design = tmp_path / "my_design.yaml"
    design.write_text(design_text)
    res = CliRunner().invoke(
        cli,
        [
            "certify",
            str(scores),
            "--design",
            str(design),
            "--out",
            str(tmp_path / "o"),
            "--no-figure",
        ],
    )
    return res.exit_code, res.output


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("alpha: .nan\n", "alpha"),
        ("alpha: .inf\n", "alpha"),
        ("tolerance: {default: .nan}\n", "tolerance.default"),
        ("tolerance: {r1: .inf}\n", "tolerance.r1"),
        ("nuisance: {systems: {A: {L_M: .inf}}}\n", "nuisance.systems.A.L_M"),
        ("nuisance: {systems: {A: {eps_in: .nan}}}\n", "nuisance.systems.A.eps_in"),
        ("nuisance: {L_s: .nan}\n", "nuisance.L_s"),
        ("nuisance: {L_C: {default: .inf}}\n", "nuisance.L_C.default"),
    ],
)
def test_non_finite_design_constant_is_exit_2_naming_file_and_key(
    scores: Path, tmp_path: Path, body: str, key: str
) -> None:
    code, out = _certify(scores, body, tmp_path)
    assert code == 2, out
    assert "my_design.yaml" in out and key in out and "finite" in out
    assert "Traceback" not in out


def test_repeated_family_pair_names_the_design_file(scores: Path, tmp_path: Path) -> None:
    code, out = _certify(scores, "family: [[A, B], [B, A]]\n", tmp_path)
    assert code == 2
    assert "my_design.yaml" in out and "(A, B) twice" in out


def test_readout_on_no_axis_is_refused_naming_scores_row_and_design(
    scores: Path, tmp_path: Path
) -> None:
    code, out = _certify(scores, "axes: {x: [r1], y: [r2]}\n", tmp_path)
    assert code == 2, out
    assert "readout_not_on_axes" in out
    assert "'r3'" in out and "my_design.yaml" in out and "scores.csv" in out
    lines = scores.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if ",r3," in line) + 1  # 1-based line
    assert f"row {first}" in out or f":{first}" in out


def test_failed_run_with_a_score_is_refused_naming_file_row_column(
    scores: Path, tmp_path: Path
) -> None:
    lines = scores.read_text().splitlines()
    header = lines[0].split(",")
    col_failed, col_score = header.index("failed"), header.index("score")
    target = next(
        i for i, line in enumerate(lines[1:], start=1) if line.split(",")[col_failed] == "False"
    )
    cells = lines[target].split(",")
    cells[col_failed] = "True"
    assert cells[col_score] != ""
    lines[target] = ",".join(cells)
    scores.write_text("\n".join(lines) + "\n")
    code, out = _certify(scores, "alpha: 0.05\n", tmp_path)
    assert code == 2, out
    assert "failed_with_score" in out and "scores.csv" in out and "score" in out
    assert f"row {target + 1}" in out or f":{target + 1}" in out
