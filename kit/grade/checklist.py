"""Frozen per-question checklists and checklist scoring (pure).

Seed 002 (OpenBioRQ), Section "Checklist-based grading" and Appendix B (Definitions): each
question has 5-8 binary-checkable criteria of four kinds -- must_mention, must_acknowledge,
must_ground, must_avoid -- with importance weights 1, 2 or 3. A judge gives each criterion a
verdict met / partial / not_met, worth 1 / 0.5 / 0. must_avoid criteria invert polarity: their
verdict records whether the prohibited content is *present*, so their credit is 1 - v. The
checklist score is the weighted mean of the credits, S = sum_i w_i c_i / sum_i w_i, and a
question is solved iff S >= threshold (the paper's 0.5; a declared parameter here).

"Frozen" means the criteria are fixed before any answer is graded: the checklist's identity is
``frozen_sha256`` = sha256 of its canonical JSON (sorted keys, no whitespace, UTF-8) without the
hash field itself. A checklist file that carries a hash which does not match is an
IntegrityError.

Inter-judge agreement (Section "Checklist-based grading": Spearman 0.35 -> 0.82 with frozen
checklists; Appendix C.4: Cohen's kappa 0.65 on solve labels): Spearman's rho on per-question
scores and Cohen's kappa on the solved labels, over the (model, task) pairs both judges graded.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from kit.core.errors import InputError, IntegrityError, Location, check_param
from kit.stats.agreement import cohens_kappa
from kit.stats.wilson import wilson_ci

KINDS = ("must_mention", "must_acknowledge", "must_ground", "must_avoid")
VERDICTS = {"met": 1.0, "partial": 0.5, "not_met": 0.0}
DEFAULT_THRESHOLD = 0.5
MIN_CRITERIA, MAX_CRITERIA = 5, 8


@dataclass(frozen=True)
class Criterion:
    id: str
    kind: str
    text: str
    weight: int
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Checklist:
    task_id: str
    question: str
    criteria: tuple[Criterion, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "question": self.question,
            "criteria": [
                {
                    "id": c.id,
                    "kind": c.kind,
                    "text": c.text,
                    "weight": c.weight,
                    "terms": list(c.terms),
                }
                for c in self.criteria
            ],
        }

    @property
    def frozen_sha256(self) -> str:
        return hashlib.sha256(canonical_json(self.to_dict()).encode("utf-8")).hexdigest()

    def to_record(self) -> dict[str, Any]:
        """The record as written to a checklists file: the checklist plus its frozen hash."""
        return {**self.to_dict(), "frozen_sha256": self.frozen_sha256}


def canonical_json(obj: Any) -> str:
    """Canonical JSON: sorted keys, no whitespace, non-ASCII kept (hashed as UTF-8)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def checklist_from_dict(
    obj: Any, source: str = "<checklists>", line: int | None = None
) -> Checklist:
    """Validate one checklist record (``schemas/json/checklist.schema.json`` plus the rules
    JSON Schema cannot state: unique criterion ids, a matching frozen hash)."""
    from kit.core.schema import validate_json

    where = f"{source}:{line}" if line is not None else source
    validate_json(obj, "checklist", where)
    crits = tuple(
        Criterion(c["id"], c["kind"], c["text"], int(c["weight"]), tuple(c.get("terms", ())))
        for c in obj["criteria"]
    )
    ids = [c.id for c in crits]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise InputError(
            "duplicate_criterion",
            f"task {obj['task_id']!r}: criterion id(s) {', '.join(dup)} used more than once",
            where=Location(source, line, "criteria"),
        )
    cl = Checklist(obj["task_id"], obj.get("question", ""), crits)
    pinned = obj.get("frozen_sha256")
    if pinned is not None and pinned != cl.frozen_sha256:
        raise IntegrityError(
            "checklist_hash_mismatch",
            f"{where}: task {cl.task_id!r}: frozen_sha256 {pinned} does not match the "
            f"checklist's canonical JSON ({cl.frozen_sha256}); the checklist was edited after "
            "freezing",
        )
    return cl


def credit(kind: str, verdict: str) -> float:
    """A criterion's credit: v for the three positive kinds, 1 - v for must_avoid (polarity)."""
    v = VERDICTS[verdict]
    return 1.0 - v if kind == "must_avoid" else v


def checklist_score(checklist: Checklist, verdicts: Mapping[str, str]) -> float:
    """S = sum_i w_i c_i / sum_i w_i over every criterion; a missing verdict is an error."""
    missing = [c.id for c in checklist.criteria if c.id not in verdicts]
    if missing:
        raise InputError(
            "missing_verdict",
            f"task {checklist.task_id!r}: no verdict for criterion(s) {', '.join(missing)}",
            where=Location(column="criterion_id"),
        )
    extra = sorted(set(verdicts) - {c.id for c in checklist.criteria})
    if extra:
        raise InputError(
            "unknown_criterion",
            f"task {checklist.task_id!r}: verdict(s) for unknown criterion(s) {', '.join(extra)}",
            where=Location(column="criterion_id"),
        )
    num = sum(c.weight * credit(c.kind, verdicts[c.id]) for c in checklist.criteria)
    den = sum(c.weight for c in checklist.criteria)
    return num / den


