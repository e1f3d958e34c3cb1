"""Two verifiers' score tables on the same labelled pairs, compared paired (a library verb).

``kit guard compare`` is a thin shell over :func:`compare_tables` (step 5 of
docs/architecture.md): it reads both tables, matches B's rows to A's by ``pair_id``, leaves out
the pairs either verifier gave no score, checks that the two tables agree on every label and
compares the two AUCs per subset (:func:`kit.guard.evaluation.compare.compare_scores`: paired
DeLong, or a cluster bootstrap over --group-column).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.errors import ConfigError, InputError, Location
from kit.guard.evaluation.compare import Comparison


@dataclass(frozen=True)
class ComparedTables:
    """What :func:`compare_tables` measured: the table (schema guard_pair_comparison, not yet
    validated), its rows, the two names, the number of pairs compared and how the CIs were
    computed."""

    table: pd.DataFrame
    rows: tuple[Comparison, ...]
    name_a: str
    name_b: str
    n_pairs: int
    how: str


def aligned(a: pd.DataFrame, b: pd.DataFrame, path_a: Path, path_b: Path) -> pd.DataFrame:
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


def comparison_names(names: tuple[str, ...], scores_a: Path, scores_b: Path) -> tuple[str, str]:
    """The names of A and B: the two given (--name twice), else the file names; told apart."""
    if names and len(names) != 2:
        raise ConfigError("bad_parameter", f"give --name twice (A, then B); got {len(names)}")
    name_a, name_b = names or (scores_a.stem, scores_b.stem)
    if name_a == name_b:
        name_a, name_b = f"{name_a} (A)", f"{name_b} (B)"
    return name_a, name_b


def _checked_labels(
    frame_a: pd.DataFrame, frame_b: pd.DataFrame, extra: dict[str, str], scores_b: Path
) -> np.ndarray:
    """A's normalised labels, after checking B's (where it has them) agree pair by pair."""
    from kit.guard.scoring.pairtable import normalise_labels

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
    return classes


def compare_tables(
    scores_a: Path,
    scores_b: Path,
    names: tuple[str, ...] = (),
    *,
    label_map: str | None = None,
    group_column: str | None = None,
    type_column: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    say: Callable[[str], None] = lambda line: None,
) -> ComparedTables:
    """AUC_A - AUC_B per subset on the pairs both score tables hold (matched by pair_id).

    ``say`` gets the pairs left out (either verifier gave no score). Refuses (InputError)
    tables without labels in A, with different pairs, or with labels that disagree."""
    from kit.guard.evaluation.compare import compare_scores
    from kit.guard.scoring.pairtable import group_values, parse_label_map, read_scores_table

    name_a, name_b = comparison_names(names, scores_a, scores_b)
    extra = parse_label_map(label_map)
    frame_a = read_scores_table(scores_a, keep_missing=True)
    if "label" not in frame_a.columns:
        raise InputError(
            "missing_column",
            "no 'label' column: a comparison needs gold labels",
            where=Location(str(scores_a), column="label"),
        )
    frame_b = aligned(frame_a, read_scores_table(scores_b, keep_missing=True), scores_a, scores_b)
    both = (frame_a["score"].notna() & frame_b["score"].notna()).to_numpy()
    if not both.all():  # a pair either verifier gave no score (refused) is compared by neither
        say(
            f"left out {int((~both).sum())} pair(s) without a score in A or B (score_status "
            "refused: the instrument gave none)"
        )
        frame_a = frame_a[both]
        frame_b = frame_b[both].reset_index(drop=True)
    classes = _checked_labels(frame_a, frame_b, extra, scores_b)
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
    table = pd.DataFrame(
        [{"verifier_a": name_a, "verifier_b": name_b, **r.to_dict()} for r in rows]
    )
    how = (
        f"cluster bootstrap over {len(set(groups))} {gcol} values"
        if groups is not None
        else "paired DeLong, pairs independent"
    )
    return ComparedTables(table, tuple(rows), name_a, name_b, len(frame_a), how)
