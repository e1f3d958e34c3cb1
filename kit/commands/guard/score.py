"""`kit guard score`: score any pair table with a verifier, through the score store."""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.scoring_options import (
    engine_options,
    score_store_options,
    score_store_root,
    verifier_options,
)
from kit.commands.sealed import sealed_file
from kit.core.errors import ConfigError
from kit.core.schema import validate_frame


@click.command("score")
@click.argument("pairs", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Scores table; the format follows the extension: .csv, .parquet or .jsonl.",
)
@click.option(
    "--keep-types",
    default=None,
    help="Comma list of pair_type values to keep (needs a pair_type column, as in the tables "
    "of `kit guard pairs`; e.g. positive,random for an easy calibration set).",
)
@verifier_options
@score_store_options
@engine_options
@sealed_file("out", kind="guard-score")
def score_cmd(
    pairs: Path,
    out: Path,
    keep_types: str | None,
    verifier: str,
    variant: str,
    device: str,
    batch_size: int,
    cache_dir: Path,
    no_cache: bool,
    engine: str,
    ray_address: str | None,
    ray_workers: int | None,
    ray_connect_timeout: float | None,
) -> None:
    """Score any pair table with a verifier: one `score` per pair, keyed by pair_id.

    PAIRS is a csv, parquet or jsonl table with columns `claim` and `passage` (optional
    `pair_id`, generated as the record number 1, 2, ... when absent; `label`; `group`); other
    columns are carried through. Text is text: a '[10]' in a claim is not a citation marker.
    A cross-encoder also writes its class probabilities p_entailment, p_neutral,
    p_contradiction (named after the card's labels). Prints AUC per negative pair type when
    the table is labelled. A PubMedQA table from `kit guard pairs` scores as before, and the
    result is usable as --calibration for `kit guard tau` and `kit guard run`. Scores are read
    from and added to the shared score store (--cache-dir), as `kit audit` does. With
    --engine ray the store's misses are scored on a Ray cluster (docs/scale.md); the scores
    are the same bytes as with the default --engine local.

    \b
    Example:
      kit guard score data/guard/pairs.csv --verifier minilm-nli --out scores.csv
      kit guard score claims.jsonl --verifier path/to/card-folder --out scores.parquet
      kit guard score pairs.csv --engine ray --ray-address HEAD:6379 --out scores.csv
    """
    from kit.core.parallel import Engine
    from kit.guard.evaluation.panel import auc_lines
    from kit.guard.scoring.pairtable import (
        read_pair_table,
        score_pairs,
        table_format,
        with_score_status,
        write_pair_table,
    )
    from kit.guard.scoring.score_store import open_scorer
    from kit.guard.verifiers.load import load_verifier

    spec = Engine(engine, ray_address, ray_workers, ray_connect_timeout)
    table_format(out, "output table")
    frame = read_pair_table(pairs)
    if keep_types:
        if "pair_type" not in frame.columns:
            raise ConfigError(
                "bad_parameter", f"--keep-types needs a pair_type column, which {pairs} lacks"
            )
        keep = [t.strip() for t in keep_types.split(",") if t.strip()]
        frame = frame[frame["pair_type"].isin(keep)]
    if frame.empty:
        raise ConfigError("bad_parameter", f"no pairs left after --keep-types {keep_types!r}")
    v = load_verifier(verifier, variant, device, batch_size, progress=True)
    stored = open_scorer(v, score_store_root(cache_dir, no_cache), device, spec)
    with stored:  # Ray (--engine ray) starts at the first miss and stops here
        scored = with_score_status(score_pairs(stored, frame))
    stored.flush()
    scored = validate_frame(scored.reset_index(drop=True), "guard_pair_scores", str(out))
    write_pair_table(scored, out)
    refused = int((scored["score_status"] == "refused").sum())
    for line in auc_lines(scored[scored["score_status"] == "scored"]):
        click.echo(f"  {line}")
    probs = [c for c in scored.columns if c.startswith("p_")]
    extra = f" with {', '.join(probs)}" if probs else ""
    click.echo(
        f"scored {len(scored)} pairs with {v.card.name} ({variant}){extra}; score store "
        f"{stored.hits} hit(s), {stored.misses} scored -> {out}"
    )
    if refused:
        click.echo(
            f"  {refused} of {len(scored)} pair(s) without a score: the instrument refused them "
            "(score_status refused, score empty -- never a number; readers leave them out)"
        )
    usage = getattr(v, "usage_line", None)  # an instrument behind an endpoint says what it asked
    if usage is not None:
        click.echo(f"  {usage()}")
