"""``kit guard adapt``: fine-tune a kit-trained verifier on a lab's own labelled pairs.

The AUC on the sample is printed before (the parent card never saw the sample) and after
(k-fold cross-validated: each fold scored by a model fitted on the other folds), and written
on the new card with the parent card's sha256, the sample's sha256 and the sha256 of every
(claim, passage) pair -- so that ``kit guard calibrate`` can refuse to calibrate the guarantee
on pairs the verifier was fitted on (:func:`check_disjoint`).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit import atomic
from kit.errors import InputError, Location
from kit.guard import train as tr
from kit.guard.cross_export import copy_card_folder, write_cross_encoder
from kit.guard.nli_verifier import say
from kit.guard.pairtable import read_labelled_table
from kit.guard.verifier import load_verifier
from kit.guard.windows import WindowSpec


def pair_hashes(claims: list[str], passages: list[str]) -> list[str]:
    """sha256 of each (claim, passage) pair: what an adapted card remembers of its sample."""
    import hashlib

    return sorted(
        {
            hashlib.sha256(f"{c}\x1f{p}".encode()).hexdigest()
            for c, p in zip(claims, passages, strict=True)
        }
    )


def best_window_text(verifier: Any, claim: str, passage: str) -> str:
    """The window of ``passage`` that ``verifier`` scores highest against ``claim`` (the
    passage itself when it is one window or empty)."""
    wins, scores = verifier.window_scores(claim, passage)
    if len(wins) <= 1:
        return wins[0] if wins else passage
    return wins[int(np.argmax(scores))]


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


def _cv_aucs(
    frame: pd.DataFrame,
    folds: np.ndarray,
    score_fn: Callable[[pd.DataFrame, pd.DataFrame], dict[str, np.ndarray]],
) -> dict[str, float]:
    """Cross-validated AUC (supported vs the rest) of each scoring rule ``score_fn`` returns:
    every fold is scored by a model fitted on the other folds."""
    from kit.stats.roc import roc_auc

    scores: dict[str, np.ndarray] = {}
    for f in np.unique(folds):
        test = folds == f
        for rule, s in score_fn(frame[~test], frame[test]).items():
            scores.setdefault(rule, np.zeros(len(frame)))[test] = s
    sup = (frame["label"] == "entailment").to_numpy()
    return {rule: float(roc_auc(s, sup).auc) for rule, s in scores.items()}


def rule_scores(verifier: Any, claims: list[str], passages: list[str]) -> dict[str, np.ndarray]:
    """``verifier``'s score of every pair under each scoring rule it can apply (the class
    probabilities are computed once and cached; only the rule changes)."""
    out = {}
    keep = verifier.scoring
    for rule in verifier.rules():
        verifier.scoring = rule
        out[rule] = verifier.score(claims, passages)
    verifier.scoring = keep
    return out


def adapt_verifier(
    labelled: Path,
    parent: str | Path,
    out: Path,
    epochs: int = 3,
    lr: float = 3e-5,
    batch_size: int = 16,
    folds: int = 3,
    seed: int = 0,
    label_map: dict[str, str] | None = None,
    device: str = "cpu",
) -> dict[str, Any]:
    """Fine-tune the parent card on ``labelled``; return the new card (with CV AUC before/after)."""
    from kit.guard.verifier import load_card, resolve_verifier
    from kit.hashing import file_sha256
    from kit.stats.roc import roc_auc

    parent_dir = resolve_verifier(parent)
    pcard = load_card(parent_dir)
    weights, config = tr.load_trainable(parent_dir)
    frame = read_labelled_table(labelled, label_map)
    sup = (frame["label"] == "entailment").to_numpy()
    if sup.sum() < folds or (~sup).sum() < folds:
        raise InputError(
            "too_few_labels",
            f"adaptation needs at least {folds} supported and {folds} unsupported pairs for "
            f"{folds}-fold cross-validation; got {int(sup.sum())} and {int((~sup).sum())}",
            where=Location(str(labelled), column="label"),
        )
    tok_text = (parent_dir / "tokenizer.json").read_text()
    max_length = int(pcard.get("max_length", 256))
    rng = np.random.default_rng(seed)
    # stratified folds
    fold = np.zeros(len(frame), dtype=int)
    for cls in (True, False):
        idx = np.flatnonzero(sup == cls)
        fold[rng.permutation(idx)] = np.arange(idx.size) % folds
    parent_v = load_verifier(parent_dir)
    claims, passages = frame["claim"].tolist(), frame["passage"].tolist()
    parent_rule = pcard["extra"]["scoring"]
    before_by_rule = {
        r: float(roc_auc(s, sup).auc) for r, s in rule_scores(parent_v, claims, passages).items()
    }
    before = before_by_rule[parent_rule]
    rel_dir = parent_dir / pcard["extra"]["relatedness"]["folder"] if parent_v.relatedness else None
    bi_auc = (
        float(roc_auc(parent_v.relatedness.score(claims, passages), sup).auc)
        if parent_v.relatedness is not None
        else None
    )
    # a passage longer than one window trains on the window the parent scores highest (the
    # one the verifier reads at run time), not on a prefix cut at the token limit
    frame = frame.assign(
        train_passage=[
            best_window_text(parent_v, c, p)
            for c, p in zip(frame["claim"], frame["passage"], strict=True)
        ]
    )

    def fit_on(train: pd.DataFrame) -> dict[str, np.ndarray]:
        return tr.fit(
            weights,
            config,
            tok_text,
            train["claim"].tolist(),
            train["train_passage"].tolist(),
            tr.label_ids(train["label"].tolist()),
            epochs=epochs,
            batch_size=batch_size,
            lr=lr,
            warmup=0.1,
            weight_decay=0.01,
            max_length=max_length,
            seed=seed,
            device=device,
        ).weights

    def cv_score(train: pd.DataFrame, test: pd.DataFrame) -> dict[str, np.ndarray]:
        w = fit_on(train)
        with tempfile.TemporaryDirectory() as td:
            write_cross_encoder(
                Path(td) / "m",
                w,
                config,
                tok_text,
                name="cv fold",
                scoring=parent_rule,
                window=WindowSpec(**pcard["extra"]["window"]),
                int8=False,
                relatedness=rel_dir,
            )
            return rule_scores(
                load_verifier(Path(td) / "m"), test["claim"].tolist(), test["passage"].tolist()
            )

    t0 = time.perf_counter()
    say(f"adapt: {len(frame)} labelled pairs, {folds}-fold cross-validation, {epochs} epochs each")
    after_by_rule = _cv_aucs(frame, fold, cv_score)
    # the adapted card keeps the rule that cross-validates best on the lab's own sample (ties:
    # the parent's rule); the chosen figure is the best of len(rules), slightly optimistic
    rule = max(after_by_rule, key=lambda r: (round(after_by_rule[r], 4), r == parent_rule))
    after = after_by_rule[rule]
    say(f"adapt: cross-validation done in {time.perf_counter() - t0:.0f}s; fitting on all")
    w_all = fit_on(frame)
    seconds = time.perf_counter() - t0
    provenance = {
        "parent_card_sha256": file_sha256(parent_dir / "card.json"),
        "parent_name": pcard["name"],
        "sample": str(labelled),
        "sample_sha256": file_sha256(labelled),
        "sample_n": len(frame),
        "sample_labels": {
            str(k): int(v) for k, v in frame["label"].value_counts().sort_index().items()
        },
        "epochs": epochs,
        "lr": lr,
        "batch_size": batch_size,
        "seed": seed,
        "seconds": round(seconds, 1),
        "cv_folds": folds,
        "training_passage": "the parent's highest-scoring window of each passage (the whole "
        "passage when it is one window)",
        "cv_auc_before": round(float(before), 4),
        "cv_auc_after": round(float(after), 4),
        "improved": bool(after > before),
        "parent_scoring": parent_rule,
        "scoring": rule,
        "auc_before_by_rule": {r: round(v, 4) for r, v in sorted(before_by_rule.items())},
        "cv_auc_after_by_rule": {r: round(v, 4) for r, v in sorted(after_by_rule.items())},
        "bi_encoder_auc": None if bi_auc is None else round(bi_auc, 4),
        "scoring_choice": "the rule with the best cross-validated AUC on this sample (ties: the "
        "parent's rule); chosen among the rules above, so its after-figure is slightly "
        "optimistic",
        "pair_sha256": pair_hashes(frame["claim"].tolist(), frame["passage"].tolist()),
        "note": "calibrate the guarantee on labelled pairs DISJOINT from this sample "
        "(`kit guard calibrate` refuses overlap)",
    }
    extra = {k: v for k, v in pcard.get("extra", {}).items() if k in ("training", "validation")}
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td) / "model"
        card = write_cross_encoder(
            tmp,
            w_all,
            config,
            tok_text,
            name=f"{pcard['name']} + adapted on {Path(labelled).name}",
            scoring=rule,
            window=WindowSpec(**pcard["extra"]["window"]),
            relatedness=rel_dir,
            validated_on=(
                f"AUC on the adaptation sample (n={len(frame)}): {before:.3f} before (parent, "
                f"not trained on it), {after:.3f} after ({folds}-fold cross-validated, "
                f"scoring {rule})"
                + ("" if bi_auc is None else f"; the relatedness bi-encoder alone {bi_auc:.3f}")
                + f"; parent: {pcard.get('validated_on', '')}"
            ),
            source=f"`kit guard adapt` of {pcard['name']}",
            licence=pcard.get("licence", ""),
            extra={"adaptation": provenance, "parent": extra},
        )
        tr.save_weights(tmp, w_all, config)
        with atomic.staged_dir(out) as final:
            final.chmod(0o755)
            copy_card_folder(tmp, final)
    return card
