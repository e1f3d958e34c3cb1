"""Judge swap: two judges' verdicts on the same runs -> agreement, and how the leaderboard moves.

Seed 002, Appendix C.4 ("Leaderboard robustness to the checklist judge"): the same (model,
question) pairs re-graded by an independent judge; Cohen's kappa between the two judges' solve
labels (0.65 there) and each model's solve-rate shift (at most 4.1 points there), with the
ordering of the frontier models compared. docs/architecture.md, "Instruments and gold", *swapped*.

Agreement (one row per level, over the items both judges graded):

* ``criterion_met`` -- per criterion, positive = verdict met (partial and not_met negative);
* ``criterion_credit`` -- per criterion, positive = met or partial (credit > 0);
* ``solved`` -- per (model, task), positive = solved (checklist score >= threshold).

Each row: the two base rates (share positive under each judge), observed agreement, Cohen's
kappa, Gwet's AC1, positive- and negative-specific agreement (all from
:mod:`kit.stats.agreement`), each with a percentile-bootstrap CI: over answers (the (model,
task) clusters, :func:`kit.stats.bootstrap.cluster_bootstrap_ci`) for the criterion levels,
since an answer's criteria are judged together; over (model, task) pairs for ``solved``
(assumption: those independent). A statistic undefined on the data (e.g. kappa with both judges
constant) is NaN with a note, never 0.

Per system (model): solve rate under each judge over the tasks both graded, the difference
(B - A) with a paired percentile-bootstrap CI over the system's tasks, rank under each (1 =
highest solve rate; ties share the best rank) and the rank move (rank under B - rank under A;
positive = moved down).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from kit.core.errors import InputError, Location, check_param
from kit.grade.checklist import Checklist, score_verdicts
from kit.stats.agreement import agreement_row
from kit.stats.bootstrap import bootstrap_ci

LEVELS = ("criterion_met", "criterion_credit", "solved")
ANSWER = ["model", "task_id"]


@dataclass(frozen=True)
class JudgeSwap:
    """The two tables of a judge swap and the pairs only one judge graded."""

    agreement: pd.DataFrame
    systems: pd.DataFrame
    judge_a: str
    judge_b: str
    only_a: int  # (model, task) pairs graded by A only
    only_b: int

    @property
    def largest_shift(self) -> float:
        """The largest |solve-rate difference| (B - A) over the systems."""
        return float(np.abs(self.systems["difference"]).max())

    @property
    def n_rank_moved(self) -> int:
        """How many systems changed rank between the two judges."""
        return int((self.systems["rank_move"] != 0).sum())


def judge_name(verdicts: pd.DataFrame, which: str) -> str:
    """The one judge of a verdict table (a table of several judges is refused)."""
    names = sorted(set(verdicts["judge"]))
    if len(names) != 1:
        raise InputError(
            "several_judges",
            f"verdict table {which} holds {len(names)} judges ({', '.join(names[:5])}); a judge "
            "swap compares one judge per table",
            where=Location(which, column="judge"),
        )
    return names[0]


def _rate_difference(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(b) - np.mean(a))


def system_moves(
    solved: pd.DataFrame, rng: np.random.Generator, n_boot: int = 2000, level: float = 0.95
) -> pd.DataFrame:
    """Per model: solve rate under A and B, the difference B - A with a paired percentile
    bootstrap CI over the model's tasks (both judges' labels of a task resampled together),
    ranks and rank move.

    ``solved``: one row per (model, task_id) with boolean columns solved_a, solved_b."""
    g = solved.groupby("model", sort=True)
    out = pd.DataFrame(
        {
            "model": list(g.groups),
            "n_tasks": g.size().to_numpy(np.int64),
            "solved_a": g["solved_a"].sum().to_numpy(np.int64),
            "solved_b": g["solved_b"].sum().to_numpy(np.int64),
        }
    )
    out["solve_rate_a"] = out["solved_a"] / out["n_tasks"]
    out["solve_rate_b"] = out["solved_b"] / out["n_tasks"]
    out["difference"] = out["solve_rate_b"] - out["solve_rate_a"]
    bounds = []
    for _, grp in g:
        xa, xb = grp["solved_a"].to_numpy(float), grp["solved_b"].to_numpy(float)
        ci = bootstrap_ci((xa, xb), _rate_difference, rng, n_boot, level)
        bounds.append((ci.lo, ci.hi))
    out["difference_lo"] = [lo for lo, _ in bounds]
    out["difference_hi"] = [hi for _, hi in bounds]
    out["rank_a"] = rankdata(-out["solve_rate_a"].to_numpy(), method="min").astype(np.int64)
    out["rank_b"] = rankdata(-out["solve_rate_b"].to_numpy(), method="min").astype(np.int64)
    out["rank_move"] = out["rank_b"] - out["rank_a"]
    return out


def judge_swap(
    checklists: Mapping[str, Checklist],
    verdicts_a: pd.DataFrame,
    verdicts_b: pd.DataFrame,
    rng: np.random.Generator | int,
    threshold: float = 0.5,
    n_boot: int = 2000,
    level: float = 0.95,
    names: tuple[str, str] = ("A", "B"),
) -> JudgeSwap:
    """Agreement of two judges' verdicts and each system's move (module docstring).

    Only (model, task) pairs both judges graded count; how many each graded alone is returned.
    ``names`` say where each table came from (in errors); two tables of one judge name are
    told apart as "NAME (A)" and "NAME (B)". ``rng``: a generator or its seed."""
    rng = np.random.default_rng(rng)  # a seed, or the generator itself (unchanged)
    check_param("n_boot", n_boot, n_boot >= 1, "an integer >= 1", "judge_swap")
    ja, jb = judge_name(verdicts_a, names[0]), judge_name(verdicts_b, names[1])
    if ja == jb:
        ja, jb = f"{ja} (A)", f"{jb} (B)"
    sa = score_verdicts(checklists, verdicts_a, threshold)
    sb = score_verdicts(checklists, verdicts_b, threshold)
    both = sa.merge(sb, on=ANSWER, suffixes=("_a", "_b")).sort_values(ANSWER)
    if len(both) < 2:
        raise InputError(
            "too_few_pairs",
            f"the two verdict tables share {len(both)} graded (model, task) pair(s); a judge "
            "swap needs at least 2",
        )
    keys_a = set(map(tuple, sa[ANSWER].to_numpy()))
    keys_b = set(map(tuple, sb[ANSWER].to_numpy()))
    crit = (
        verdicts_a[[*ANSWER, "criterion_id", "verdict"]]
        .merge(
            verdicts_b[[*ANSWER, "criterion_id", "verdict"]],
            on=[*ANSWER, "criterion_id"],
            suffixes=("_a", "_b"),
        )
        .sort_values([*ANSWER, "criterion_id"])
    )
    clusters = (crit["model"] + "\x1f" + crit["task_id"]).to_numpy()
    va, vb = crit["verdict_a"].to_numpy(), crit["verdict_b"].to_numpy()
    rows = [
        agreement_row("criterion_met", va == "met", vb == "met", clusters, rng, n_boot, level),
        agreement_row(
            "criterion_credit", va != "not_met", vb != "not_met", clusters, rng, n_boot, level
        ),
        agreement_row(
            "solved",
            both["solved_a"].to_numpy(bool),
            both["solved_b"].to_numpy(bool),
            None,
            rng,
            n_boot,
            level,
        ),
    ]
    agreement = pd.DataFrame(rows)
    agreement.insert(1, "judge_a", ja)
    agreement.insert(2, "judge_b", jb)
    systems = system_moves(both[[*ANSWER, "solved_a", "solved_b"]], rng, n_boot, level)
    systems.insert(1, "judge_a", ja)
    systems.insert(2, "judge_b", jb)
    return JudgeSwap(agreement, systems, ja, jb, len(keys_a - keys_b), len(keys_b - keys_a))
