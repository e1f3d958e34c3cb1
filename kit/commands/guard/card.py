"""`kit guard card`: what a verifier is, how it was trained and how it was validated.

Thin shell over :func:`kit.guard.evaluation.card_show.show_card`: read the card (and the
leave-one-source-out cards beside it), build the tables, print.
"""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.options import format_option, verifier_loso_option
from kit.guard.verifiers.load import DEFAULT_VERIFIER, VERIFIER_HELP


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
    from kit.guard.evaluation.card_show import show_card

    shown = show_card(verifier, verifier_loso, fmt)
    if shown.text:
        click.echo(shown.text, nl=False)
    for note in shown.notes:
        click.echo(note, err=True)
