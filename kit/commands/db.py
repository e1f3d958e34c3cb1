"""`kit db build` and `kit query`: placeholder until the catalog lands."""

from __future__ import annotations

import click


@click.group()
def db() -> None:
    """The DuckDB catalog of every registered dataset."""


@click.command()
@click.argument("sql")
def query(sql: str) -> None:
    """Run read-only SQL against the catalog."""
