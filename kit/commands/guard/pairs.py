"""`kit guard pairs`: construction-labelled claim-passage pairs from PubMedQA PQA-L."""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.evaluation_options import GUARD_FLOAT_FMT, json_dump
from kit.commands.options import raw_option
from kit.commands.sealed import sealed_file
from kit.core import atomic
from kit.core.schema import validate_frame
from kit.core.tables import to_csv


@click.command("pairs")
@click.option(
    "--n",
    "n_items",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="PubMedQA PQA-L items to sample (each gives one positive and four negatives).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the item sample.")
@click.option(
    "--exclude",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="An earlier pair table from this command: its items (item_pmid) and their abstracts "
    "are left out, so the two samples are disjoint (e.g. adapt on one, calibrate on the other).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The pair table CSV to write (with FILE.meta.json; sealed in FILE.receipt.json).",
)
@raw_option
@sealed_file("out", kind="guard-pairs", companions=(".meta.json",))
def pairs_cmd(n_items: int, seed: int, exclude: Path | None, out: Path, raw: Path) -> None:
    """Construction-labelled claim-passage pairs from PubMedQA PQA-L (not human gold).

    For N sampled items: positive (conclusion, own abstract) and negatives random / mesh
    (shares MeSH terms) / bm25 (lexically nearest other abstract) / negated (negated
    conclusion, own abstract). The construction rule is written to OUT's .meta.json.

    \b
    Example:
      kit guard pairs --n 300 --seed 0 --out data/guard/pairs.csv
      kit guard pairs --n 100 --seed 1 --exclude data/guard/pairs.csv --out cal.csv
    """
    from kit.guard.training.pair_sample import sample_pairs

    sample = sample_pairs(raw, n_items, seed, exclude)
    frame = validate_frame(sample.frame, "guard_pairs", str(out))
    atomic.write_text(out, to_csv(frame, GUARD_FLOAT_FMT))
    atomic.write_text(out.with_suffix(".meta.json"), json_dump(sample.meta))
    click.echo(f"pairs: {len(frame)} rows from {n_items} items (seed {seed}) -> {out}")
