"""What an adapted card records of its adaptation (``extra.adaptation``, schema
``guard_adaptation``) and what ``kit guard adapt`` prints of it: the provenance (parent card,
sample and pair sha256s, method, folds, the estimate and its verdict), the ``validated_on``
sentence, the lines printed, and the check that refuses to calibrate on pairs the verifier was
adapted on (:func:`check_disjoint`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core.errors import InputError, Location
from kit.stats.crossval_auc import CrossValAUC


def pair_hashes(claims: list[str], passages: list[str]) -> list[str]:
    """sha256 of each (claim, passage) pair: what an adapted card remembers of its sample."""
    import hashlib

    return sorted(
        {
            hashlib.sha256(f"{c}\x1f{p}".encode()).hexdigest()
            for c, p in zip(claims, passages, strict=True)
        }
    )


def check_disjoint(card: dict[str, Any], frame: pd.DataFrame, source: Path) -> None:
    """Refuse to calibrate on pairs the verifier was adapted on (the guarantee would not hold:
    its scores on those pairs are fitted, not exchangeable with new citations)."""
    used = set(card.get("extra", {}).get("adaptation", {}).get("pair_sha256", []))
    if not used:
        return
    mine = pair_hashes(frame["claim"].tolist(), frame["passage"].tolist())
    both = used.intersection(mine)
    if both:
        raise InputError(
            "calibration_overlaps_adaptation",
            f"{len(both)} (claim, passage) pair(s) of this sample were used to adapt the verifier "
            "(`kit guard adapt`); calibrate on labelled pairs disjoint from the adaptation "
            "sample, or the catch guarantee does not hold",
            where=Location(str(source)),
        )


def _rounded(obj: Any) -> Any:
    """Floats of a to_dict() tree to 4 decimals (None for NaN), for a card."""
    if isinstance(obj, float):
        return None if not np.isfinite(obj) else round(obj, 4)
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_rounded(v) for v in obj]
    return obj


@dataclass(frozen=True)
class Outcome:
    """What an adaptation found: the candidate kept and the cross-validated figures of every
    candidate compared, for its card (:func:`provenance`, :func:`validated_on`)."""

    method: str
    chosen: str
    fine_tuned: bool
    rule: str  # the adapted card's scoring rule
    parent_rule: str
    n_folds: int
    n_units: int
    estimate: CrossValAUC
    pooled: float  # one AUC over the pooled out-of-fold scores (biased; for older cards)
    before_by_rule: dict[str, float]
    after_by_rule: dict[str, float]
    recombine_auc: float | None
    bi_auc: float | None
    seconds: float

    @property
    def before(self) -> float:
        """The parent's AUC on the sample under its own rule."""
        return self.before_by_rule[self.parent_rule]


def provenance(
    parent_dir: Path,
    pcard: dict[str, Any],
    labelled: Path,
    frame: pd.DataFrame,
    outcome: Outcome,
    *,
    epochs: int,
    lr: float,
    batch_size: int,
    seed: int,
    folds_requested: int,
) -> dict[str, Any]:
    """The card's ``extra.adaptation`` (schema ``guard_adaptation``): the parent card's and the
    sample's sha256, the recipe, the estimate and its verdict, how it was read, and the sha256
    of every (claim, passage) pair the card was fitted on."""
    from kit.core.hashing import file_sha256

    o, estimate = outcome, outcome.estimate
    return {
        "parent_card_sha256": file_sha256(parent_dir / "card.json"),
        "parent_name": pcard["name"],
        "sample": str(labelled),
        "sample_sha256": file_sha256(labelled),
        "sample_n": len(frame),
        "sample_labels": {
            str(k): int(v) for k, v in frame["label"].value_counts().sort_index().items()
        },
        "method": o.method,
        "chosen": o.chosen,
        "fine_tuned": o.fine_tuned,
        "epochs": epochs,
        "lr": lr,
        "batch_size": batch_size,
        "seed": seed,
        "seconds": round(o.seconds, 1),
        "cv_folds": o.n_folds,
        "cv_folds_requested": folds_requested,
        "cv_units": o.n_units,
        "cv_fold_rule": "pairs sharing a claim, a passage or a group value stay in one fold",
        "cv_estimate": _rounded(estimate.to_dict()),
        "cv_auc_after_pooled": round(float(o.pooled), 4),
        "verdict": estimate.verdict,
        "training_passage": "the parent's highest-scoring window of each passage (the whole "
        "passage when it is one window)",
        "cv_auc_before": round(float(o.before), 4),
        "cv_auc_after": round(float(estimate.auc_a), 4),
        "improved": estimate.verdict == "improved",
        "parent_scoring": o.parent_rule,
        "scoring": o.rule,
        "auc_before_by_rule": {r: round(v, 4) for r, v in sorted(o.before_by_rule.items())},
        "cv_auc_after_by_rule": {r: round(v, 4) for r, v in sorted(o.after_by_rule.items())},
        "cv_auc_recombine": None if o.recombine_auc is None else round(o.recombine_auc, 4),
        "bi_encoder_auc": None if o.bi_auc is None else round(o.bi_auc, 4),
        "cv_estimate_method": "each held-out fold scored by its own fold model and by the "
        "parent (under the parent's rule); AUCs within folds, averaged weighted by each "
        "fold's positive-negative comparisons (fold models' scores are not on one scale, so "
        "they are never pooled); CIs: stratified cluster bootstrap of the independent units "
        "within folds; verdict from the CI of adapted - parent (improved: above 0, worse: "
        "below 0, else no_evidence); improved = (verdict == improved); "
        "cv_auc_after_pooled, one AUC over the pooled out-of-fold scores, is biased and "
        "only kept for comparison with cards written before",
        "scoring_choice": "the adaptation with the best cross-validated AUC on this sample "
        "(fine-tuning under each rule, or recombining the parent's signals by a fitted rule; "
        "ties: fine-tuning under the parent's rule); chosen among those, so its after-figure "
        "is slightly optimistic",
        "pair_sha256": pair_hashes(frame["claim"].tolist(), frame["passage"].tolist()),
        "note": "calibrate the guarantee on labelled pairs DISJOINT from this sample "
        "(`kit guard calibrate` refuses overlap)",
    }


