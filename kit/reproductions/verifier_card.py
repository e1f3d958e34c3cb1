"""The default verifier's validation, as tables on the board (seed 001, Table 2 protocol).

Reads the cards that ``kit guard train`` wrote: the default's (``data/verifier-nli/card.json``,
one row per held-out group) and the leave-one-source-out cards of ``make reproduce-loso``
(``data/verifier-loso/SOURCE/card.json``, one row per left-out source and comparison). Nothing is
re-scored here, so the tables state exactly what the cards promise; the rows are built by
:mod:`kit.guard.evaluation.card_report`, which ``kit guard card`` prints too.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kit.core.schema import validate_frame
from kit.guard.evaluation.card_report import loso_table, read_loso_cards, validation_table
from kit.guard.verifiers.load import load_card


def verifier_validation(raw: Path, verifier_nli_dir: Path) -> dict[str, pd.DataFrame]:
    """The card's validation table (``raw`` is unused: the card names its data by sha256)."""
    return {"guard_verifier_validation": validation_table(load_card(verifier_nli_dir))}


def verifier_loso(
    raw: Path, verifier_nli_dir: Path, verifier_loso_dir: Path
) -> dict[str, pd.DataFrame]:
    """Leave-one-source-out validation of the default's recipe
    (:func:`kit.guard.evaluation.card_report.loso_table`): the cards in ``verifier_loso_dir`` checked
    against the default card in ``verifier_nli_dir``. ``raw`` is unused."""
    table = loso_table(load_card(verifier_nli_dir), read_loso_cards(verifier_loso_dir))
    return {"guard_verifier_loso": validate_frame(table, "guard_verifier_loso")}
