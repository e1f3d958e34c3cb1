"""`kit audit --gold`: the audit's judge-derived rates anchored on human gold labels (issue 40).

Three headline rates of the audit are counts of an instrument's labels:

* ``wrong_paper_rate`` -- the verifier's L2 'no' over scored citations; one judged item per
  scored citation, item_id ``RUN_ID/CLAIM_NO/CITATION`` (the columns of citations.csv), judge
  1 when L2 is 'no'; gold 1 when a person says the cited paper does not support the claim.
* ``unsupported_rate`` -- the guard's unsupported-citation rate: the share of scored citations
  the conformal rule flags (s <= tau; the audit's ``flag_rate``), items as for
  ``wrong_paper_rate``, judge 1 when flagged; gold 1 when a person says the citation is
  unsupported (the cited passage does not support the claim).
* ``solve_rate`` -- the checklist judge's solved (score >= 0.5), one rate per system (model);
  one judged item per (model, task), item_id ``MODEL/TASK_ID``; gold 1 when a person says the
  task is solved.

GOLD (``schemas/audit_gold.yaml``: metric, item_id, gold) labels a uniform random subset of
those items. Each rate with gold is estimated by PPI++ beside the judge-only and gold-only
rates (:func:`kit.anchor.rates.anchored_rates`); the same refusals as `kit anchor` (a gold item
that was not judged, fewer than :data:`kit.anchor.rates.MIN_GOLD` gold items of one rate,
nothing unlabelled) name GOLD's row. A metric without gold rows is reported as its judge's
(``judged_by``); a partial gold sample anchors exactly the rates (metric, and for solve rates
the system) its rows name. Without gold, :func:`whose_judgement` says whose labels each rate
counts.

Citation rates are over citations, and the citations of one answer are not independent (one
generator, one retrieval): their intervals are cluster-robust by run (the cluster of an item is
its run_id; :func:`kit.anchor.rates.anchored_rates` with clusters). Solve rates are over tasks,
one item per (model, task): independent items.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kit.anchor.rates import ASSUMPTION, anchored_rates, one_class, too_small
from kit.core.errors import InputError, Location

if TYPE_CHECKING:
    from kit.audit.gold_adapt import AdaptRequest

GOLD_SCHEMA = "audit_gold"
GOLD_METRICS = ("wrong_paper_rate", "unsupported_rate", "solve_rate")
CITATION_METRICS = ("wrong_paper_rate", "unsupported_rate")  # clustered by run
MAX_LISTED = 20


Judged = dict[str, tuple[float, str | None]]  # item_id -> (judge label, cluster or None)


def judged_items(
    cites: pd.DataFrame, scores: pd.DataFrame | None
) -> dict[tuple[str, str | None], Judged]:
    """(metric, system) -> {item_id: (judge label, cluster)}: the items each judge-derived rate
    counts; a citation's cluster is its run_id, a task's None (independent)."""
    from kit.grade.citation_audit import L2_SCORED

    out: dict[tuple[str, str | None], Judged] = {}
    scored = cites[cites["support_score"].notna() & cites["l1"].isin(L2_SCORED)]
    keys = [
        (f"{r}/{c}/{cit}", str(r))
        for r, c, cit in zip(scored["run_id"], scored["claim_no"], scored["citation"], strict=True)
    ]
    no = (scored["l2"] == "no").to_numpy()
    flag = (scored["flag_reason"] == "score_at_or_below_tau").to_numpy()
    out[("wrong_paper_rate", None)] = {
        item: (float(v), run) for (item, run), v in zip(keys, no, strict=True)
    }
    out[("unsupported_rate", None)] = {
        item: (float(v), run) for (item, run), v in zip(keys, flag, strict=True)
    }
    if scores is not None:
        several = scores["judge"].nunique() > 1  # one rate per (model, judge) then
        for (judge, model), rows in scores.groupby(["judge", "model"], sort=True):
            system = f"{model}, judge {judge}" if several else str(model)
            out[("solve_rate", system)] = {
                f"{model}/{t}": (float(bool(s)), None)
                for t, s in zip(rows["task_id"], rows["solved"], strict=True)
            }
    return out


def whose_judgement(verifier: str, judge: str | None) -> dict[str, str]:
    """metric -> whose labels the audit's rate counts (without gold, the rate is theirs)."""
    out = {
        "wrong_paper_rate": f"verifier {verifier} (L2 'no')",
        "unsupported_rate": f"verifier {verifier} under the conformal rule (flagged: s <= tau)",
    }
    if judge is not None:
        out["solve_rate"] = f"checklist judge {judge} (score >= 0.5)"
    return out


