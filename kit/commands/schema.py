"""`kit schema list|validate|show`: the table contracts, usable on any file."""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.options import format_option
from kit.core.schema import load_schema, read_table, schema_names, schema_path
from kit.core.tables import frame_of, render


@click.group()
def schema() -> None:
    """Table schemas (pandera, schemas/*.yaml): list them, show one, validate a file."""


@schema.command("list")
@format_option
def list_cmd(fmt: str) -> None:
    """List every table schema with its columns.

    Example: kit schema list
    """
    rows = []
    for name in schema_names():
        s = load_schema(name)
        rows.append(
            {
                "schema": name,
                "columns": " ".join(s.columns),
                "key": " ".join(s.unique or []),
            }
        )
    click.echo(render(frame_of(rows), fmt), nl=False)


@schema.command("show")
@click.argument("name")
def show_cmd(name: str) -> None:
    """Print the YAML of the schema NAME (as `kit schema list` names it).

    Example: kit schema show scores
    """
    load_schema(name)
    click.echo(schema_path(name).read_text(), nl=False)


@schema.command("validate")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--schema", "name", required=True, help="Schema name (see `kit schema list`).")
def validate_cmd(path: Path, name: str) -> None:
    """Validate the CSV or Parquet file PATH against a schema; exit 2 listing every problem
    (file, row, column, check).

    Example: kit schema validate my_scores.csv --schema scores
    """
    frame = read_table(path, name)
    click.echo(f"{path}: {len(frame)} rows valid against schema '{name}'")
