"""`kit guard compare`: two verifiers' scores on the same labelled pairs, compared paired.

Registered on the ``guard`` group in :mod:`kit.commands.guard` (the package's ``__init__``).
"""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.evaluation_options import EVAL_FORMATS, labelled_scores_options, table_stem
from kit.core.schema import validate_frame


@click.command("compare")
@click.argument("scores_a", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("scores_b", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--name",
    "names",
    multiple=True,
    help="Names of verifier A and B in the table (give both, in order) [the file names].",
)
@labelled_scores_options("comparison", "guard-compare")
def compare_cmd(
    scores_a: Path,
    scores_b: Path,
    names: tuple[str, ...],
    label_map: str | None,
    group_column: str | None,
    type_column: str | None,
    n_boot: int,
    seed: int,
    out: str | None,
) -> None:
    """Is verifier A better than verifier B on these pairs? AUC_A - AUC_B, paired.

    SCORES_A and SCORES_B are outputs of `kit guard score` on the same pair table (matched by
    pair_id; labels are read from SCORES_A, and SCORES_B's must agree where it has them). Per
    subset -- entailment vs unsupported, vs each negative class, vs each --type-column value --
    it reports both AUCs, their difference A - B with a 95% CI and the two-sided p-value of
    "same AUC": the paired DeLong test when pairs are independent, a cluster bootstrap of the
    difference over --group-column otherwise. Pairing matters: both verifiers judged the same
    pairs, so their errors are correlated, and two separate CIs that overlap can still hide a
    clear difference (or the reverse). With --out, the .csv, .md and .tex are sealed in
    PREFIX.csv.receipt.json.

    \b
    Example:
      kit guard score test.csv --verifier adapted/ --out adapted.csv
      kit guard score test.csv --out default.csv
      kit guard compare adapted.csv default.csv --name adapted --name default --out compare/
    """
    from kit.core.tables import render, write_table
    from kit.guard.evaluation.compare import row_line
    from kit.guard.evaluation.compare_tables import compare_tables

    r = compare_tables(
        scores_a,
        scores_b,
        names,
        label_map=label_map,
        group_column=group_column,
        type_column=type_column,
        n_boot=n_boot,
        seed=seed,
        say=click.echo,
    )
    table = validate_frame(r.table, "guard_pair_comparison", str(out or scores_a))
    name_a, name_b = r.name_a, r.name_b
    click.echo(f"{name_a} (A) vs {name_b} (B) on {r.n_pairs} pairs; CIs: {r.how}")
    for row in r.rows:
        click.echo(f"  {row_line(row.to_dict())}")
    if out is None:
        click.echo(render(table, "table"), nl=False)
        return
    stem = table_stem(out, "comparison")
    written = write_table(
        table, stem, EVAL_FORMATS, caption=f"{name_a} vs {name_b}: paired AUC difference"
    )
    click.echo(f"-> {', '.join(str(p) for p in written)}")
