"""Options shared by several command groups, declared once."""

from __future__ import annotations

from pathlib import Path

import click

from kit.registry.fetch import DEFAULT_DEST
from kit.report.tables import FORMATS

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Output format on stdout.",
)

raw_option = click.option(
    "--raw",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_DEST,
    show_default=True,
    help="The fetched registry folder (kit registry fetch).",
)
