"""`kit report board`: the certified board as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from kit import __version__, atomic, boundary
from kit.commands.sealed import sealed_file
from kit.release.receipts import file_sha256
from kit.report.board_page import render_board_page
from kit.schema import read_table, read_yaml


@click.group()
def report() -> None:
    """Human-readable reports: pages people would rather look at than read."""


@report.command("board")
@click.argument("certified", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Page to write (default: CERTIFIED/board.html).",
)
@click.option(
    "--design",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The design YAML the board was certified under (shows alpha and its sha256).",
)
@click.option("--title", default="Certified board", show_default=True, help="Title of the page.")
@sealed_file("out", kind="report-board", default=lambda kw: kw["certified"] / "board.html")
def board_cmd(certified: Path, out: Path | None, design: Path | None, title: str) -> None:
    """Render CERTIFIED/pairs.csv and CERTIFIED/ranks.csv (from `kit certify`) as one HTML page:
    rank-interval chart, every pair verdict with its reason, the data hashes it came from, and
    CERTIFIED/validity.csv (from `kit certify --validate N`) when present.

    Example: kit certify scores.csv --design design.yaml --out cert && kit report board cert
    """
    pairs_path, ranks_path = certified / "pairs.csv", certified / "ranks.csv"
    pairs = read_table(pairs_path, "certify_pairs")
    ranks = read_table(ranks_path, "certify_ranks")
    meta: dict[str, object] = {
        "pairs.csv sha256": file_sha256(pairs_path),
        "ranks.csv sha256": file_sha256(ranks_path),
        "kit version": __version__,
    }
    if design is not None:
        declared = read_yaml(design)
        meta["design sha256"] = file_sha256(design)
        if isinstance(declared, dict) and "alpha" in declared:
            meta["alpha"] = declared["alpha"]
    summary = certified / "summary.json"
    if summary.is_file():
        for k, v in boundary.read_json(summary).items():
            if isinstance(v, str | int | float | bool):
                meta[k] = v
    validity_path = certified / "validity.csv"
    validity = read_table(validity_path, "certify_validity") if validity_path.is_file() else None
    if validity is not None:
        meta["validity.csv sha256"] = file_sha256(validity_path)
    out = out or certified / "board.html"
    atomic.write_text(out, render_board_page(ranks, pairs, meta, title=title, validity=validity))
    click.echo(f"wrote {out} ({len(ranks)} systems, {len(pairs)} pair verdicts)")
