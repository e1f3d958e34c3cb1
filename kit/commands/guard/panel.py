"""`kit guard panel`: a panel of verifiers on one pair table, and how their flags agree."""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.evaluation_options import EVAL_FORMATS, GUARD_FLOAT_FMT, LABEL_MAP_HELP
from kit.commands.scoring_options import batch_size_option, device_option, variant_option
from kit.commands.sealed import sealed_output
from kit.core import atomic
from kit.core.schema import validate_frame
from kit.core.tables import to_csv


@click.command("panel")
@click.argument("pairs", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--verifier",
    "verifiers",
    multiple=True,
    required=True,
    help="A panel member (repeat, two or more): a built-in name or a card folder.",
)
@click.option(
    "--tau",
    "taus",
    type=float,
    multiple=True,
    required=True,
    help="Flag threshold per --verifier, in the same order (or one for all): flag when "
    "score <= tau.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for agreement.*, verifiers.* and scores.csv (sealed, replaced as a set).",
)
@click.option("--label-map", default=None, help=LABEL_MAP_HELP)
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
    help="Bootstrap resamples of every CI.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@variant_option
@device_option
@batch_size_option
@sealed_output("out", kind="guard-panel")
def panel_cmd(
    pairs: Path,
    verifiers: tuple[str, ...],
    taus: tuple[float, ...],
    out: Path,
    label_map: str | None,
    group_column: str | None,
    n_boot: int,
    seed: int,
    variant: str,
    device: str,
    batch_size: int,
) -> None:
    """Score one pair table with a panel of verifiers and report how their flags agree.

    PAIRS is a pair table as for `kit guard score` (claim, passage; label and group when
    present). Each verifier flags a pair when its score <= its tau. For every pair of verifiers:
    observed agreement, positive-specific agreement (on what is supported), negative-specific
    agreement (on what to flag) with a bootstrap CI, Cohen's kappa with a bootstrap CI and
    Gwet's AC1 (seed 001 Table S3). Per verifier: flag rate, and AUC / recall / specificity /
    kappa when the table has labels. Writes OUT/agreement.{csv,md,tex},
    OUT/verifiers.{csv,md,tex} and OUT/scores.csv (score_<name>, flag_<name> per pair).

    \b
    Example:
      kit guard panel pairs.csv --verifier minilm-nli --verifier minilm-bi --tau 0.5 --tau 0.7 --out panel/
    """

    from kit.core.tables import write_table
    from kit.guard.evaluation.panel import agreement_line, panel
    from kit.guard.scoring.pairtable import read_pair_table
    from kit.guard.verifiers.load import load_verifier

    def load(spec: str) -> object:
        return load_verifier(spec, variant, device, batch_size, progress=True)

    r = panel(
        read_pair_table(pairs),
        verifiers,
        taus,
        load,
        label_map=label_map,
        group_column=group_column,
        n_boot=n_boot,
        seed=seed,
        say=click.echo,
    )
    agreement = validate_frame(r.agreement, "guard_pair_agreement", str(out / "agreement.csv"))
    ver = validate_frame(r.verifiers, "guard_pair_evaluation", str(out / "verifiers.csv"))
    scores_table = validate_frame(r.scores, "guard_pair_panel_scores", str(out / "scores.csv"))
    # OUT is a staged folder (@sealed_output): swapped into place, sealed, when this returns
    write_table(agreement, out / "agreement", EVAL_FORMATS, caption=f"Verifier panel on {pairs}")
    write_table(ver, out / "verifiers", EVAL_FORMATS, caption=f"Verifiers on {pairs}")
    atomic.write_text(out / "scores.csv", to_csv(scores_table, GUARD_FLOAT_FMT))
    click.echo(f"panel of {len(r.names)} verifiers on {r.n_pairs} pairs (CIs: {r.ci}):")
    for a in r.agree:
        click.echo(agreement_line(a))
    click.echo(f"-> {out}")
