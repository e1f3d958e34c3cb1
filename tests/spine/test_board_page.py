"""The certified board page: self-contained, every verdict shown, rendered in headless Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from browser import screenshot
from click.testing import CliRunner

from kit.cli import cli
from kit.report.board_page import render_board_page

REPO = Path(__file__).resolve().parents[2]
EXTERNAL = re.compile(
    r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|<link\b|<script\b[^>]*\bsrc=|@import|url\(", re.I
)


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    ranks = pd.DataFrame(
        {
            "system": ["A", "B", "C"],
            "composite": [0.6, 0.5, 0.4],
            "n_tasks": [50, 50, 50],
            "rank_lo": [1, 2, 2],
            "rank_hi": [1, 3, 3],
        }
    )
    pairs = pd.DataFrame(
        {
            "system_a": ["A", "A", "B"],
            "system_b": ["B", "C", "C"],
            "readout": ["composite"] * 3,
            "verdict": ["certified", "refused", "undecided_sampling"],
            "reason": ["exact", "backbone_outside_scaffold_window", "gap <= q + eps_outside"],
            "winner": ["A", None, None],
            "gap": [0.1, 0.2, 0.01],
            "q": [0.03, float("nan"), 0.04],
            "eps_outside": [0.0, float("inf"), 0.0],
            "mde": [0.03, float("inf"), 0.04],
        }
    )
    return ranks, pairs


def test_page_is_self_contained_and_shows_every_verdict() -> None:
    ranks, pairs = _frames()
    page = render_board_page(ranks, pairs, {"alpha": 0.05, "pairs.csv sha256": "ab" * 32})
    assert not EXTERNAL.search(page), EXTERNAL.search(page)
    assert "refused (inadmissible)" in page and "backbone_outside_scaffold_window" in page
    assert "undecided: sampling-limited" in page
    assert page.count("<tr>") == 1 + 3 + 1 + 3  # headers + ranks + header + pairs
    assert "ab" * 32 in page and "alpha 0.05" in page
    assert "<svg" in page and page.count('stroke-width="8"') == 3


def test_page_escapes_system_names() -> None:
    ranks, pairs = _frames()
    ranks.loc[0, "system"] = "<script>alert(1)</script>"
    page = render_board_page(ranks, pairs, {})
    assert "<script>alert" not in page and "&lt;script&gt;" in page


def test_certified_board_renders_in_chromium(tmp_path: Path) -> None:
    runner = CliRunner()
    scores = tmp_path / "s.csv"
    res = runner.invoke(
        cli,
        [
            "simulate",
            "board",
            "--out",
            str(scores),
            "--seed",
            "3",
            "--systems",
            "A=0.15,B=0.0,C=-0.15",
        ],
    )
    assert res.exit_code == 0, res.output
    design = REPO / "examples" / "certify" / "design.yaml"
    res = runner.invoke(
        cli, ["certify", str(scores), "--design", str(design), "--out", str(tmp_path / "cert")]
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["report", "board", str(tmp_path / "cert"), "--design", str(design)])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "cert" / "board.html").read_text()
    assert not EXTERNAL.search(page)
    assert "alpha 0.05" in page
    shot = screenshot(tmp_path / "cert" / "board.html", tmp_path / "board.png", "1100,900")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    # a rendered page, not a blank one: many distinct colours in the screenshot
    import zlib

    assert len(data) > 20_000
    assert len(zlib.compress(data)) > 10_000
