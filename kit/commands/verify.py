"""`kit verify board|receipts`: prove the release is what it claims to be."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pandas as pd

from kit import atomic
from kit.release import receipts
from kit.release import reproduce as rep
from kit.report.tables import render


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
)
@click.option(
    "--expected",
    type=click.Path(file_okay=False, path_type=Path),
    default=rep.EXPECTED_DIR,
    show_default=True,
)
@click.option("--skip-slow", is_flag=True, help="Skip reproductions declared slow.")
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the summary as JSON (DVC metrics).",
)
def board_cmd(
    names: tuple[str, ...], tables: Path, expected: Path, skip_slow: bool, json_out: Path | None
) -> None:
    """Compare every reproduced table with its frozen copy, cell by cell, within the declared
    per-column tolerance. Prints cells compared, cells differing and max |delta|; exit 1 naming
    each differing cell.

    Example: kit verify board --tables data/tables
    """
    decls = rep.select(rep.load_declarations(), names, skip_slow=skip_slow)
    results = rep.verify(decls, tables, expected)
    diffs = [d for r in results for d in r.diffs]
    compared = sum(r.cells_compared for r in results)
    max_delta = max((r.max_abs_delta for r in results), default=0.0)
    if diffs:
        frame = pd.DataFrame(
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
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path), default=rep.DEFAULT_OUT)
def receipts_cmd(folder: Path) -> None:
    """Walk the receipt chain in FOLDER; exit 2 naming the first broken link.

    Every table listed in a receipt must also still hash to the sha256 it recorded.

    Example: kit verify receipts data/tables
    """
    chain = receipts.verify_chain(folder)
    n_files = 0
    for art in chain:
        for tname, sha in sorted(art["body"].get("tables", {}).items()):
            path = folder / f"{tname}.csv"
            got = receipts.file_sha256(path) if path.is_file() else "(missing)"
            if got != sha:
                from kit.errors import IntegrityError

                raise IntegrityError(
                    "output_changed",
                    f"{path}: sha256 {got[:12]}… differs from receipt '{art['name']}' ({sha[:12]}…)",
                )
            n_files += 1
    click.echo(
        f"receipts: {len(chain)} verified, chain intact; {n_files} table files match their receipts"
    )
