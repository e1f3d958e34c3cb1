"""card.json on disk: every card checked against ``schemas/json/verifier_card.schema.json``.

:func:`check_card` is the contract of a card (any kind: bi-encoder, cross-encoder, llm,
llm-judge), run when a card is loaded (:func:`kit.guard.verifiers.load.load_card`) and by
:func:`write_card` before the file is written, so no card that breaks it is ever written. A card
that breaks it is an :class:`~kit.core.errors.InputError` (exit status 2) naming the file, each
field's path and what was expected. docs/architecture.md, "Citation guard".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kit.guard.verifiers.layout import CARD_NAME

CARD_SCHEMA = "verifier_card"  # schemas/json/verifier_card.schema.json


def card_text(card: Mapping[str, Any]) -> str:
    """The exact text of a card.json (sorted keys, two-space indent, one final newline)."""
    return json.dumps(card, indent=2, sort_keys=True) + "\n"


def check_card(card: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """``card`` validated against the card schema; ``where`` (the card.json path) names it in
    the error."""
    from kit.core.schema import validate_json

    return validate_json(card, CARD_SCHEMA, where)  # type: ignore[no-any-return]


def write_card(folder: Path, card: Mapping[str, Any], where: Path | None = None) -> None:
    """Check ``card``, then write it as ``folder/card.json``; ``where``: the path the error
    names when ``folder`` is a staging folder (default: ``folder/card.json``)."""
    path = Path(folder) / CARD_NAME
    check_card(card, str(where or path))
    path.write_text(card_text(card))
