"""`kit guard compare`: two verifiers' scores on the same labelled pairs, compared paired.

Registered on the ``guard`` group in :mod:`kit.commands.guard` (the package's ``__init__``).
"""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np
import pandas as pd

from kit.commands.evaluation_options import EVAL_FORMATS, labelled_scores_options, table_stem
from kit.core.errors import ConfigError, InputError, Location
from kit.core.schema import validate_frame


def _aligned(a: pd.DataFrame, b: pd.DataFrame, path_a: Path, path_b: Path) -> pd.DataFrame:
    """B's rows in A's order, matched by ``pair_id``; both tables must hold the same pairs."""
    ids_a, ids_b = set(a["pair_id"]), set(b["pair_id"])
    missing = [p for p in a["pair_id"] if p not in ids_b]
    extra = [p for p in b["pair_id"] if p not in ids_a]
    if missing or extra:
        side, ids, where = ("B", missing, path_b) if missing else ("A", extra, path_a)
        raise InputError(
            "unmatched_pairs",
            f"the two score tables must hold the same pairs; {len(ids)} pair_id(s) missing "
            f"from {side} ({where}), first {ids[0]!r}",
            where=Location(str(where), column="pair_id"),
        )
    return b.set_index("pair_id").loc[a["pair_id"]].reset_index()


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
    from kit.guard.evaluation.compare import compare_scores, row_line
    from kit.guard.scoring.pairtable import (
        group_values,
        normalise_labels,
        parse_label_map,
        read_scores_table,
    )

    if names and len(names) != 2:
        raise ConfigError("bad_parameter", f"give --name twice (A, then B); got {len(names)}")
    name_a, name_b = names or (scores_a.stem, scores_b.stem)
    if name_a == name_b:
        name_a, name_b = f"{name_a} (A)", f"{name_b} (B)"
    extra = parse_label_map(label_map)
    frame_a = read_scores_table(scores_a, keep_missing=True)
    if "label" not in frame_a.columns:
        raise InputError(
            "missing_column",
            "no 'label' column: a comparison needs gold labels",
            where=Location(str(scores_a), column="label"),
        )
    frame_b = _aligned(frame_a, read_scores_table(scores_b, keep_missing=True), scores_a, scores_b)
    both = (frame_a["score"].notna() & frame_b["score"].notna()).to_numpy()
    if not both.all():  # a pair either verifier gave no score (refused) is compared by neither
        click.echo(
            f"left out {int((~both).sum())} pair(s) without a score in A or B (score_status "
            "refused: the instrument gave none)"
        )
        frame_a = frame_a[both]
        frame_b = frame_b[both].reset_index(drop=True)
    classes = normalise_labels(frame_a["label"], extra).to_numpy(dtype=object)
    if "label" in frame_b.columns:
        labels_b = normalise_labels(frame_b["label"], extra).to_numpy(dtype=object)
        differ = np.flatnonzero(labels_b != classes)
        if differ.size:
            pid = frame_a["pair_id"].iloc[int(differ[0])]
            raise InputError(
                "label_mismatch",
                f"{differ.size} pair(s) carry different labels in the two tables; first "
                f"pair_id {pid!r}: {classes[differ[0]]} in A, {labels_b[differ[0]]} in B",
                where=Location(str(scores_b), column="label"),
            )
    groups, gcol = group_values(frame_a, group_column)
    tcol = type_column or ("pair_type" if "pair_type" in frame_a.columns else None)
    if tcol is not None and tcol not in frame_a.columns:
        raise ConfigError("bad_parameter", f"--type-column {tcol!r} is not a column")
    rows = compare_scores(
        frame_a["score"].to_numpy(dtype=float),
        frame_b["score"].to_numpy(dtype=float),
        classes,
        np.random.default_rng(seed),
        groups=groups,
        negative_types=frame_a[tcol].astype(str).to_numpy() if tcol else None,
        n_boot=n_boot,
    )
    table = validate_frame(
        pd.DataFrame([{"verifier_a": name_a, "verifier_b": name_b, **r.to_dict()} for r in rows]),
        "guard_pair_comparison",
        str(out or scores_a),
    )
    how = (
        f"cluster bootstrap over {len(set(groups))} {gcol} values"
        if groups is not None
        else "paired DeLong, pairs independent"
    )
    click.echo(f"{name_a} (A) vs {name_b} (B) on {len(frame_a)} pairs; CIs: {how}")
    for r in rows:
        click.echo(f"  {row_line(r.to_dict())}")
    if out is None:
        click.echo(render(table, "table"), nl=False)
        return
    stem = table_stem(out, "comparison")
    written = write_table(
        table, stem, EVAL_FORMATS, caption=f"{name_a} vs {name_b}: paired AUC difference"
    )
    click.echo(f"-> {', '.join(str(p) for p in written)}")