def _gold_groups(
    gold: pd.DataFrame, gold_path: str, items: dict[tuple[str, str | None], Judged]
) -> dict[tuple[str, str | None], list[tuple[str, float]]]:
    """The gold labels per judged rate (metric, system), as (item, gold) pairs; every gold item
    must be a judged item of its metric in this audit."""
    base = int(gold.attrs.get("row_base", 2))
    owner: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    for (metric, system), judged in items.items():
        for item in judged:
            owner.setdefault((metric, item), []).append((metric, system))
    groups: dict[tuple[str, str | None], list[tuple[str, float]]] = {}
    missing: list[int] = []
    for i, (metric, item, label) in enumerate(
        zip(gold["metric"], gold["item_id"].astype(str), gold["gold"], strict=True)
    ):
        keys = owner.get((str(metric), item))
        if not keys:
            missing.append(i)
        for key in keys or []:
            groups.setdefault(key, []).append((item, float(label)))
    if missing:
        details = [
            f"{Location(gold_path, i + base, 'item_id')}: {gold['item_id'].iloc[i]!r} is not a "
            f"judged item of {gold['metric'].iloc[i]} in this audit"
            for i in missing[:MAX_LISTED]
        ]
        raise InputError(
            "gold_not_judged",
            f"{len(missing)} gold item(s) were not judged in this audit (item_id: "
            "RUN_ID/CLAIM_NO/CITATION of a scored citation for wrong_paper_rate, MODEL/TASK_ID "
            "for solve_rate)",
            where=Location(gold_path, missing[0] + base, "item_id"),
            details=details,
        )
    return groups


def _anchored_rate(
    metric: str,
    system: str | None,
    pairs: list[tuple[str, float]],
    judged: Judged,
    judges: dict[str, str],
    alpha: float,
    gold_path: str,
    cross: Callable[[list[tuple[str, float]], Judged], tuple[dict, dict]] | None = None,
    kinds: dict[str, str | None] | None = None,
    half_width: float | None = None,
) -> dict[str, Any]:
    """One rate anchored on its gold: PPI++, judge-only and gold-only (summary.json's
    ``gold_anchored.rates[]``); citation metrics are clustered by run. ``cross`` (``--adapt``,
    citation metrics): the cross-fitted row and its adaptation record
    (:func:`kit.audit.gold_adapt.cross_fitted_rate`), the row first."""
    what = metric + ("" if system is None else f" of {system}")
    reason = too_small(len(pairs)) or one_class([g for _, g in pairs])
    if reason is not None:
        raise InputError("gold_too_small", f"{what}: {reason}", where=Location(gold_path))
    labelled = {item for item, _ in pairs}
    unlabelled = [v for item, v in judged.items() if item not in labelled]
    if not unlabelled:
        raise InputError(
            "nothing_unlabelled",
            f"{what}: every one of its {len(judged)} judged items has gold; nothing is left "
            "for the judge to speak for",
            where=Location(gold_path),
        )
    y = np.asarray([g for _, g in pairs])
    fg = np.asarray([judged[item][0] for item, _ in pairs])
    fu = np.asarray([v for v, _ in unlabelled])
    who = judges.get(metric, metric)
    if metric in CITATION_METRICS:  # citations of one answer: clustered by run
        try:
            res = anchored_rates(
                y,
                fg,
                fu,
                who,
                alpha,
                half_width,
                clusters_gold=[judged[item][1] for item, _ in pairs],
                clusters_unlabelled=[c for _, c in unlabelled],
                cluster_name="run",
            )
        except ValueError as exc:
            raise InputError(
                "gold_too_small", f"{what}: {exc}", where=Location(gold_path)
            ) from None
    else:
        res = anchored_rates(y, fg, fu, who, alpha, half_width)
    rows = [
        {
            "method": r.method,
            "estimate": r.estimate,
            "ci_low": r.ci_low,
            "ci_high": r.ci_high,
            "n": r.n,
            "lambda": r.lam,
            "interval": r.interval,
        }
        for r in res.rows
    ]
    adaptation = None
    if cross is not None and metric in CITATION_METRICS:
        try:
            row, adaptation = cross(pairs, judged)
        except ValueError as exc:
            raise InputError(
                "gold_too_small", f"{what}: cross-fitting: {exc}", where=Location(gold_path)
            ) from None
        rows.insert(0, row)
    by_kind = None
    if kinds is not None and metric in CITATION_METRICS:
        by_kind = kind_rates(
            [kinds.get(item) for item, _ in pairs],
            [str(judged[item][1]) for item, _ in pairs],
            alpha,
        )
    return {
        "metric": metric,
        "by_kind": by_kind,
        "system": system,
        "judge": who,
        "n_judged": res.n_judged,
        "n_gold": res.n_gold,
        "n_unlabelled": res.n_unlabelled,
        "gold_positives": res.gold_positives,
        "rows": rows,
        "adaptation": adaptation,
        "plan": labelling_plan(
            res.plan, y, [judged[item][1] for item, _ in pairs], metric in CITATION_METRICS
        ),
        "clusters": None if res.clusters is None else res.clusters[1],
        "assumption": res.assumption,
        "warnings": list(res.warnings),
    }


