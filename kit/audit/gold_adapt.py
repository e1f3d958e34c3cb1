"""`kit audit --gold GOLD --adapt`: one gold sample, two uses (issue 56).

The verifier is adapted on the lab's own gold citations *and* the audit's citation rates are
anchored on the same gold, without double-dipping: cross-prediction (Zrnic & Candes 2024;
:mod:`kit.stats.crossppi`, :mod:`kit.anchor.cross_fit`). The gold items of a citation rate are
split into K folds that keep each unit whole -- the citations of one run, and pairs sharing a
claim or a passage (:func:`kit.guard.training.adapt_folds.independent_units` with the run as
group) --; per fold the verifier is adapted on the other folds
(:mod:`kit.guard.training.fold_judges`: ``recombine`` or ``fine-tune``) and predicts
P(unsupported) of the held-out gold citations and of every unlabelled one. The rate is the
cross-PPI estimate (lambda = 1, the paper's; cluster-robust by run, t on G - 1), reported as the
row ``cross_ppi`` beside PPI++ on the parent's 0/1 labels, the judge-only and the gold-only
rates, with the adapted judge's cross-validated AUC (within folds) and the parent's on the same
gold items and K; the seconds the fold judges took are said on stderr (summary.json stays the
same bytes for the same inputs).

Each citation is read as L2 read it: the passage the agent read (evidence ``tool_response``),
else the corpus passage (:func:`kit.audit.evidence.citation_pairs`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kit.anchor.cross_fit import cross_fitted_mean
from kit.core.progress import say
from kit.guard.training.adapt_folds import independent_units
from kit.guard.training.fold_judges import GoldPairs, fine_tune_judge, nli_labels, recombine_judge
from kit.stats.crossval_auc import within_fold_auc
from kit.stats.roc import auc_score

CROSS_PPI = "cross_ppi"
DESCRIPTION = (
    "cross-PPI: cross-prediction-powered inference (Zrnic & Candes, PNAS 2024): the verifier "
    "adapted on K - 1 gold folds predicts the held-out fold and every unlabelled citation; "
    "mean over unlabelled of the K fold judges' average + mean over gold of (gold - out-of-fold "
    "prediction); lambda = 1; the rate of gold labels"
)


@dataclass(frozen=True)
class AdaptRequest:
    """What ``--adapt`` asks: the adaptation method, at most ``folds`` folds, the seed, the
    parent verifier (loaded, and its folder for fine-tuning) and the fine-tuning settings."""

    method: str
    folds: int
    seed: int
    verifier: Any  # the loaded parent verifier (what scored the audit)
    folder: Any  # the parent's card folder (fine-tune reloads its weights)
    settings: Any  # kit.guard.training.adapt.FitSettings (fine-tune)
    progress: bool = True  # say how long the fold judges took (stderr; never in summary.json)


def _auc(scores: np.ndarray, positive: np.ndarray, fold: np.ndarray | None) -> float | None:
    """AUC of ``scores`` for ``positive`` (None when a class is missing): within folds when
    ``fold`` is given (each fold judge's scores are on its own scale; pooled they mix scale
    offsets into the ranking, :mod:`kit.stats.crossval_auc`), else over all items."""
    positive = np.asarray(positive, dtype=bool)
    if positive.all() or not positive.any():
        return None
    v = auc_score(scores, positive) if fold is None else within_fold_auc(scores, positive, fold)
    return None if not np.isfinite(v) else round(float(v), 6)


def per_label_auc(
    p_unsupported: np.ndarray,
    unsupported: np.ndarray,
    kinds: Sequence[str | None] | None,
    fold: np.ndarray | None = None,
) -> dict[str, float | None]:
    """AUC of P(unsupported): gold-unsupported vs gold-supported items and, where the gold
    names its kind, contradicted vs supported and not-enough-info vs supported."""
    p = np.asarray(p_unsupported, dtype=float)
    out = {"unsupported": _auc(p, unsupported, fold)}
    if kinds is not None:
        kind = np.asarray([k or "" for k in kinds], dtype=object)
        for name in ("contradicted", "not_enough_info"):
            mask = (kind == "supported") | (kind == name)
            out[name] = _auc(p[mask], kind[mask] == name, None if fold is None else fold[mask])
    return out


def cross_fitted_rate(
    pairs: list[tuple[str, float]],
    judged: dict[str, tuple[float, str | None]],
    texts: dict[str, tuple[str, str]],
    parent_scores: dict[str, float],
    kinds: dict[str, str | None] | None,
    req: AdaptRequest,
    alpha: float,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One citation rate anchored by cross-PPI on its gold ``pairs`` (item, gold): the
    ``cross_ppi`` row and the ``adaptation`` record (module doc). The judged items without a
    readable passage are not in ``texts``; every judged item of a citation rate was scored, so
    each has one. ``parent_scores``: the parent verifier's support score of each item."""
    items = [i for i in judged if i in texts]
    number = {item: k for k, item in enumerate(items)}
    gold_items = [item for item, _ in pairs]
    missing = [g for g in gold_items if g not in number]
    if missing:
        raise ValueError(f"{len(missing)} gold item(s) have no passage to adapt on: {missing[0]}")
    labelled = set(gold_items)
    unl_items = [i for i in items if i not in labelled]
    y = np.asarray([g for _, g in pairs], dtype=float)
    gold_index = np.asarray([number[g] for g in gold_items], dtype=int)
    unl_index = np.asarray([number[u] for u in unl_items], dtype=int)
    claims = [texts[i][0] for i in items]
    passages = [texts[i][1] for i in items]
    runs = [str(judged[g][1]) for g in gold_items]
    units = independent_units(
        [claims[k] for k in gold_index], [passages[k] for k in gold_index], runs
    )
    kind_list = None if kinds is None else [kinds.get(g) for g in gold_items]
    gp = GoldPairs(claims, passages, gold_index, y, nli_labels(y, kind_list))
    if req.method == "recombine":
        fit = recombine_judge(req.verifier, gp)
    else:
        fit = fine_tune_judge(req.folder, gp, req.settings)
    t0 = time.perf_counter()
    est, fitted = cross_fitted_mean(
        y,
        gold_index,
        unl_index,
        units,
        np.asarray(runs, dtype=object),
        np.asarray([str(judged[u][1]) for u in unl_items], dtype=object),
        fit,
        req.folds,
        req.seed,
        alpha,
    )
    fold, k = fitted.fold, fitted.k
    say(
        f"audit: --adapt: {k} fold judges ({req.method}) on {len(gold_items)} gold citations in "
        f"{time.perf_counter() - t0:.1f} s",
        req.progress,
    )
    g = len(set(runs) | {str(judged[u][1]) for u in unl_items})
    row = {
        "method": CROSS_PPI,
        "estimate": est.estimate,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "n": len(items),
        "lambda": 1.0,
        "interval": f"t interval ({g} - 1 degrees of freedom), cluster-robust (CR1) variance by "
        f"run ({g} clusters)",
    }
    parent_p = np.asarray([1.0 - parent_scores[gi] for gi in gold_items], dtype=float)
    adaptation = {
        "method": req.method,
        "folds": k,
        "units": int(np.unique(units).size),
        "seed": req.seed,
        "auc_adapted": per_label_auc(fitted.judge_gold, y, kind_list, fold),
        "auc_parent": per_label_auc(parent_p, y, kind_list),
        "description": DESCRIPTION,
    }
    return row, adaptation
