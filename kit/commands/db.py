"""`kit db build|tables` and `kit query`: the DuckDB catalog of every registered dataset."""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.options import PathDefault, deprecated_alias, format_option, raw_option
from kit.core.progress import say
from kit.core.tables import render
from kit.registry.catalog import DEFAULT_DB, build_catalog, list_tables, run_query

_catalog_option = click.option(
    "--catalog",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DB,
    show_default=True,
    cls=PathDefault,
    help="The DuckDB catalog file (built by `kit db build`; `make reproduce` builds it too).",
)
_db_alias = deprecated_alias("--db", "--catalog", "db_path")


@click.group()
def db() -> None:
    """The DuckDB catalog: one normalised table per registered dataset."""


@db.command("build")
@raw_option
@_catalog_option
@_db_alias
def build_cmd(raw: Path, db_path: Path) -> None:
    """Build the catalog from data/raw (every file's sha256 is checked first).

    Example: kit db build && kit query "SELECT count(*) FROM pubmedqa_items"
    """

    def progress(name: str, n: int) -> None:
        say(f"  {name:<24} {n:>7} rows")

    counts = build_catalog(raw, db_path, on_table=progress)
    click.echo(f"wrote {db_path}: {len(counts)} tables, {sum(counts.values())} rows")


@db.command("tables")
@_catalog_option
@_db_alias
@format_option
def tables_cmd(db_path: Path, fmt: str) -> None:
    """List the catalog's tables with row and column counts.

    Example: kit db tables --format markdown
    """
    click.echo(render(list_tables(db_path), fmt), nl=False)


@click.command()
@click.argument("sql")
@_catalog_option
@_db_alias
@format_option
def query(sql: str, db_path: Path, fmt: str) -> None:
    """Run read-only SQL against the catalog and print the result.

    \b
    Examples:
      kit query "SELECT count(*) FROM pubmedqa_items"
      kit query "SELECT final_decision, count(*) n FROM pubmedqa_items GROUP BY 1" --format csv
    """
    click.echo(render(run_query(sql, db_path), fmt), nl=False)
