"""Reproductions built on the transcribed published board."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kit.certify.published_board import check_board
from kit.registry.loaders import published_board


def board_check(raw: Path) -> dict[str, pd.DataFrame]:
    """Every board row's composite against the mean of its printed axes (see ``kit board check``)."""
    return {"board_check": check_board(published_board(raw))}
