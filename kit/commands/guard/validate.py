"""`kit guard validate`: a verifier card validated on a human-labelled sample, written on the card.

Thin shell over :mod:`kit.guard.verifiers.validate_card` (reading, the two passes, the copy) and
:mod:`kit.guard.evaluation.validation` (the pure statistics). Exit status: 0 ok; 2 bad input, an
unreachable endpoint or a failed question (nothing written).
"""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.scoring_options import batch_size_option, device_option, variant_option
from kit.commands.sealed import sealed_output
from kit.guard.verifiers.load import DEFAULT_VERIFIER, VERIFIER_HELP

GOLD_HELP = (
    "The human-labelled sample: a pair table (csv, parquet or jsonl) with claim, passage and "
    "label (SUPPORT / supported / entailment = supported; NEI, unsupported, neutral, "
    "CONTRADICT ... = unsupported); optional group (cluster-bootstrap CIs)."
)


@click.command("validate")
@click.option("--verifier", default=DEFAULT_VERIFIER, show_default=True, help=VERIFIER_HELP)
@click.option(
    "--gold",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help=GOLD_HELP,
)
@click.option(
    "--tau",
    type=float,
    default=0.5,
    show_default=True,
    help="Decision threshold: supported iff score > tau (the guard flags score <= tau).",
)
@click.option("--label-map", default=None, help="Extra label names: SRC=DST,... (as evaluate).")
@click.option(
    "--group-column",
    default=None,
    help="Cluster column for cluster-bootstrap CIs [default: `group` when present].",
)
@click.option(
    "--n-boot",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="Bootstrap resamples of every agreement CI.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@variant_option
@device_option
@batch_size_option
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="New card folder: the verifier's card with its validation (weights hard-linked or "
    "copied; sealed).",
)
@sealed_output("out", kind="guard-validate")
def validate_cmd(
    verifier: str,
    gold: Path,
    tau: float,
    label_map: str | None,
    group_column: str | None,
    n_boot: int,
    seed: int,
    variant: str,
    device: str,
    batch_size: int,
    out: Path,
) -> None:
    """Validate a verifier card on a human-labelled sample before trusting it; write it on the card.

    The sample's pairs are scored twice, each time by a fresh verifier with the score store
    bypassed. Against the people's labels: the base rates (share supported under the people and
    under the verifier at --tau), observed agreement, Cohen's kappa, Gwet's AC1, positive- and
    negative-specific agreement, each with a percentile-bootstrap CI (over --group-column
    clusters when given), and seed 001 Table 2's recall on supported (the safety axis),
    specificity, kappa and AUC. Self-consistency: the share of decisions that flip on the second
    pass (0 by construction for an ONNX model: measured, not assumed). Cost: seconds per item
    and, for a model behind an API, requests, retries and tokens from the API's usage field.
    Pairs the endpoint refused are counted, never scored. OUT is a copy of the card folder with
    the card's `validation` block (schemas/json/instrument_validation.schema.json) and
    validated_on saying what was found; its identity sha256, and so its score-store entries,
    are the card's own. `kit guard card --verifier OUT` shows it.

    \b
    Example:
      kit guard validate --verifier data/verifier-qwen --gold labelled.csv --out data/verifier-qwen-validated
      kit guard validate --verifier minilm-nli --gold scifact_dev.csv --tau 0.5 --out data/nli-validated
    """
    from kit.core.schema import validate_json
    from kit.guard.evaluation.validation import VALIDATION_SCHEMA
    from kit.guard.scoring.pairtable import parse_label_map
    from kit.guard.verifiers.load import resolve_verifier
    from kit.guard.verifiers.validate_card import (
        validate_verifier,
        validation_lines,
        write_validated_card,
    )

    folder = resolve_verifier(verifier)
    card, entry = validate_verifier(
        folder,
        gold,
        tau,
        parse_label_map(label_map),
        group_column,
        n_boot,
        seed,
        variant=variant,
        device=device,
        batch_size=batch_size,
    )
    validate_json(entry, VALIDATION_SCHEMA, str(out / "card.json"))
    if card.get("kind") == "llm":
        from kit.guard.verifiers.llm.verifier import check_llm_card

        check_llm_card(card, str(out / "card.json"))  # schema, prompt and instrument sha256s
    write_validated_card(folder, out, card)
    for line in validation_lines(entry):
        click.echo(line)
