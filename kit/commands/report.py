"""`kit report board`: the certified board as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from kit import __version__
from kit.certify.run import DESIGN_COPY, SYNTHETIC_FILE
from kit.commands.provenance import CONTEXT_FILE
from kit.commands.sealed import sealed_file
from kit.core import atomic, boundary
from kit.core.receipts import file_sha256
from kit.core.schema import read_table, read_yaml
from kit.report.board_page import render_board_page


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
    help="Override the design YAML the board was certified under (default: CERTIFIED/design.yaml, "
    "the copy `kit certify` keeps); shows alpha and its sha256.",
)
@click.option("--title", default="Certified board", show_default=True, help="Title of the page.")
@sealed_file("out", kind="report-board", default=lambda kw: kw["certified"] / "board.html")
def board_cmd(certified: Path, out: Path | None, design: Path | None, title: str) -> None:
    """Render CERTIFIED/pairs.csv and CERTIFIED/ranks.csv (from `kit certify`) as one HTML page:
    the answer first (certified / refused / undecided at alpha, the top of the board), the
    rank-interval chart, every pair verdict with its reason (sortable, filterable), the data
    hashes and command it came from, and CERTIFIED/validity.csv (from `kit certify --validate
    N`) when present. The context comes from the folder itself (design.yaml, context.json,
    synthetic.json, kept by `kit certify`): a generated board is labelled SYNTHETIC.

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
    kept = certified / DESIGN_COPY
    if design is None and kept.is_file():
        design = kept
    if design is not None:
        declared = read_yaml(design)
        meta["design sha256"] = file_sha256(design)
        meta["design"] = "CERTIFIED/design.yaml (kept by kit certify)" if design == kept else design
        if isinstance(declared, dict) and "alpha" in declared:
            meta["alpha"] = declared["alpha"]
    context_path = certified / CONTEXT_FILE
    if context_path.is_file():
        context = boundary.read_json(context_path)
        if isinstance(context, dict):
            if context.get("command"):
                meta["certified by"] = context["command"]
            if context.get("kit_version"):
                meta["certified with kit"] = context["kit_version"]
            for name, rec in sorted((context.get("inputs") or {}).items()):
                if isinstance(rec, dict) and "sha256" in rec:
                    meta[f"input {name} sha256"] = rec["sha256"]
    synthetic = None
    synthetic_path = certified / SYNTHETIC_FILE
    if synthetic_path.is_file():
        record = boundary.read_json(synthetic_path)
        synthetic = record if isinstance(record, dict) and record.get("synthetic") else None
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
    page = render_board_page(
        ranks, pairs, meta, title=title, validity=validity, synthetic=synthetic
    )
    atomic.write_text(out, page)
    label = ", SYNTHETIC" if synthetic else ""
    click.echo(f"wrote {out} ({len(ranks)} systems, {len(pairs)} pair verdicts{label})")
