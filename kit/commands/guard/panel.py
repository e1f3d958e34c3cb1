"""`kit guard panel`: a panel of verifiers on one pair table, and how their flags agree."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np
import pandas as pd

from kit import atomic
from kit.commands.options import (
    EVAL_FORMATS,
    GUARD_FLOAT_FMT,
    LABEL_MAP_HELP,
    batch_size_option,
    device_option,
    variant_option,
)
from kit.commands.sealed import sealed_output
from kit.errors import ConfigError, InputError
from kit.report.tables import to_csv
from kit.schema import validate_frame


def _panel_names(specs: tuple[str, ...]) -> list[str]:
    """Short, unique, column-safe names: a built-in name or the card folder's name."""
    import re

    names: list[str] = []
    for spec in specs:
        base = re.sub(r"[^0-9A-Za-z_.\-]+", "_", Path(spec).name or spec) or "verifier"
        name, k = base, 2
        while name in names:
            name, k = f"{base}_{k}", k + 1
        names.append(name)
    return names


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
    from kit.guard.evaluation.evaluate import evaluate_scores, flag_rate, panel_agreement
    from kit.guard.scoring.pairtable import (
        group_values,
        normalise_labels,
        parse_label_map,
        read_pair_table,
    )
    from kit.guard.verifier import load_verifier
    from kit.report.tables import write_table

    if len(verifiers) < 2:
        raise ConfigError("bad_parameter", "a panel needs two or more --verifier")
    if len(taus) not in {1, len(verifiers)}:
        raise ConfigError(
            "bad_parameter",
            f"give one --tau for all verifiers or one per --verifier; got {len(taus)} for "
            f"{len(verifiers)}",
        )
    tau_list = list(taus) * len(verifiers) if len(taus) == 1 else list(taus)
    extra = parse_label_map(label_map)
    frame = read_pair_table(pairs)
    classes = (
        normalise_labels(frame["label"], extra).to_numpy(dtype=object)
        if "label" in frame.columns
        else None
    )
    groups, gcol = group_values(frame, group_column)
    names = _panel_names(verifiers)
    rng = np.random.default_rng(seed)
    keep = ["pair_id", *[c for c in ("label", "group") if c in frame.columns]]
    scores_table = frame[keep].reset_index(drop=True).copy()
    passed, per_verifier, scored = [], [], []
    for name, spec, tau in zip(names, verifiers, tau_list, strict=True):
        v = load_verifier(spec, variant, device, batch_size, progress=True)
        s = np.asarray(v.score(frame["claim"].tolist(), frame["passage"].tolist()), dtype=float)
        scores_table[f"score_{name}"] = s
        scores_table[f"flag_{name}"] = ~(s > tau)  # no score (refused): flagged, to review
        scored.append(s)
        click.echo(
            f"  {name}: {v.card.name} ({v.card.kind}, sha256 {v.card.identity_sha256[:12]}), tau={tau:g}"
        )
    # a pair any member gave no score (its endpoint refused) is compared by no one
    ok = np.isfinite(np.vstack(scored)).all(axis=0)
    if not ok.all():
        click.echo(
            f"  left out {int((~ok).sum())} pair(s) some member gave no score (refused by its "
            "endpoint): every statistic is over the pairs all members scored"
        )
        if not ok.any():
            raise InputError("no_scores", "no pair was scored by every panel member")
    g_ok = None if groups is None else groups[ok]
    for name, s, tau in zip(names, scored, tau_list, strict=True):
        passed.append(s[ok] > tau)
        if classes is not None:
            rows = evaluate_scores(s[ok], classes[ok], tau, rng, groups=g_ok, n_boot=n_boot)
        else:
            rows = [flag_rate(s[ok], tau, rng, groups=g_ok, n_boot=n_boot)]
        per_verifier += [{"verifier": name, **r.to_dict()} for r in rows]
    agree = panel_agreement(names, np.vstack(passed), rng, groups=g_ok, n_boot=n_boot)
    agreement = validate_frame(
        pd.DataFrame([a.to_dict() for a in agree]),
        "guard_pair_agreement",
        str(out / "agreement.csv"),
    )
    ver = validate_frame(
        pd.DataFrame(per_verifier), "guard_pair_evaluation", str(out / "verifiers.csv")
    )
    scores_table = validate_frame(scores_table, "guard_pair_panel_scores", str(out / "scores.csv"))
    # OUT is a staged folder (@sealed_output): swapped into place, sealed, when this returns
    write_table(agreement, out / "agreement", EVAL_FORMATS, caption=f"Verifier panel on {pairs}")
    write_table(ver, out / "verifiers", EVAL_FORMATS, caption=f"Verifiers on {pairs}")
    atomic.write_text(out / "scores.csv", to_csv(scores_table, GUARD_FLOAT_FMT))
    ci = f"cluster bootstrap over {gcol}" if groups is not None else "bootstrap over pairs"
    click.echo(f"panel of {len(names)} verifiers on {len(frame)} pairs (CIs: {ci}):")
    for a in agree:
        click.echo(
            f"  {a.verifier_a} vs {a.verifier_b}: positive-specific {a.positive_specific:.3f}, "
            f"negative-specific {a.negative_specific:.3f} [{a.negative_specific_lo:.3f}, "
            f"{a.negative_specific_hi:.3f}], kappa {a.kappa:.3f} [{a.kappa_lo:.3f}, "
            f"{a.kappa_hi:.3f}], AC1 {a.ac1:.3f}"
        )
    click.echo(f"-> {out}")
