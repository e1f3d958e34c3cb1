"""``kit guard evaluate`` as a library verb: a labelled scores table in, the evaluation rows out.

:func:`evaluate_table` maps the labels, takes the groups and negative types, and runs
:func:`kit.guard.evaluation.evaluate.evaluate_scores`; the command prints the lines and writes
the table. docs/architecture.md, "Citation guard", "Validation before trust".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.errors import ConfigError, InputError, Location
from kit.guard.evaluation.evaluate import Estimate, evaluate_scores
from kit.guard.scoring.pairtable import (
    group_values,
    normalise_labels,
    parse_label_map,
    read_scores_table,
)


@dataclass(frozen=True)
class Evaluation:
    """The rows (guard_pair_evaluation, not yet validated) and the lines the command prints."""

    rows: tuple[Estimate, ...]
    table: pd.DataFrame
    lines: tuple[str, ...]


def evaluate_table(
    scores: Path,
    tau: float,
    *,
    label_map: str | None = None,
    group_column: str | None = None,
    type_column: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    say: Callable[[str], None] = lambda line: None,
) -> Evaluation:
    """Read SCORES (csv, parquet or jsonl with ``score`` and ``label``) and evaluate it at tau.

    ``say`` gets the pairs left out (no score: refused) before anything is computed.
    """
    extra = parse_label_map(label_map)
    frame = read_scores_table(scores)
    if frame.attrs["n_missing"]:
        say(
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
    counts = ", ".join(
        f"{(classes == k).sum()} {k}" for k in ("entailment", "neutral", "contradiction")
    )
    ci = (
        f"cluster bootstrap over {len(set(groups))} {gcol} values"
        if groups is not None
        else "pairs independent"
    )
    lines = [f"evaluated {len(frame)} pairs ({counts}) at tau={tau:g}; CIs: {ci}"]
    for r in rows:
        if r.metric in {"auc", "recall", "specificity", "kappa"} and np.isfinite(r.estimate):
            lines.append(f"  {r.metric} {r.subset}: {r.estimate:.3f} [{r.lo:.3f}, {r.hi:.3f}]")
        elif r.metric != "flag_rate":
            lines.append(f"  {r.metric} {r.subset}: {r.note}")
    table = pd.DataFrame([r.to_dict() for r in rows])
    return Evaluation(tuple(rows), table, tuple(lines))
