"""`kit board check`: placeholder."""

from __future__ import annotations

import click


@click.group()
def board() -> None:
    """Checks of the transcribed published board."""
