"""`kit verify board|receipts`: prove the release is what it claims to be."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kit.commands.options import PathDefault, skip_option
from kit.core import atomic, receipts
from kit.core.tables import frame_of, render
from kit.release import reproduce as rep


@click.group()
def verify() -> None:
    """Verify reproduced tables against the frozen board, and receipt chains."""


@verify.command("board")
@click.argument("names", nargs=-1)
@click.option(
    "--tables",
    type=click.Path(file_okay=False, path_type=Path),
    default=rep.DEFAULT_OUT,
    show_default=True,
    cls=PathDefault,
    help="Folder of reproduced tables to check (as `kit reproduce run --tables` wrote it).",
)
@click.option(
    "--expected",
    type=click.Path(file_okay=False, path_type=Path),
    default=rep.EXPECTED_DIR,
    show_default=True,
    cls=PathDefault,
    help="Folder of the frozen tables (changed only by `kit reproduce freeze`).",
)
@click.option("--skip-slow", is_flag=True, help="Skip reproductions declared slow.")
@skip_option
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the summary as JSON (DVC metrics).",
)
def board_cmd(
    names: tuple[str, ...],
    tables: Path,
    expected: Path,
    skip_slow: bool,
    skip: tuple[str, ...],
    json_out: Path | None,
) -> None:
    """Compare every reproduced table with its frozen copy, cell by cell, within the declared
    per-column tolerance. Prints cells compared, cells differing and max |delta|; exit 1 naming
    each differing cell. NAMES are reproduction names (`kit reproduce list`); none: all.

    Example: kit verify board --tables data/tables
    """
    decls = rep.select(rep.load_declarations(), names, skip_slow=skip_slow, skip=skip)
    results = rep.verify(decls, tables, expected)
    diffs = [d for r in results for d in r.diffs]
    compared = sum(r.cells_compared for r in results)
    max_delta = max((r.max_abs_delta for r in results), default=0.0)
    if diffs:
        frame = frame_of(
            [
                {
                    "table": d.table,
                    "key": d.key,
                    "column": d.column,
                    "kind": d.kind,
                    "expected": d.expected,
                    "got": d.got,
                    "abs_delta": d.abs_delta,
                }
                for d in diffs
            ]
        )
        click.echo(render(frame, "table", title="cells differing:"), nl=False)
    click.echo(
        f"tables: {len(results)}, cells compared: {compared}, cells differing: {len(diffs)}, "
        f"max |delta|: {max_delta:.3g}"
    )
    if json_out is not None:
        summary = {
            "tables": len(results),
            "cells_compared": compared,
            "cells_differing": len(diffs),
            "max_abs_delta": max_delta,
        }
        atomic.write_text(json_out, json.dumps(summary, indent=2, sort_keys=True) + "\n")
    if diffs:
        raise SystemExit(1)


@verify.command("receipts")
@click.argument("folder", type=click.Path(path_type=Path), default=rep.DEFAULT_OUT)
def receipts_cmd(folder: Path) -> None:
    """Verify FOLDER (default data/tables) completely against its receipts: the chain, every
    sealed file's sha256
    (tables, pages, JSON, figures), and that every file in FOLDER is sealed by some receipt
    (or listed as untracked, like a cache). A single-file output (a table written with
    --out FILE) is verified against its sidecar FILE.receipt.json: give FILE.

    Exit 1 naming every file that changed, is missing or is not sealed; exit 2 when FOLDER
    cannot be verified (missing, no receipts, a broken chain, a sealed path leaving FOLDER).

    \b
    Examples:
      kit verify receipts data/tables
      kit verify receipts board_check.csv
    """
    if folder.is_file():
        check = receipts.verify_file(folder)
    else:
        check = receipts.verify_outputs(folder)
    for f in check.findings:
        click.echo(str(f))
    untracked = f", {check.untracked} untracked" if check.untracked else ""
    if check.findings:
        click.echo(
            f"receipts: {check.receipts} verified, chain intact; "
            f"{len(check.findings)} difference(s) in {folder}"
        )
        raise SystemExit(1)
    click.echo(
        f"receipts: {check.receipts} verified, chain intact; {check.sealed} sealed files "
        f"match their receipts; every file in {folder} is sealed{untracked}"
    )