def gold_anchored(
    gold: pd.DataFrame | None,
    gold_path: str,
    cites: pd.DataFrame,
    scores: pd.DataFrame | None,
    verifier: str,
    judge: str | None,
    alpha: float,
    adapt: AdaptRequest | None = None,
    texts: dict[str, tuple[str, str]] | None = None,
    half_width: float | None = None,
) -> dict[str, Any]:
    """summary.json's ``gold_anchored``: whose judgement each rate is and, with gold, every
    rate that has gold estimated three ways (``rows``: ppi, judge_only, gold_only) -- four
    with ``adapt`` for the citation rates (``cross_ppi`` first, the verifier cross-fitted on
    the gold: :mod:`kit.audit.gold_adapt`; ``texts`` the (claim, passage) of each scored
    citation, :func:`kit.audit.evidence.citation_pairs`)."""
    judges = whose_judgement(verifier, judge)
    out: dict[str, Any] = {
        "judged_by": judges,
        "assumption": None,
        "rates": [],
        "not_anchored": list(judges),
        "adapted": False,
    }
    if gold is None:
        return out
    items = judged_items(cites, scores)
    groups = _gold_groups(gold, gold_path, items)
    kinds = gold_kinds(gold, gold_path)
    parent = _support_scores(cites) if adapt is not None else {}
    rates = []
    for (metric, system), pairs in sorted(
        groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")
    ):
        metric_kinds = (
            None if kinds is None else {i: k for (m, i), k in kinds.items() if m == metric}
        )
        rates.append(
            _anchored_rate(
                metric,
                system,
                pairs,
                items[(metric, system)],
                judges,
                alpha,
                gold_path,
                _cross(adapt, texts, parent, metric_kinds, metric, alpha),
                metric_kinds,
                half_width,
            )
        )
    out["assumption"] = ASSUMPTION
    out["rates"] = rates
    out["adapted"] = adapt is not None
    anchored = {r["metric"] for r in rates}
    out["not_anchored"] = [m for m in judges if m not in anchored]
    return out