def is_solved(score: float, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """Solved iff S >= threshold (Appendix B: 'checklist scores of at least 0.5 count as solves')."""
    return score >= threshold


def score_verdicts(
    checklists: Mapping[str, Checklist],
    verdicts: pd.DataFrame,
    threshold: float = DEFAULT_THRESHOLD,
) -> pd.DataFrame:
    """Per (judge, model, task) scores from a validated verdict table (``grade_verdicts``).

    Returns columns judge, model, task_id, n_criteria, score, solved, checklist_sha256, sorted.
    A task without a checklist or a checklist with missing verdicts is an InputError.
    """
    check_param("threshold", threshold, 0.0 <= threshold <= 1.0, "in [0, 1]", "score_verdicts")
    rows = []
    for (judge, model, task), grp in verdicts.groupby(["judge", "model", "task_id"], sort=True):
        if task not in checklists:
            raise InputError(
                "unknown_task",
                f"verdicts for task {task!r} (judge {judge!r}, model {model!r}) but no checklist",
                where=Location(column="task_id"),
            )
        cl = checklists[task]
        vmap = dict(zip(grp["criterion_id"], grp["verdict"], strict=True))
        try:
            s = checklist_score(cl, vmap)
        except InputError as err:
            raise InputError(
                err.reason, f"judge {judge!r}, model {model!r}: {err.message}", where=err.where
            ) from None
        rows.append(
            {
                "judge": judge,
                "model": model,
                "task_id": task,
                "n_criteria": len(cl.criteria),
                "score": s,
                "solved": is_solved(s, threshold),
                "checklist_sha256": cl.frozen_sha256,
            }
        )
    cols = ["judge", "model", "task_id", "n_criteria", "score", "solved", "checklist_sha256"]
    return pd.DataFrame(rows, columns=cols)


def solve_rates(scores: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Solve rate per (judge, model) with a Wilson interval (items independent)."""
    rows = []
    for (judge, model), grp in scores.groupby(["judge", "model"], sort=True):
        ci = wilson_ci(int(grp["solved"].sum()), len(grp), level)
        rows.append(
            {
                "judge": judge,
                "model": model,
                "n": ci.n,
                "solved": ci.k,
                "solve_rate": ci.estimate,
                "ci_lo": ci.lo,
                "ci_hi": ci.hi,
                "mean_score": float(grp["score"].mean()),
            }
        )
    return pd.DataFrame(
        rows,
        columns=["judge", "model", "n", "solved", "solve_rate", "ci_lo", "ci_hi", "mean_score"],
    )


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho: Pearson correlation of mid-ranks (ties get the average rank).

    NaN when either side is constant (rho undefined) -- reported, never a silent 0.
    """
    a = rankdata(np.asarray(x, dtype=float))
    b = rankdata(np.asarray(y, dtype=float))
    check_param(
        "x", len(a), len(a) == len(b) and len(a) >= 2, "two aligned arrays, n >= 2", "spearman"
    )
    a = a - a.mean()
    b = b - b.mean()
    den = math.sqrt(float(np.sum(a * a) * np.sum(b * b)))
    return float("nan") if den == 0 else float(np.sum(a * b) / den)


def judge_agreement(scores: pd.DataFrame, judge_a: str, judge_b: str) -> dict[str, Any]:
    """Spearman on scores and Cohen's kappa on solve labels over the pairs both judges graded."""
    a = scores[scores["judge"] == judge_a].set_index(["model", "task_id"])
    b = scores[scores["judge"] == judge_b].set_index(["model", "task_id"])
    common = a.index.intersection(b.index).sort_values()
    if len(common) < 2:
        raise InputError(
            "too_few_pairs",
            f"judges {judge_a!r} and {judge_b!r} share {len(common)} graded (model, task) "
            "pair(s); agreement needs at least 2",
        )
    sa, sb = a.loc[common], b.loc[common]
    la, lb = sa["solved"].to_numpy(bool), sb["solved"].to_numpy(bool)
    return {
        "judge_a": judge_a,
        "judge_b": judge_b,
        "n_pairs": len(common),
        "spearman": spearman(sa["score"].to_numpy(float), sb["score"].to_numpy(float)),
        "kappa_solved": cohens_kappa(la, lb),
        "agreement_solved": float(np.mean(la == lb)),
        "only_a": len(a.index.difference(b.index)),
        "only_b": len(b.index.difference(a.index)),
    }


def judge_agreement_table(scores: pd.DataFrame, judge_a: str, judge_b: str) -> pd.DataFrame:
    """:func:`judge_agreement` as a one-row table (schemas/grade_agreement.yaml)."""
    return pd.DataFrame([judge_agreement(scores, judge_a, judge_b)])
