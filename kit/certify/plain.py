"""Plain score tables for ``kit certify``: ``task_id, system, score`` (+ ``cluster``) -> the long
table of the engine (pure; docs/certify.md "Plain score tables").

A lab's own results are often one score per (task, system). Such a table (schema
``schemas/scores_plain.yaml``) is laid out as the long table of ``schemas/scores.yaml`` without
its entry metadata:

* ``readout`` is ``score`` unless the table has a ``readout`` column;
* an empty score is a failed run (``failed = true``), dropped from every pair it is in and
  counted, as in the full format;
* the cluster is the ``cluster`` column (or the column ``--cluster-column`` names); a table
  without one makes **each task its own cluster** (said in the notes, which ``kit certify``
  prints) and is refused when the design declares ``clusters:``.

Without entry metadata admissibility cannot be tested: the engine refuses the table unless the
design says ``admissibility: assumed`` (:func:`kit.certify.engine.check_metadata`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kit.certify.engine import META
from kit.core.errors import InputError, Location

DEFAULT_READOUT = "score"
PLAIN_SCHEMA = "scores_plain"
FULL_SCHEMA = "scores"
# A column that only the full format has: a table with any of them is read as the full format
# (and its missing columns are named), never silently as a plain one.
FULL_ONLY = ("failed", *META)


def score_format(columns: Sequence[str]) -> str:
    """``"full"`` (schemas/scores.yaml) when the table has any column only the full format has,
    else ``"plain"`` (schemas/scores_plain.yaml)."""
    return "full" if any(c in FULL_ONLY for c in columns) else "plain"


def use_cluster_column(
    frame: pd.DataFrame, cluster_column: str | None, source: str
) -> pd.DataFrame:
    """``frame`` with the column ``cluster_column`` (``--cluster-column``) renamed ``cluster``.

    Raises :class:`InputError` naming the file and column when the table lacks that column, or
    when it also has a column named ``cluster`` (two cluster columns: which one is meant?).
    """
    if cluster_column is None or cluster_column == "cluster":
        return frame
    if cluster_column not in frame.columns:
        raise InputError(
            "missing_column",
            f"--cluster-column {cluster_column!r} names no column of the table (columns: "
            f"{', '.join(map(str, frame.columns))})",
            where=Location(source, column=cluster_column),
        )
    if "cluster" in frame.columns:
        raise InputError(
            "two_cluster_columns",
            f"the table has a 'cluster' column and --cluster-column names {cluster_column!r}: "
            "drop one of them",
            where=Location(source, column="cluster"),
        )
    return frame.rename(columns={cluster_column: "cluster"})


@dataclass(frozen=True)
class PlainScores:
    """A plain table laid out as the engine's long table, and what was done to it, in words."""

    frame: pd.DataFrame  # task_id, cluster, system, readout, score, failed
    notes: tuple[str, ...]
    each_task_own_cluster: bool


def plain_to_long(
    frame: pd.DataFrame,
    source: str = "<scores>",
    declared_clusters: Sequence[str] | None = None,
    row_base: int = 2,
) -> PlainScores:
    """Lay out a plain table already validated against ``scores_plain`` (types, [0, 1] range).

    Raises :class:`InputError` naming the file, row and column for a second row of the same
    (task_id, system[, readout]), and naming the file for a table without a cluster column when
    the design declares ``clusters:`` (``declared_clusters``): a declared cluster list means the
    tasks have clusters, and each task is never silently made its own.
    """
    frame = frame.reset_index(drop=True)
    has_readout = "readout" in frame.columns
    key = ["task_id", "system", *(["readout"] if has_readout else [])]
    again = frame.duplicated(key, keep="first").to_numpy()
    if again.any():
        i = int(np.flatnonzero(again)[0])
        values = tuple(str(frame.loc[i, k]) for k in key)
        first = frame[(frame[key] == frame.loc[i, key]).all(axis=1)].index[0]
        raise InputError(
            "duplicate_row",
            f"a second row for ({', '.join(key)}) = ({', '.join(map(repr, values))}); the first "
            f"is row {int(first) + row_base} ({int(again.sum())} duplicate row(s) in all): a "
            "plain table holds one score per task and system"
            + (" and readout" if has_readout else ""),
            where=Location(source, i + row_base, "system"),
        )
    notes: list[str] = []
    score = frame["score"].to_numpy(dtype=float, na_value=np.nan)
    failed = ~np.isfinite(score)
    own = "cluster" not in frame.columns
    if own:
        if declared_clusters is not None:
            raise InputError(
                "no_cluster_column",
                "the table has no 'cluster' column but the design declares clusters: add the "
                "column, or name the column holding the cluster with --cluster-column",
                where=Location(source, column="cluster"),
            )
        cluster = frame["task_id"].astype(str)
        notes.append(
            f"no cluster column: each task is its own cluster (K = {cluster.nunique()} tasks; "
            "give a 'cluster' column or --cluster-column when tasks share a source)"
        )
    else:
        cluster = frame["cluster"].astype(str)
    readout = frame["readout"].astype(str) if has_readout else DEFAULT_READOUT
    if not has_readout:
        notes.append(f"no readout column: every score is readout '{DEFAULT_READOUT}'")
    notes.append(f"{int(failed.sum())} empty score(s) read as failed runs")
    long = pd.DataFrame(
        {
            "task_id": frame["task_id"].astype(str),
            "cluster": cluster,
            "system": frame["system"].astype(str),
            "readout": readout,
            "score": score,
            "failed": failed,
        }
    )
    return PlainScores(long, tuple(notes), own)
