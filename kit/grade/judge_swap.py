"""Judge swap: two judges' verdicts on the same runs -> agreement, and how the leaderboard moves.

Seed 002, Appendix C.4 ("Leaderboard robustness to the checklist judge"): the same (model,
question) pairs re-graded by an independent judge; Cohen's kappa between the two judges' solve
labels (0.65 there) and each model's solve-rate shift (at most 4.1 points there), with the
ordering of the frontier models compared. DESIGN.md "Instruments and gold", *swapped*.

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

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from kit.errors import ConfigError, InputError, Location, check_param
from kit.grade.checklist import Checklist, score_verdicts
from kit.stats.agreement import cohens_kappa, gwet_ac1, specific_agreement
from kit.stats.bootstrap import bootstrap_ci, cluster_bootstrap_ci

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


def _psa(x: np.ndarray, y: np.ndarray) -> float:
    return specific_agreement(x, y)[0]


def _nsa(x: np.ndarray, y: np.ndarray) -> float:
    return specific_agreement(x, y)[1]


STATISTICS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "kappa": cohens_kappa,
    "ac1": gwet_ac1,
    "positive_specific": _psa,
    "negative_specific": _nsa,
}


def _safe(stat: Callable[[np.ndarray, np.ndarray], float], x: np.ndarray, y: np.ndarray) -> float:
    """The statistic, NaN where its formula divides by zero (a constant rater, AC1's p_e = 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            return float(stat(x, y))
        except ZeroDivisionError:
            return float("nan")


def agreement_row(
    level: str,
    x: np.ndarray,
    y: np.ndarray,
    clusters: np.ndarray | None,
    rng: np.random.Generator,
    n_boot: int,
    level_ci: float,
) -> dict[str, object]:
    """One agreement row: base rates, observed agreement and each statistic with its CI."""
    x, y = np.asarray(x, dtype=bool), np.asarray(y, dtype=bool)
    row: dict[str, object] = {
        "level": level,
        "n": int(x.size),
        "n_clusters": int(x.size if clusters is None else np.unique(clusters).size),
        "rate_a": float(x.mean()),
        "rate_b": float(y.mean()),
        "observed": float(np.mean(x == y)),
    }
    notes = []
    for name, stat in STATISTICS.items():
        est = _safe(stat, x, y)
        lo = hi = float("nan")
        if np.isnan(est):
            notes.append(f"{name} undefined")
        else:
            safe = lambda p, q, s=stat: _safe(s, p, q)  # noqa: E731
            try:
                if clusters is None:
                    ci = bootstrap_ci((x, y), safe, rng, n_boot, level_ci)
                else:
                    ci = cluster_bootstrap_ci((x, y), clusters, safe, rng, n_boot, level_ci)
                lo, hi = ci.lo, ci.hi
                if ci.n_undefined:
                    notes.append(f"{name}: {ci.n_undefined} of {n_boot} resamples undefined")
            except ConfigError:
                notes.append(f"{name} CI undefined")
        row[name], row[f"{name}_lo"], row[f"{name}_hi"] = est, lo, hi
    row["ci_method"] = "bootstrap" if clusters is None else "cluster-bootstrap (answers)"
    row["note"] = "; ".join(notes)
    return row


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
    rng: np.random.Generator,
    threshold: float = 0.5,
    n_boot: int = 2000,
    level: float = 0.95,
    names: tuple[str, str] = ("A", "B"),
) -> JudgeSwap:
    """Agreement of two judges' verdicts and each system's move (module docstring).

    Only (model, task) pairs both judges graded count; how many each graded alone is returned.
    ``names`` say where each table came from (in errors); two tables of one judge name are
    told apart as "NAME (A)" and "NAME (B)"."""
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
