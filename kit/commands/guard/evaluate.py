"""`kit guard evaluate`: validate a verifier on a labelled scores table."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np
import pandas as pd

from kit.commands.options import (
    EVAL_FORMATS,
    labelled_scores_options,
    table_stem,
)
from kit.errors import ConfigError, InputError, Location
from kit.schema import validate_frame


@click.command("evaluate")
@click.argument("scores", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--tau",
    type=float,
    default=0.5,
    show_default=True,
    help="Decision threshold: flag when score <= tau. 0.5 = 'more likely than not entailed' "
    "for a cross-encoder's P(entailment); pass the conformal tau of `kit guard tau` to "
    "validate a deployed operating point.",
)
@labelled_scores_options("evaluation", "guard-evaluate")
def evaluate_cmd(
    scores: Path,
    tau: float,
    label_map: str | None,
    group_column: str | None,
    type_column: str | None,
    n_boot: int,
    seed: int,
    out: str | None,
) -> None:
    """Validate a verifier on a labelled scores table: AUC, recall, specificity, kappa at tau.

    SCORES is the output of `kit guard score` (csv, parquet or jsonl with `score` and `label`;
    optional `group`). Labels are mapped to entailment (the positive class) / neutral /
    contradiction; unsupported = neutral + contradiction. Reports AUC entailment vs unsupported
    and vs each negative class (and each --type-column value) with 95% CIs -- DeLong, or a
    cluster bootstrap over groups --, recall on entailment (score > tau), specificity on each
    negative class (score <= tau), Cohen's kappa of the decision vs gold with a bootstrap CI,
    and the flag rate. An unknown label is an input error naming its row (exit 2). With
    --out, the .csv, .md and .tex are sealed in PREFIX.csv.receipt.json.

    \b
    Example:
      kit guard evaluate scores.csv --tau 0.5 --out reports/evaluation
      kit guard evaluate scifact.parquet --label-map "SUPPORT=entailment,NOINFO=neutral" --out reports/
    """
    from kit.guard.evaluation.evaluate import evaluate_scores
    from kit.guard.scoring.pairtable import (
        group_values,
        normalise_labels,
        parse_label_map,
        read_scores_table,
    )
    from kit.report.tables import render, write_table

    extra = parse_label_map(label_map)
    frame = read_scores_table(scores)
    if frame.attrs["n_missing"]:
        click.echo(
            f"left out {frame.attrs['n_missing']} pair(s) without a score (score_status "
            "refused: the instrument gave none)"
        )
    if frame.empty:
        raise InputError(
            "no_scores", "every pair lacks a score (refused)", where=Location(str(scores))
        )
    if "label" not in frame.columns:
        raise InputError(
            "missing_column",
            "no 'label' column: evaluation needs gold labels",
            where=Location(str(scores), column="label"),
        )
    classes = normalise_labels(frame["label"], extra).to_numpy(dtype=object)
    groups, gcol = group_values(frame, group_column)
    tcol = type_column or ("pair_type" if "pair_type" in frame.columns else None)
    if tcol is not None and tcol not in frame.columns:
        raise ConfigError("bad_parameter", f"--type-column {tcol!r} is not a column")
    types = frame[tcol].astype(str).to_numpy() if tcol else None
    rows = evaluate_scores(
        frame["score"].to_numpy(dtype=float),
        classes,
        tau,
        np.random.default_rng(seed),
        groups=groups,
        negative_types=types,
        n_boot=n_boot,
    )
    table = validate_frame(
        pd.DataFrame([r.to_dict() for r in rows]), "guard_pair_evaluation", str(out or scores)
    )
    counts = ", ".join(
        f"{(classes == k).sum()} {k}" for k in ("entailment", "neutral", "contradiction")
    )
    ci = (
        f"cluster bootstrap over {len(set(groups))} {gcol} values"
        if groups is not None
        else "pairs independent"
    )
    click.echo(f"evaluated {len(frame)} pairs ({counts}) at tau={tau:g}; CIs: {ci}")
    for r in rows:
        if r.metric in {"auc", "recall", "specificity", "kappa"} and np.isfinite(r.estimate):
            click.echo(f"  {r.metric} {r.subset}: {r.estimate:.3f} [{r.lo:.3f}, {r.hi:.3f}]")
        elif r.metric != "flag_rate":
            click.echo(f"  {r.metric} {r.subset}: {r.note}")
    if out is None:
        click.echo(render(table, "table"), nl=False)
        return
    stem = table_stem(out, "evaluation")
    written = write_table(table, stem, EVAL_FORMATS, caption=f"Verifier evaluation of {scores}")
    click.echo(f"-> {', '.join(str(p) for p in written)}")
