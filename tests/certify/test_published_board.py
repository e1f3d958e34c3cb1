"""`kit board check` on the real transcribed board, and on boards built to fail."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.certify.published_board import AXES, ROUNDING_TOLERANCE, check_board, summarise
from kit.cli import cli
from kit.registry.loaders import published_board


@pytest.fixture
def board(registry_raw: Path) -> pd.DataFrame:
    return published_board(registry_raw)


def test_tolerance_is_what_rounding_allows() -> None:
    # simulate: true axes, true composite = their mean; print everything to 3 decimals
    rng = np.random.default_rng(0)
    worst = 0.0
    for k in (5, 6):
        axes = rng.uniform(0, 1, size=(200_000, k))
        comp = axes.mean(axis=1)
        printed = np.round(axes, 3).mean(axis=1)
        worst = max(worst, float(np.max(np.abs(np.round(comp, 3) - printed))))
    assert worst <= ROUNDING_TOLERANCE
    assert worst > 0.0008  # simulated rounding comes close to the bound: it is not loose


def test_real_board_findings(board: pd.DataFrame) -> None:
    result = check_board(board)
    summary = summarise(result)
    assert summary["rows_checked"] == 46
    # every rank interval and axis layout in the transcription holds
    assert not result["failures"].str.contains("rank|axis").any()
    failing = result[~result["ok"]]
    # the rows whose composite is not the mean of their printed axes, measured, not assumed
    recomputed = board[list(AXES)].mean(axis=1, skipna=True)
    off = board[(board["composite"] - recomputed).abs() > ROUNDING_TOLERANCE]
    expected_fail = set(off["system"] + "@" + off["table"])
    assert set(failing["system"] + "@" + failing["table"]) == expected_fail


def _run(raw: Path, out: Path) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["board", "check", "--raw", str(raw), "--out", str(out)])
    return res.exit_code, res.output


def _raw_with_board(registry_raw: Path, tmp_path: Path, frame: pd.DataFrame) -> Path:
    raw = tmp_path / "raw"
    shutil.copytree(registry_raw, raw)
    frame.to_csv(raw / "published/biolitbench_board.csv", index=False, float_format="%.3f")
    return raw


def test_consistent_board_exits_0(registry_raw: Path, tmp_path: Path, board: pd.DataFrame) -> None:
    fixed = board.copy()
    fixed["composite"] = fixed[list(AXES)].mean(axis=1, skipna=True).round(3)
    code, out = _run(_raw_with_board(registry_raw, tmp_path, fixed), tmp_path / "o.csv")
    assert code == 0, out
    assert "rows failing: 0" in out
    assert json.loads((tmp_path / "o.json").read_text())["rows_failing"] == 0


def test_each_failure_kind_is_named(
    registry_raw: Path, tmp_path: Path, board: pd.DataFrame
) -> None:
    bad = board.copy()
    bad["composite"] = bad[list(AXES)].mean(axis=1, skipna=True).round(3)
    bad.loc[0, "rank_lo"] = 5
    bad.loc[0, "rank_hi"] = 3  # lo > hi
    bad.loc[1, "retrieval"] = 0.5  # retrieval under fixed_input
    bad.loc[12, "retrieval"] = np.nan  # same_pool without retrieval
    bad.loc[13, "composite"] = bad.loc[13, "composite"] + 0.01
    code, out = _run(_raw_with_board(registry_raw, tmp_path, bad), tmp_path / "o.csv")
    assert code == 1
    result = pd.read_csv(tmp_path / "o.csv", keep_default_na=False)
    fails = dict(zip(result.index, result["failures"], strict=True))
    assert "rank_interval_invalid" in fails[0]
    assert "axis_unexpected:retrieval" in fails[1]
    assert "axis_missing:retrieval" in fails[12]
    assert "composite_mismatch" in fails[13]
    assert "rows failing: 4" in out


def test_check_without_out_writes_nothing(
    registry_raw: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check is side-effect free: files appear only when --out is given."""
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["board", "check", "--raw", str(registry_raw)])
    assert res.exit_code == 1, res.output  # 4 published rows exceed the rounding tolerance
    assert "rows checked: 46" in res.output and "wrote" not in res.output
    assert list(tmp_path.iterdir()) == []
