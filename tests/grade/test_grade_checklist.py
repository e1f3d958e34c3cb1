"""Checklist scoring rules, the frozen hash, and agreement statistics vs independent code."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa
from statsmodels.stats.proportion import proportion_confint

from kit.core.errors import InputError, IntegrityError
from kit.grade.checklist import (
    Checklist,
    Criterion,
    checklist_from_dict,
    checklist_score,
    credit,
    is_solved,
    judge_agreement,
    score_verdicts,
    solve_rates,
    spearman,
)
from kit.stats.agreement import cohens_kappa
from kit.stats.wilson import wilson_ci


def _cl(kinds_weights: list[tuple[str, int]], task: str = "t") -> Checklist:
    return Checklist(
        task,
        "q?",
        tuple(
            Criterion(f"c{i}", k, f"criterion {i}", w, ("x",))
            for i, (k, w) in enumerate(kinds_weights)
        ),
    )


CL = _cl(
    [
        ("must_mention", 3),
        ("must_acknowledge", 1),
        ("must_ground", 2),
        ("must_avoid", 2),
        ("must_mention", 2),
    ]
)


def test_weighted_mean_partial_and_polarity() -> None:
    v = {"c0": "met", "c1": "partial", "c2": "not_met", "c3": "not_met", "c4": "met"}
    # credits: 1, 0.5, 0, 1 (avoid not present), 1 -> (3 + 0.5 + 0 + 2 + 2) / 10
    assert checklist_score(CL, v) == pytest.approx(0.75)
    v["c3"] = "met"  # prohibited content present -> credit 0
    assert checklist_score(CL, v) == pytest.approx(0.55)
    v["c3"] = "partial"
    assert checklist_score(CL, v) == pytest.approx(0.65)
    assert credit("must_avoid", "met") == 0.0 and credit("must_avoid", "not_met") == 1.0
    assert credit("must_ground", "partial") == 0.5


def test_threshold_edges() -> None:
    cl = _cl([("must_mention", 1)] * 4 + [("must_avoid", 0 + 4)])
    # weights 1,1,1,1,4: score exactly 0.5 when the avoid criterion is not met and nothing else
    v = {"c0": "not_met", "c1": "not_met", "c2": "not_met", "c3": "not_met", "c4": "not_met"}
    s = checklist_score(cl, v)
    assert s == 0.5 and is_solved(s) and is_solved(s, 0.5) and not is_solved(s, 0.5000001)
    assert not is_solved(np.nextafter(0.5, 0))


def test_missing_and_unknown_verdicts() -> None:
    with pytest.raises(InputError, match="no verdict for criterion"):
        checklist_score(CL, {"c0": "met"})
    full = {c.id: "met" for c in CL.criteria}
    with pytest.raises(InputError, match="unknown criterion"):
        checklist_score(CL, {**full, "zz": "met"})


def test_frozen_hash_and_schema() -> None:
    rec = CL.to_record()
    same = checklist_from_dict(dict(reversed(list(rec.items()))))
    assert same.frozen_sha256 == CL.frozen_sha256  # key order does not matter
    edited = {**rec, "criteria": [dict(c) for c in rec["criteria"]]}
    edited["criteria"][0]["weight"] = 1
    with pytest.raises(IntegrityError, match="edited after freezing"):
        checklist_from_dict(edited)
    too_few = {**CL.to_dict(), "criteria": CL.to_dict()["criteria"][:4]}
    with pytest.raises(InputError, match=r"schema_violation|JSON Schema"):
        checklist_from_dict(too_few)
    bad_w = CL.to_dict()
    bad_w["criteria"][0]["weight"] = 4
    with pytest.raises(InputError):
        checklist_from_dict(bad_w)
    dup = CL.to_dict()
    dup["criteria"][1]["id"] = "c0"
    with pytest.raises(InputError, match="used more than once"):
        checklist_from_dict(dup)


def _verdicts(
    rng: np.random.Generator, judges: list[str], n_tasks: int = 30
) -> tuple[dict, pd.DataFrame]:
    cls = {
        f"t{i}": _cl(
            [
                ("must_mention", 3),
                ("must_acknowledge", 1),
                ("must_ground", 2),
                ("must_avoid", 2),
                ("must_mention", 1),
            ],
            f"t{i}",
        )
        for i in range(n_tasks)
    }
    rows = []
    for j in judges:
        for t, cl in cls.items():
            for c in cl.criteria:
                rows.append(
                    {
                        "judge": j,
                        "model": "m",
                        "task_id": t,
                        "criterion_id": c.id,
                        "verdict": rng.choice(["met", "partial", "not_met"]),
                    }
                )
    return cls, pd.DataFrame(rows)


def test_score_table_rates_and_agreement_vs_independent() -> None:
    rng = np.random.default_rng(3)
    cls, v = _verdicts(rng, ["a", "b"])
    scores = score_verdicts(cls, v)
    assert len(scores) == 60 and scores["score"].between(0, 1).all()
    # recompute one score by hand
    row = scores.iloc[0]
    vm = v[(v.judge == row.judge) & (v.task_id == row.task_id)].set_index("criterion_id")["verdict"]
    assert row.score == pytest.approx(checklist_score(cls[row.task_id], vm.to_dict()))
    rates = solve_rates(scores)
    for _, r in rates.iterrows():
        lo, hi = proportion_confint(r.solved, r.n, alpha=0.05, method="wilson")
        assert (r.ci_lo, r.ci_hi) == pytest.approx((lo, hi), abs=1e-12)
    ag = judge_agreement(scores, "a", "b")
    a = scores[scores.judge == "a"].sort_values("task_id")
    b = scores[scores.judge == "b"].sort_values("task_id")
    assert ag["spearman"] == pytest.approx(spearmanr(a.score, b.score).statistic, abs=1e-12)
    table = pd.crosstab(a.solved.to_numpy(), b.solved.to_numpy()).reindex(
        index=[False, True], columns=[False, True], fill_value=0
    )
    assert ag["kappa_solved"] == pytest.approx(sm_kappa(table.to_numpy()).kappa, abs=1e-12)


def test_unknown_task_in_verdicts() -> None:
    cls, v = _verdicts(np.random.default_rng(0), ["a"], 2)
    v.loc[0, "task_id"] = "nope"
    with pytest.raises(InputError, match="no checklist"):
        score_verdicts(cls, v)


@pytest.mark.parametrize("seed", range(5))
def test_spearman_vs_scipy_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, 40).astype(float)
    y = x + rng.integers(0, 3, 40)
    assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    assert np.isnan(spearman(np.ones(5), np.arange(5.0)))


@pytest.mark.parametrize(("k", "n"), [(0, 10), (1, 10), (47, 231), (593, 4545), (10, 10)])
def test_wilson_vs_statsmodels(k: int, n: int) -> None:
    ci = wilson_ci(k, n)
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert (ci.lo, ci.hi) == pytest.approx((lo, hi), abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_kappa_vs_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.random(50) < 0.4
    y = np.where(rng.random(50) < 0.8, x, ~x)
    table = np.array([[np.sum(~x & ~y), np.sum(~x & y)], [np.sum(x & ~y), np.sum(x & y)]])
    assert cohens_kappa(x, y) == pytest.approx(sm_kappa(table).kappa, abs=1e-12)
