"""`kit board check`: the transcribed published board checked against its own printed numbers."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kit.certify.published_board import ROUNDING_TOLERANCE, check_board, summarise
from kit.commands.options import format_option, raw_option
from kit.commands.sealed import sealed_file
from kit.core import atomic
from kit.core.schema import validate_frame
from kit.core.tables import render, to_csv
from kit.registry.loaders import BOARD, published_board


@click.group()
def board() -> None:
    """Checks of the published BioLitBench board (Tables 1, 4, 5a, 5b)."""


@board.command("check")
@raw_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the per-row result csv here (a .json summary lands beside it); without it the "
    "check only prints.",
)
@click.option(
    "--tolerance",
    type=float,
    default=ROUNDING_TOLERANCE,
    show_default=True,
    help="Allowed |composite - mean(axes)|; the default is what 3-decimal rounding allows.",
)
@format_option
@sealed_file("out", kind="board-check", companions=(".json",))
def check_cmd(raw: Path, out: Path | None, tolerance: float, fmt: str) -> None:
    """Check every board row: composite vs the mean of its printed axes, the rank interval,
    and which axes are present for its entry condition.

    Printed values are rounded to 3 decimals, so an honest row has |composite - mean(axes)|
    <= 0.0005 (composite rounding) + 0.0005 (mean of rounded axes) = 0.001.

    Exit status 0 when every row holds, 1 when any fails (each failing row is printed), 2 on
    bad input.

    Example: kit board check --out data/tables/board_check.csv
    """
    result = check_board(published_board(raw), tolerance=tolerance)
    validate_frame(result, "board_check", str(out or BOARD))
    summary = summarise(result)
    summary["source"] = BOARD
    if out is not None:
        atomic.write_text(out, to_csv(result))
        atomic.write_text(
            out.with_suffix(".json"), json.dumps(summary, indent=2, sort_keys=True) + "\n"
        )
    failing = result[~result["ok"]]
    if len(failing):
        cols = ["table", "system", "composite", "axes_mean", "abs_delta", "rank_lo", "rank_hi"]
        click.echo(render(failing[[*cols, "failures"]], fmt, title="rows failing:"), nl=False)
    click.echo(
        f"rows checked: {summary['rows_checked']}, rows failing: {summary['rows_failing']}, "
        f"max |delta|: {summary['max_abs_delta']:.6f} (tolerance {tolerance:.6f})"
        + (f"; wrote {out}" if out is not None else "")
    )
    if len(failing):
        raise SystemExit(1)
