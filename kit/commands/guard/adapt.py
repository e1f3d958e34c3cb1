"""`kit guard adapt`: a verifier adapted to a lab's own labelled pairs.

Thin shell over :mod:`kit.guard.training.adapt`; the card folder is staged, sealed and swapped in
as a set (:func:`kit.commands.sealed.sealed_output`).
"""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.sealed import sealed_output
from kit.guard.evaluation.card_report import card_lines
from kit.guard.verifiers.load import DEFAULT_VERIFIER, VERIFIER_HELP


def print_card(card: dict, build: dict | None = None) -> None:
    """The card's summary; the folder itself is named by @sealed_output's last line."""
    for line in card_lines(card, build):
        click.echo(line)


@click.command("adapt")
@click.argument("labelled", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--verifier",
    default=DEFAULT_VERIFIER,
    show_default=True,
    help=VERIFIER_HELP + " A cross-encoder; fine-tuning needs a kit-trained one (it has "
    "weights.safetensors), --method recombine takes any, an imported one included.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="New card folder.",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Passes over the labelled sample.",
)
@click.option(
    "--lr",
    type=float,
    default=None,
    help="AdamW learning rate [1e-4: chosen on three registry sources, README].",
)
@click.option(
    "--folds",
    type=click.IntRange(min=2),
    default=5,
    show_default=True,
    help="Folds of the before/after cross-validated AUC, at most (fewer where a held-out "
    "fold would lack a label).",
)
@click.option(
    "--label-map",
    default=None,
    help="Extra label names: SRC=DST,... (DST entailment / neutral / contradiction).",
)
@click.option(
    "--method",
    type=click.Choice(["fine-tune", "recombine", "best"]),
    default="fine-tune",
    show_default=True,
    help="fine-tune: the cross-encoder's weights on the sample (minutes, needs torch); "
    "recombine: the parent's weights kept, P(entailment), P(contradiction) and relatedness "
    "(those the card has) recombined by a rule fitted on the sample (seconds; no torch; works "
    "for an imported verifier too); best: both, keep the one "
    "that cross-validates better. Measured on three held-out registry splits, fine-tuning "
    "beat recombining on every one (README).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seeds the folds, head and data order."
)
@click.option(
    "--device",
    type=click.Choice(["cpu", "cuda"]),
    default="cpu",
    show_default=True,
    help="torch device for training.",
)
@sealed_output("out", kind="guard-adapt", legacy="card.json", apart=("build.json",))
def adapt_cmd(
    labelled: Path,
    verifier: str,
    out: Path,
    epochs: int,
    lr: float | None,
    folds: int,
    label_map: str | None,
    method: str,
    seed: int,
    device: str,
) -> None:
    """Adapt a verifier to a lab's domain on its own 100-500 labelled pairs.

    LABELLED is a csv / parquet / jsonl with claim, passage, label (SUPPORT / CONTRADICT / NEI
    or entailment / neutral / contradiction). By default fine-tunes the cross-encoder's
    weights (minutes on CPU; needs the train extra's torch) and keeps the scoring rule that
    cross-validates best; --method recombine keeps the weights and recombines the parent's
    signals -- P(entailment), P(contradiction), relatedness -- by a logistic rule fitted on
    the sample (seconds); --method best runs both. Prints the AUC on the sample before (the
    parent never saw it) and after (k-fold cross-validated: each fold scored by a model fitted
    on the others; pairs sharing a claim, passage or group stay in one fold; AUCs read within
    folds, never over the fold models' pooled scores), adapted - parent on the same held-out
    folds with a 95% CI and its verdict (improved / no_evidence / worse), and what each fold
    model saw; writes a new card (parent card sha256, sample sha256, method, rule, estimate,
    verdict, time). Calibrate the guarantee afterwards on labelled pairs DISJOINT from this
    sample.

    \b
    Example:
      kit guard adapt labelled.csv --verifier minilm-nli --out data/verifier-lab
      kit guard adapt labelled.csv --method recombine --out data/verifier-lab
    """
    from kit.guard.scoring.pairtable import parse_label_map
    from kit.guard.training.adapt import ADAPT_LR, adapt_verifier
    from kit.guard.training.adapt_card import adaptation_lines

    card = adapt_verifier(
        labelled,
        verifier,
        out,
        epochs=epochs,
        lr=ADAPT_LR if lr is None else lr,
        folds=folds,
        seed=seed,
        label_map=parse_label_map(label_map),
        device=device,
        method=method,
    )
    a = card["extra"]["adaptation"]
    for line in adaptation_lines(a):
        click.echo(line)
    if a["verdict"] != "improved":
        click.echo(
            f"warning: the cross-validated AUC gives no evidence that adaptation helps on this "
            f"sample (verdict {a['verdict']}; the card records improved: false). Measure both "
            "cards on labelled pairs held out of adaptation (`kit guard score` + `kit guard "
            "compare`) before choosing",
            err=True,
        )
    print_card(card)