def gold_kinds(gold: pd.DataFrame, gold_path: str) -> dict[tuple[str, str], str | None] | None:
    """(metric, item_id) -> GOLD's optional ``label`` (supported / contradicted /
    not_enough_info) of citation rows, None without the column. Refused (exit 2, naming the
    row): a label that contradicts its 0/1 gold (``supported`` with gold 1, another kind with
    gold 0)."""
    if "label" not in gold.columns:
        return None
    base = int(gold.attrs.get("row_base", 2))
    out: dict[tuple[str, str], str | None] = {}
    for i, (metric, item, g, kind) in enumerate(
        zip(gold["metric"], gold["item_id"].astype(str), gold["gold"], gold["label"], strict=True)
    ):
        k = None if pd.isna(kind) or kind == "" else str(kind)
        if k is not None and metric in CITATION_METRICS and (k == "supported") == bool(g):
            raise InputError(
                "gold_label_mismatch",
                f"label {k!r} with gold {int(g)}: a citation labelled supported has gold 0, a "
                "contradicted or not_enough_info one gold 1",
                where=Location(gold_path, i + base, "label"),
            )
        out[(str(metric), item)] = k
    return out


def _support_scores(cites: pd.DataFrame) -> dict[str, float]:
    """item_id -> the parent verifier's support score of every scored citation."""
    return {
        f"{r}/{c}/{cit}": float(v)
        for r, c, cit, v in zip(
            cites["run_id"],
            cites["claim_no"],
            cites["citation"],
            cites["support_score"],
            strict=True,
        )
        if pd.notna(v)
    }


def _cross(
    adapt: AdaptRequest | None,
    texts: dict[str, tuple[str, str]] | None,
    parent: dict[str, float],
    kinds: dict[str, str | None] | None,
    metric: str,
    alpha: float,
) -> Callable[[list[tuple[str, float]], Judged], tuple[dict, dict]] | None:
    """The cross-fitting of one citation metric (None without ``--adapt``)."""
    if adapt is None or texts is None or metric not in CITATION_METRICS:
        return None
    from kit.audit.gold_adapt import cross_fitted_rate

    def run(pairs: list[tuple[str, float]], judged: Judged) -> tuple[dict, dict]:
        return cross_fitted_rate(pairs, judged, texts, parent, kinds, adapt, alpha)

    return run


def kind_rates(
    kinds: list[str | None], runs: list[str], alpha: float
) -> list[dict[str, Any]] | None:
    """The gold sample's contradicted and not-enough-info rates apart (issue 56: contradiction
    is its own failure): the share of gold citations of each kind, cluster-robust by run (t on
    G - 1) -- gold alone, since the audit's instruments do not tell the two apart. None when a
    gold row of the rate has no kind, or fewer than 2 runs hold gold."""
    from kit.stats.ppi import cluster_classical_mean

    if any(k is None for k in kinds) or len(set(runs)) < 2:
        return None
    out = []
    for kind in ("contradicted", "not_enough_info"):
        x = np.asarray([k == kind for k in kinds], dtype=float)
        e = cluster_classical_mean(x, np.asarray(runs, dtype=object), alpha)
        out.append(
            {
                "kind": kind,
                "estimate": e.estimate,
                "ci_low": e.ci_low,
                "ci_high": e.ci_high,
                "n_gold": int(x.size),
                "count": int(x.sum()),
            }
        )
    return out


def labelling_plan(
    plan: Any, gold: np.ndarray, runs: list[str | None], clustered: bool
) -> dict[str, Any] | None:
    """``--half-width``'s labelling plan for one rate, this gold sample as the pilot: the gold
    items a PPI++ interval of +- H needs (:func:`kit.stats.ppi.plan_gold_size`, which takes
    items as independent) and, for a citation rate, that number times the gold labels' design
    effect by run (Kish; :func:`kit.stats.ppi.design_effect`) -- the clustered sample's need.
    None without ``--half-width``."""
    from kit.stats.ppi import design_effect

    if plan is None:
        return None
    deff = design_effect(gold, np.asarray(runs, dtype=object)) if clustered else 1.0
    need = None if plan.n_gold is None else int(np.ceil(plan.n_gold * deff))
    return {
        "target_half_width": plan.target_half_width,
        "n_gold": need,
        "n_gold_independent": plan.n_gold,
        "design_effect": round(float(deff), 6),
        "half_width": plan.half_width,
        "n_gold_only": int(np.ceil(plan.n_gold_only * deff)),
        "pilot_n": plan.pilot_n,
        "n_judged": plan.n_judged,
    }
