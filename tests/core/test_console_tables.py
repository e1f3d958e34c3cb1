"""Console tables stay readable; every file format keeps the full text."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner

from kit.cli import cli
from kit.core.tables import CONSOLE_CELL, render, to_console


def test_console_clips_long_cells_but_files_keep_them() -> None:
    long = "x" * 200
    frame = pd.DataFrame({"name": ["a"], "text": [long]})
    console = to_console(frame)
    assert max(len(line) for line in console.splitlines()) == len("name") + 2 + CONSOLE_CELL
    assert "..." in console and long not in console
    for fmt in ("csv", "json", "markdown", "latex"):
        assert long in render(frame, fmt), fmt


def test_reproduce_list_fits_a_terminal_and_csv_has_everything() -> None:
    res = CliRunner().invoke(cli, ["reproduce", "list"])
    assert res.exit_code == 0, res.output
    assert max(len(line) for line in res.output.splitlines()) <= 140
    full = CliRunner().invoke(cli, ["reproduce", "list", "--format", "csv"])
    assert full.output.splitlines()[0] == "name,paper,section,tables,needs,title"
