"""Validation before trust: what an instrument's card records about held-out data (pure).

Two kinds of record live here.

**Held-out groups of a trained verifier** (:func:`validate_group`, written by ``kit guard
train`` into ``extra.validation``):

Seed 001, Table 2: before a verifier's scores are used, its agreement with gold is measured --
per-class recall and specificity, Cohen's kappa -- and its ranking quality as ROC-AUC with a CI.
For each held-out group of pairs (one registry source, or one construction-labelled PubMedQA
negative type) this module reports:

* ``auc_unsupported``: AUC of s for supported (entailment) vs every other label;
* ``auc_contradiction`` / ``auc_neutral``: supported vs that label only;
* for a 3-class verifier, per-class recall and specificity of the argmax class and Cohen's
  kappa of the argmax against the labels (3 x 3, unweighted).

AUC and its DeLong CI come from :func:`kit.stats.roc.roc_auc` (pairs assumed independent).

**Validation against a human-labelled sample** (:func:`validation_entry`, written by ``kit
guard validate`` / ``kit grade validate-judge`` into the card's top-level ``validation`` block,
schemas/json/instrument_validation.schema.json) -- docs/architecture.md, "Instruments and gold", *validated
before trust*, for every instrument kind alike (ONNX verifier, LLM verifier, LLM checklist
judge):

* agreement with the human labels, with the base rates beside it (Cohen's kappa is depressed by
  a prevalent class, seed 001 Appendix S2): the share positive under the instrument and under
  the people, observed agreement, Cohen's kappa, Gwet's AC1, positive- and negative-specific
  agreement (PSA / NSA), each with a percentile-bootstrap CI
  (:func:`kit.stats.agreement.agreement_row`; over clusters when the sample names them); for a
  verifier also the seed 001 Table 2 figures -- recall on the supported class (the safety axis)
  and specificity with Wilson CIs, kappa, AUC with its DeLong CI
  (:func:`kit.guard.evaluation.evaluate.evaluate_scores`);
* self-consistency (:func:`self_consistency`): the same items asked twice, the score store
  bypassed both times; the share of decisions that flip, with a Wilson CI. For an ONNX model it
  is 0 by construction (a deterministic forward pass) -- measured here all the same, not
  assumed; for a chat model at temperature 0 it measures the endpoint's non-determinism
  (batching, kernels, a hosted model that changed);
* cost (:func:`cost_block`): the first pass's wall-clock seconds per item and, for a model
  behind an API, requests, retries and prompt / completion tokens as the API's ``usage`` field
  reported them (null, never 0, when responses did not report it);
* what had no answer (``missing``: refused questions, never a number, left out of every
  statistic and counted).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kit.core.errors import check_param
from kit.stats.roc import roc_auc
from kit.stats.wilson import wilson_ci


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


# ----------------------------------------------------------------------------------------------
# validation against a human-labelled sample (the card's top-level ``validation`` block)

VALIDATION_FORMAT = 1
VALIDATION_SCHEMA = "instrument_validation"
NOT_VALIDATED = "not validated by the kit"  # how a freshly imported LLM card's validated_on starts


def finite(x: object) -> float | None:
    """``x`` as a float, or None when it is NaN / infinite (JSON has no NaN; the reason is in
    the row's note)."""
    if x is None:
        return None
    v = float(x)  # type: ignore[arg-type]
    return v if math.isfinite(v) else None


def _json_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A table row as JSON data: numpy scalars as Python, NaN as None."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, bool | np.bool_):
            out[str(k)] = bool(v)
        elif isinstance(v, int | np.integer):
            out[str(k)] = int(v)
        elif isinstance(v, float | np.floating):
            out[str(k)] = finite(v)
        else:
            out[str(k)] = v
    return out


def agreement_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows of :func:`kit.stats.agreement.agreement_row` with rater A the instrument and rater B
    the people, renamed for the card: ``rate_a`` -> ``rate_instrument``, ``rate_b`` ->
    ``base_rate_gold`` (the human base rate, beside the agreement it conditions)."""
    out = []
    for r in rows:
        d = _json_row(r)
        d["rate_instrument"] = d.pop("rate_a")
        d["base_rate_gold"] = d.pop("rate_b")
        for k in ("judge_a", "judge_b"):
            d.pop(k, None)
        out.append(d)
    return out


def self_consistency(
    first: Sequence[object],
    second: Sequence[object],
    level: float = 0.95,
    scores: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, Any]:
    """How often the same items asked twice get another decision.

    ``first`` and ``second`` are the two passes' decisions per item (any comparable labels;
    None = no answer that pass). Over the items answered both times: ``flipped`` = how many
    decisions differ, ``flip_share`` = flipped / compared with its Wilson interval (items
    independent); ``scores`` (the two passes' continuous scores, NaN = none) adds the largest
    and the mean absolute score change. Undefined (no item answered twice) is None with a note,
    never 0."""
    a, b = list(first), list(second)
    check_param("second", len(b), len(b) == len(a), f"{len(a)} decisions", "self_consistency")
    both = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    n = len(both)
    out: dict[str, Any] = {"n_items": len(a), "n_compared": n}
    if n == 0:
        out.update(flipped=None, flip_share=None, lo=None, hi=None, ci="undefined: n = 0")
    else:
        k = sum(x != y for x, y in both)
        ci = wilson_ci(k, n, level)
        out.update(flipped=k, flip_share=ci.estimate, lo=ci.lo, hi=ci.hi, ci=f"Wilson {level:.0%}")
    if scores is not None:
        s1, s2 = (np.asarray(x, dtype=float) for x in scores)
        ok = np.isfinite(s1) & np.isfinite(s2)
        d = np.abs(s1[ok] - s2[ok])
        out["max_abs_score_change"] = float(d.max()) if d.size else None
        out["mean_abs_score_change"] = float(d.mean()) if d.size else None
    return out


def cost_block(
    n_items: int,
    seconds: float,
    usage: Mapping[str, int] | None,
    unit_calls: int | None = None,
    unit: str = "",
) -> dict[str, Any]:
    """What answering ``n_items`` items once cost: wall-clock ``seconds`` and seconds per item;
    ``usage`` (an API client's counts, :meth:`kit.guard.verifiers.llm.client.ChatClient.usage`, or None
    for a local model) gives requests, retries and tokens. Token totals are reported only when
    every answered response carried a ``usage`` field (else None: partial sums would read as a
    cost). ``unit_calls`` counts the questions asked (``unit`` names them, e.g. (claim, window)
    pairs for a verifier, which reads a passage window by window)."""
    check_param("n_items", n_items, n_items >= 1, ">= 1", "cost_block")
    out: dict[str, Any] = {
        "items": int(n_items),
        "seconds": round(float(seconds), 4),
        "seconds_per_item": round(float(seconds) / n_items, 6),
        "questions": unit_calls,
        "question_unit": unit or None,
        "requests": None,
        "retried": None,
        "prompt_tokens": None,
        "completion_tokens": None,
        "tokens_per_item": None,
    }
    if usage is None:
        out["note"] = "a local model: no API requests and no tokens; seconds on this machine"
        return out
    out.update(requests=int(usage["requests"]), retried=int(usage["retried"]))
    answered, without = int(usage["answered"]), int(usage["without_usage"])
    if answered and without == 0:
        p, c = int(usage["prompt_tokens"]), int(usage["completion_tokens"])
        out.update(
            prompt_tokens=p, completion_tokens=c, tokens_per_item=round((p + c) / n_items, 3)
        )
        out["note"] = "tokens as the API's usage field reported them"
    elif answered:
        out["note"] = (
            f"{without} of {answered} responses carried no usage field: token counts unknown"
        )
    else:
        out["note"] = "no response was answered"
    return out


def summary_line(entry: Mapping[str, Any]) -> str:
    """One line saying what a validation found (the card's ``validated_on``)."""
    gold = entry["gold"]
    head = entry["agreement"][0]
    kappa = head.get("kappa")
    parts = [
        f"validated by the kit on {gold['n_items']} human-labelled {gold['unit']} of "
        f"{gold['name']} (sha256 {gold['sha256'][:12]}): {head['level']} kappa "
        + ("undefined" if kappa is None else f"{kappa:.3f}")
        + f", AC1 {_fmt(head.get('ac1'))}, NSA {_fmt(head.get('negative_specific'))} at base "
        f"rate {_fmt(head.get('base_rate_gold'))}"
    ]
    t2 = {(r["metric"], r["subset"]): r for r in entry.get("table2") or []}
    rec = t2.get(("recall", "entailment"))
    if rec is not None:
        parts.append(f"recall on supported {_fmt(rec.get('estimate'))}")
    sc = entry["self_consistency"]
    parts.append(
        "flip share "
        + ("undefined" if sc["flip_share"] is None else f"{sc['flip_share']:.3f}")
        + " asked twice"
    )
    cost = entry["cost"]
    parts.append(f"{cost['seconds_per_item']:.3g} s per item")
    if cost.get("tokens_per_item") is not None:
        parts.append(f"{cost['tokens_per_item']:.1f} tokens per item")
    if entry["missing"]["n"]:
        parts.append(f"{entry['missing']['n']} without an answer")
    return "; ".join(parts) + " (card.json: validation)"


def _fmt(x: object) -> str:
    return "undefined" if x is None else f"{float(x):.3f}"  # type: ignore[arg-type]


def validation_entry(
    instrument: Mapping[str, str],
    gold: Mapping[str, Any],
    decision: str,
    agreement: Sequence[Mapping[str, Any]],
    consistency: Mapping[str, Any],
    cost: Mapping[str, Any],
    missing: tuple[int, Mapping[str, int]],
    parameters: Mapping[str, Any],
    kit_version: str,
    table2: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The card's ``validation`` block (schemas/json/instrument_validation.schema.json).

    ``instrument``: kind, name and identity_sha256 of what was validated; ``gold``: the labelled
    sample's file name, sha256, items and unit; ``decision``: the binary decision compared with
    the people (e.g. "supported iff s > tau"); ``agreement``: rows of :func:`agreement_rows`;
    ``missing``: (items without an answer, reason -> count of the questions refused)."""
    block: dict[str, Any] = {
        "format": VALIDATION_FORMAT,
        "kit_version": kit_version,
        "instrument": dict(instrument),
        "gold": dict(gold),
        "decision": decision,
        "parameters": dict(parameters),
        "agreement": [dict(r) for r in agreement],
        "table2": None if table2 is None else [_json_row(r) for r in table2],
        "self_consistency": _json_row(consistency),
        "cost": dict(cost),
        "missing": {"n": int(missing[0]), "reasons": dict(sorted(missing[1].items()))},
    }
    block["summary"] = summary_line(block)
    return block


def with_validation(card: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``card`` carrying ``entry`` as its ``validation`` block (a new validation
    replaces an earlier one) and its ``validated_on`` saying so. What the card said before any
    kit validation is kept in the block (``card_validated_on``) and after the summary, unless it
    was the import's "not validated by the kit" placeholder. Nothing else changes, so the card's
    identity (ONNX sha256, or an LLM card's instrument sha256 over its pinned fields) and its
    score-store keys stay as they were."""
    out = dict(card)
    earlier = card.get("validation")
    before = str(
        earlier.get("card_validated_on", card.get("validated_on", ""))
        if isinstance(earlier, Mapping)
        else card.get("validated_on", "")
    )
    block = dict(entry)
    block["card_validated_on"] = before
    out["validation"] = block
    keep = before and not before.startswith(NOT_VALIDATED)
    out["validated_on"] = entry["summary"] + (f"; before: {before}" if keep else "")
    return out