def validated_on(pcard: dict[str, Any], n: int, outcome: Outcome, how: str) -> str:
    """The adapted card's ``validated_on``: before, after with its CI, adapted - parent and the
    verdict, the bi-encoder alone, then the parent's own sentence."""
    e, o = outcome.estimate, outcome
    return (
        f"AUC on the adaptation sample (n={n}): {o.before:.3f} before (parent, "
        f"not trained on it), {e.auc_a:.3f} [{e.auc_a_lo:.3f}, {e.auc_a_hi:.3f}] "
        f"after ({o.n_folds}-fold cross-validated within folds, {how}); adapted - parent on the "
        f"same held-out folds {e.diff:+.3f} [{e.lo:+.3f}, {e.hi:+.3f}]: "
        f"{e.verdict}"
        + ("" if o.bi_auc is None else f"; the relatedness bi-encoder alone {o.bi_auc:.3f}")
        + f"; parent: {pcard.get('validated_on', '')}"
    )


def adaptation_lines(a: dict[str, Any]) -> list[str]:
    """What ``kit guard adapt`` prints of a card's ``extra.adaptation`` (a card written with
    the within-fold estimate): the AUC before and after with its CI, the paired difference and
    its verdict, what each fold model saw, and the candidates compared."""
    e = a["cv_estimate"]
    pct = f"{e['level']:.0%}"
    lines = [
        f"AUC on the sample (n={a['sample_n']}): before {a['cv_auc_before']:.3f} (the parent, "
        f"never trained on it), after {e['auc_a']:.3f} [{e['auc_a_lo']:.3f}, "
        f"{e['auc_a_hi']:.3f}] ({a['cv_folds']}-fold cross-validated over {a['cv_units']} "
        "independent units: pairs sharing a claim, passage or group stay in one fold; AUCs "
        f"within folds, averaged); {a['seconds']:.0f}s",
        f"adapted - parent on the same held-out folds: {e['diff']:+.3f} [{e['lo']:+.3f}, "
        f"{e['hi']:+.3f}] -> {a['verdict']} (parent within folds {e['auc_b']:.3f}; {pct} "
        f"stratified cluster bootstrap by unit within folds, {e['n_boot']} resamples; the "
        f"per-fold AUC after varies with sd {_fmt(e['fold_sd_a'])})",
    ]
    for f in e["folds"]:
        lines.append(
            f"  fold {f['fold']}: its model saw {f['train_pairs']} pairs ({f['train_units']} "
            f"units); held out {f['test_pairs']} pairs ({f['test_units']} units, "
            f"{f['n_pos']} supported): AUC adapted {_fmt(f['auc_a'])}, parent {_fmt(f['auc_b'])}"
        )
    lines.append(
        f"the card is fitted on all {a['sample_n']} pairs; each fold model saw "
        f"{a['cv_folds'] - 1}/{a['cv_folds']} of them, so the estimate is of a slightly less "
        f"trained model (one AUC over the pooled out-of-fold scores would read "
        f"{a['cv_auc_after_pooled']:.3f}: biased, fold models' scores are not on one scale)"
    )
    if a["cv_auc_after_by_rule"]:
        rules = ", ".join(
            f"{r} {a['auc_before_by_rule'].get(r, float('nan')):.3f} -> {v:.3f}"
            for r, v in a["cv_auc_after_by_rule"].items()
        )
        lines.append(f"fine-tuned, per scoring rule, before -> after (cross-validated): {rules}")
    if a["cv_auc_recombine"] is not None:
        lines.append(
            "recombined (the parent's weights, a rule fitted on the sample): "
            f"{a['cv_auc_recombine']:.3f} (cross-validated)"
        )
    lines.append(
        f"kept: {a['chosen']} -> scoring {a['scoring']} (best cross-validated; chosen on the "
        "same folds, so slightly optimistic when several were compared)"
    )
    if a.get("bi_encoder_auc") is not None:
        lines.append(f"the relatedness bi-encoder alone on the sample: {a['bi_encoder_auc']:.3f}")
    return lines


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"
