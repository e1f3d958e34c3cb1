"""Validation before trust: what a verifier card records about held-out pairs (pure).

Seed 001, Table 2: before a verifier's scores are used, its agreement with gold is measured --
per-class recall and specificity, Cohen's kappa -- and its ranking quality as ROC-AUC with a CI.
For each held-out group of pairs (one registry source, or one construction-labelled PubMedQA
negative type) this module reports:

* ``auc_unsupported``: AUC of s for supported (entailment) vs every other label;
* ``auc_contradiction`` / ``auc_neutral``: supported vs that label only;
* for a 3-class verifier, per-class recall and specificity of the argmax class and Cohen's
  kappa of the argmax against the labels (3 x 3, unweighted).

AUC and its DeLong CI come from :func:`kit.stats.roc.roc_auc` (pairs assumed independent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kit.stats.roc import roc_auc


def _auc(s: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> dict[str, Any] | None:
    keep = pos | neg
    if pos.sum() < 2 or neg.sum() < 2:
        return None
    a = roc_auc(s[keep], pos[keep])
    return {
        "auc": round(a.auc, 4),
        "lo": round(a.lo, 4),
        "hi": round(a.hi, 4),
        "n_pos": a.n_pos,
        "n_neg": a.n_neg,
    }


def multiclass_kappa(truth: np.ndarray, pred: np.ndarray, k: int) -> float:
    """Cohen's (1960) kappa for k categories: (p_o - p_e) / (1 - p_e)."""
    n = truth.size
    if n == 0:
        return float("nan")
    table = np.zeros((k, k))
    np.add.at(table, (truth, pred), 1)
    po = np.trace(table) / n
    pe = float((table.sum(0) * table.sum(1)).sum()) / n**2
    return float((po - pe) / (1 - pe)) if pe < 1 else float("nan")


def per_class(truth: np.ndarray, pred: np.ndarray, labels: Sequence[str]) -> dict[str, Any]:
    """Recall (sensitivity) and specificity of each class, one-vs-rest."""
    out = {}
    for i, name in enumerate(labels):
        t, p = truth == i, pred == i
        rec = float((t & p).sum() / t.sum()) if t.any() else float("nan")
        spec = float((~t & ~p).sum() / (~t).sum()) if (~t).any() else float("nan")
        out[name] = {"recall": round(rec, 4), "specificity": round(spec, 4), "n": int(t.sum())}
    return out


def validate_group(
    scores: np.ndarray,
    labels: Sequence[str],
    probs: np.ndarray | None = None,
    class_names: Sequence[str] = ("entailment", "neutral", "contradiction"),
) -> dict[str, Any]:
    """The card entry of one held-out group (see the module docstring)."""
    s = np.asarray(scores, dtype=float)
    lab = np.asarray(labels)
    sup = lab == "entailment"
    out: dict[str, Any] = {
        "n": int(lab.size),
        "counts": {c: int((lab == c).sum()) for c in class_names},
        "auc_unsupported": _auc(s, sup, ~sup),
        "auc_contradiction": _auc(s, sup, lab == "contradiction"),
        "auc_neutral": _auc(s, sup, lab == "neutral"),
    }
    if probs is not None:
        ok = ~np.isnan(probs).any(axis=1)
        truth = np.array([list(class_names).index(x) for x in lab[ok]])
        pred = np.argmax(probs[ok], axis=1)
        out["per_class"] = per_class(truth, pred, class_names)
        out["kappa"] = round(multiclass_kappa(truth, pred, len(class_names)), 4)
        out["accuracy"] = round(float((truth == pred).mean()), 4) if truth.size else None
    return out
