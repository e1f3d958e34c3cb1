"""What ``kit guard card`` shows of a verifier card, as text (a library verb).

``kit guard card`` is a thin shell over :func:`show_card` (step 5 of docs/architecture.md): it
reads the card (and the leave-one-source-out cards beside it,
:mod:`kit.guard.evaluation.card_report`), builds the tables and renders them in the asked
format, with the notes on what the card does not carry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

VALIDATION_TITLE = (
    "held-out validation: AUC supported vs unsupported [DeLong 95% CI], vs contradicted, vs "
    "neutral; the bi-encoder on the same pairs"
)
LOSO_TITLE = (
    "leave-one-source-out: this recipe trained without SOURCE, scored on every pair of it, "
    "paired with the bi-encoder (difference = recipe - bi-encoder, cluster bootstrap by claim)"
)
CONSOLE_VALIDATION = [
    "group", "n", "auc_unsupported", "auc_lo", "auc_hi", "auc_contradiction", "auc_neutral",
    "bi_encoder_auc_unsupported", "bi_encoder_auc_contradiction", "kappa", "trained_on_source",
]  # fmt: skip
CONSOLE_LOSO = [
    "left_out", "subset", "n_pos", "n_neg", "auc_recipe", "auc_bi_encoder", "difference", "lo",
    "hi", "p_value", "same_recipe_as_default",
]  # fmt: skip
CARD_SUMMARY = (
    "name",
    "kind",
    "scoring_rule",
    "onnx_sha256",
    "model",
    "base_url",
    "instrument_sha256",
)
ADAPTED_NOTE = (
    "an adapted card: its validation is the cross-validated AUC on its adaptation "
    "sample ('validated on' above); its parent's held-out figures describe the parent. "
    "Measure it on labelled pairs held out of adaptation (`kit guard score` + `kit "
    "guard evaluate`)"
)
UNVALIDATED_NOTE = (
    "this card carries no validation by the kit (a bi-encoder built from published "
    "weights, or an imported model): score held-out pairs of yours with `kit guard "
    "score` and `kit guard evaluate` before trusting it"
)


@dataclass(frozen=True)
class ShownCard:
    """The card as ``kit guard card`` prints it: ``text`` for stdout (complete, with its
    newlines) and ``notes`` for stderr (one line each)."""

    text: str
    notes: tuple[str, ...]


def render_table(frame: pd.DataFrame, fmt: str, title: str, console: list[str]) -> str:
    """One of the card's tables in ``fmt`` (the console table shows the ``console`` columns)."""
    from kit.core.tables import render, to_console

    if fmt == "table":
        return to_console(frame[console], title=title)
    if fmt == "csv":
        return f"# {title}\n" + render(frame, fmt)
    if fmt == "markdown":
        return f"**{title}**\n\n" + render(frame, fmt)
    return render(frame, fmt, title=title)


def _json_text(card: dict, validation: pd.DataFrame | None, loso: pd.DataFrame | None) -> str:
    summary = {k: card[k] for k in CARD_SUMMARY if k in card}
    tables = {"validation": validation, "loso": loso}
    out = {
        k: None if t is None else json.loads(t.to_json(orient="records")) for k, t in tables.items()
    }
    out["human_validation"] = card.get("validation")  # kit guard validate's block
    return json.dumps({"card": summary, **out}, indent=2) + "\n"


def show_card(verifier: str, verifier_loso: Path, fmt: str) -> ShownCard:
    """The card of ``verifier`` (a built-in name or a card folder): its summary (``fmt`` table),
    its held-out validation and, for a kit-trained card, the leave-one-source-out cards of its
    recipe in ``verifier_loso``, in ``fmt`` (table, csv, markdown, latex or json)."""
    from kit.guard.evaluation.card_report import (
        LOSO_HINT,
        loso_table,
        read_loso_cards,
        validation_table,
    )
    from kit.guard.verifiers.load import load_card, resolve_verifier

    folder = resolve_verifier(verifier)
    card = load_card(folder)
    extra = card.get("extra", {})
    validation = validation_table(card) if "validation" in extra else None
    loso, loso_note = None, ""
    training = extra.get("training")
    if training is not None and not training.get("leave_out"):
        if any(Path(verifier_loso).glob("*/card.json")):
            loso = loso_table(card, read_loso_cards(verifier_loso))
        else:
            loso_note = f"no leave-one-source-out cards in {verifier_loso}: {LOSO_HINT}"
    if fmt == "json":
        return ShownCard(_json_text(card, validation, loso), ())
    text = ""
    if fmt == "table":
        from kit.guard.evaluation.card_report import card_lines
        from kit.guard.verifiers.build_record import read_build_record

        text += "".join(line + "\n" for line in card_lines(card, read_build_record(folder)))
    chunks = [
        render_table(frame, fmt, title, console)
        for frame, title, console in (
            (validation, VALIDATION_TITLE, CONSOLE_VALIDATION),
            (loso, LOSO_TITLE, CONSOLE_LOSO),
        )
        if frame is not None
    ]
    if chunks:
        text += ("\n" if fmt == "table" else "") + "\n".join(chunks)
    if "validation" in card:  # kit guard validate: against a human-labelled sample
        from kit.guard.verifiers.validate_card import validation_lines

        text += "\n".join(validation_lines(card["validation"])) + "\n"
    notes = []
    if validation is None and "adaptation" in extra:
        notes.append(ADAPTED_NOTE)
    elif validation is None and "validation" not in card:
        notes.append(UNVALIDATED_NOTE)
    if loso_note:
        notes.append(loso_note)
    return ShownCard(text, tuple(notes))
