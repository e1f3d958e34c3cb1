"""`kit guard card`: what a verifier is, how it was trained and how it was validated.

Thin shell over :mod:`kit.guard.evaluation.card_report`: read the card (and the leave-one-source-out cards
beside it), build the tables, print.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pandas as pd

from kit.commands.options import format_option, verifier_loso_option
from kit.guard.verifiers.load import DEFAULT_VERIFIER, VERIFIER_HELP

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


def _render(frame: pd.DataFrame, fmt: str, title: str, console: list[str]) -> str:
    from kit.core.tables import render, to_console

    if fmt == "table":
        return to_console(frame[console], title=title)
    if fmt == "csv":
        return f"# {title}\n" + render(frame, fmt)
    if fmt == "markdown":
        return f"**{title}**\n\n" + render(frame, fmt)
    return render(frame, fmt, title=title)


CARD_SUMMARY = (
    "name",
    "kind",
    "scoring_rule",
    "onnx_sha256",
    "model",
    "base_url",
    "instrument_sha256",
)


@click.command("card")
@click.option("--verifier", default=DEFAULT_VERIFIER, show_default=True, help=VERIFIER_HELP)
@verifier_loso_option
@format_option
def card_cmd(verifier: str, verifier_loso: Path, fmt: str) -> None:
    """Show a verifier's card: what it is, how it was trained, how it was validated.

    Prints the card's summary (name, scoring rule, sha256s, speed), its validation on held-out
    pairs never trained on (AUC per group with CIs, against contradicted and neutral pairs,
    kappa, the bi-encoder on the same pairs) and, for a kit-trained card, the
    leave-one-source-out cards of its recipe (--verifier-loso): the same training without one
    biomedical source, scored on all of it, paired with the bi-encoder. Nothing is re-scored:
    these are the figures the cards recorded when they were trained, and -- for a card written
    by `kit guard validate` -- its validation on a human-labelled sample (agreement with the
    base rates beside it, self-consistency, cost; json: `human_validation`). --format csv,
    markdown, latex or json prints the full tables (json: one object with the card's summary).

    \b
    Example:
      kit guard card
      kit guard card --verifier data/verifier-lab --format markdown
    """
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
        summary = {k: card[k] for k in CARD_SUMMARY if k in card}
        tables = {"validation": validation, "loso": loso}
        out = {
            k: None if t is None else json.loads(t.to_json(orient="records"))
            for k, t in tables.items()
        }
        out["human_validation"] = card.get("validation")  # kit guard validate's block
        click.echo(json.dumps({"card": summary, **out}, indent=2))
        return
    if fmt == "table":
        from kit.guard.evaluation.card_report import card_lines
        from kit.guard.verifiers.build_record import read_build_record

        for line in card_lines(card, read_build_record(folder)):
            click.echo(line)
    chunks = [
        _render(frame, fmt, title, console)
        for frame, title, console in (
            (validation, VALIDATION_TITLE, CONSOLE_VALIDATION),
            (loso, LOSO_TITLE, CONSOLE_LOSO),
        )
        if frame is not None
    ]
    if chunks:
        click.echo(("\n" if fmt == "table" else "") + "\n".join(chunks), nl=False)
    if "validation" in card:  # kit guard validate: against a human-labelled sample
        from kit.guard.verifiers.validate_card import validation_lines

        click.echo("\n".join(validation_lines(card["validation"])))
    if validation is None and "adaptation" in extra:
        click.echo(
            "an adapted card: its validation is the cross-validated AUC on its adaptation "
            "sample ('validated on' above); its parent's held-out figures describe the parent. "
            "Measure it on labelled pairs held out of adaptation (`kit guard score` + `kit "
            "guard evaluate`)",
            err=True,
        )
    elif validation is None and "validation" not in card:
        click.echo(
            "this card carries no validation by the kit (a bi-encoder built from published "
            "weights, or an imported model): score held-out pairs of yours with `kit guard "
            "score` and `kit guard evaluate` before trusting it",
            err=True,
        )
    if loso_note:
        click.echo(loso_note, err=True)
