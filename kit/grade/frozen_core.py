"""Frozen-core derivation and membership churn between decodes (pure).

Seed 002 (OpenBioRQ), Appendix A.3 / B ("Empirical difficulty"): a question is core exactly
when every roster model (GLM-5.1, Qwen3.6, DeepSeek-V4) fails its frozen checklist, score < 0.5
with full tool access; Appendix C.6 ("Reproducibility of the frozen core"): a second T=0 decode
changes membership (46.5% of boundary items flip), so the core is a single-decode snapshot, and
per-question reproducibility is summarised by mean |score delta| and fail-label agreement.

A task missing a score for any roster model cannot be classified and is counted, not guessed.
Churn between two decodes' cores A and B: Jaccard |A∩B| / |A∪B|, retention |A∩B| / |A|, and the
flip rate |A Δ B| / |A ∪ B| (the share of ever-core items whose membership changed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kit.core.errors import InputError, check_param


@dataclass(frozen=True)
class Core:
    members: tuple[str, ...]
    n_tasks: int
    n_incomplete: int
    roster: tuple[str, ...]
    threshold: float


def all_roster_fail(scores: pd.DataFrame, roster: Sequence[str], threshold: float = 0.5) -> Core:
    """Tasks every roster model fails (score < threshold); scores: task_id, model, score."""
    check_param("roster", list(roster), len(roster) >= 1, "at least one model", "all_roster_fail")
    missing = sorted(set(roster) - set(scores["model"]))
    if missing:
        raise InputError("missing_model", f"no scores for roster model(s) {', '.join(missing)}")
    sub = scores[scores["model"].isin(list(roster))]
    dup = sub.duplicated(["task_id", "model"])
    if dup.any():
        first = sub[dup].iloc[0]
        raise InputError(
            "duplicate_score",
            f"task {first['task_id']!r}, model {first['model']!r} scored more than once",
        )
    wide = sub.pivot(index="task_id", columns="model", values="score")
    wide = wide.reindex(columns=list(roster))
    complete = wide.notna().all(axis=1)
    fail = (wide[complete] < threshold).all(axis=1)
    members = tuple(sorted(str(t) for t in fail.index[fail.to_numpy()]))
    return Core(members, len(wide), int((~complete).sum()), tuple(roster), threshold)


@dataclass(frozen=True)
class Churn:
    n_a: int
    n_b: int
    n_both: int
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    jaccard: float
    retention: float
    flip_rate: float


def churn(a: Sequence[str], b: Sequence[str]) -> Churn:
    """Membership change between two cores (undefined ratios are NaN, never 0)."""
    sa, sb = set(a), set(b)
    union = sa | sb
    both = sa & sb
    nan = float("nan")
    return Churn(
        n_a=len(sa),
        n_b=len(sb),
        n_both=len(both),
        only_a=tuple(sorted(sa - sb)),
        only_b=tuple(sorted(sb - sa)),
        jaccard=len(both) / len(union) if union else nan,
        retention=len(both) / len(sa) if sa else nan,
        flip_rate=len(sa ^ sb) / len(union) if union else nan,
    )


def decode_agreement(
    first: pd.DataFrame, second: pd.DataFrame, threshold: float = 0.5
) -> pd.DataFrame:
    """Per model: pairs scored in both decodes, mean |score delta|, fail-label agreement."""
    m = first.merge(second, on=["task_id", "model"], suffixes=("_1", "_2"))
    rows = []
    for model, g in m.groupby("model", sort=True):
        d = np.abs(g["score_1"].to_numpy(float) - g["score_2"].to_numpy(float))
        f1 = g["score_1"].to_numpy(float) < threshold
        f2 = g["score_2"].to_numpy(float) < threshold
        rows.append(
            {
                "model": model,
                "n_pairs": len(g),
                "mean_abs_delta": float(d.mean()),
                "fail_agreement": float(np.mean(f1 == f2)),
            }
        )
    return pd.DataFrame(rows, columns=["model", "n_pairs", "mean_abs_delta", "fail_agreement"])


def core_summary(
    first: pd.DataFrame,
    roster: Sequence[str],
    threshold: float,
    second: Callable[[], pd.DataFrame] | None = None,
) -> dict[str, object]:
    """One row for `kit grade frozen-core`: the all-roster-fail core of ``first`` and, given
    ``second`` (reads the scores of a second decode, once the first core is drawn), its
    membership churn."""
    a = all_roster_fail(first, roster, threshold)
    row: dict[str, object] = {
        "roster": ",".join(roster),
        "threshold": threshold,
        "n_tasks": a.n_tasks,
        "n_incomplete": a.n_incomplete,
        "core_size": len(a.members),
    }
    if second is not None:
        b = all_roster_fail(second(), roster, threshold)
        c = churn(a.members, b.members)
        row.update(
            {
                "core_size_second": c.n_b,
                "both": c.n_both,
                "only_first": len(c.only_a),
                "only_second": len(c.only_b),
                "jaccard": c.jaccard,
                "retention": c.retention,
                "flip_rate": c.flip_rate,
            }
        )
    return row


def core_table(row: dict[str, object]) -> pd.DataFrame:
    """A :func:`core_summary` row as a one-row table (schemas/grade_frozen_core.yaml)."""
    return pd.DataFrame([row])
