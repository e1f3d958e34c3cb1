"""`kit guard evaluate`: validate a verifier on a labelled scores table."""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.evaluation_options import EVAL_FORMATS, labelled_scores_options, table_stem
from kit.core.schema import validate_frame


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
    from kit.core.tables import render, write_table
    from kit.guard.evaluation.table import evaluate_table

    ev = evaluate_table(
        scores,
        tau,
        label_map=label_map,
        group_column=group_column,
        type_column=type_column,
        n_boot=n_boot,
        seed=seed,
        say=click.echo,
    )
    table = validate_frame(ev.table, "guard_pair_evaluation", str(out or scores))
    for line in ev.lines:
        click.echo(line)
    if out is None:
        click.echo(render(table, "table"), nl=False)
        return
    stem = table_stem(out, "evaluation")
    written = write_table(table, stem, EVAL_FORMATS, caption=f"Verifier evaluation of {scores}")
    click.echo(f"-> {', '.join(str(p) for p in written)}")
