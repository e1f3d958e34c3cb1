"""The fold judges of a cross-fitted anchor (:func:`kit.anchor.cross_fit.cross_fit`): the
audit's verifier adapted on every gold fold but one predicts the held-out fold and the
unlabelled citations, as P(unsupported) = 1 - its support score.

Two adaptations, the methods of ``kit guard adapt`` (:mod:`kit.guard.training.adapt`):

* ``recombine`` -- the parent's weights kept; the fitted rule
  (:mod:`kit.guard.verifiers.fitted_rule`: a ridge logistic of P(entailment), P(contradiction)
  and relatedness, whichever the card has) fitted on the fold's training gold items, read on
  the window each pair's parent rule scores highest, applied max over windows. Its output is a
  probability fitted to the lab's labels (calibrated on them), seconds, no torch. A card
  without class probabilities (a bi-encoder, an LLM card) is recombined from its one score:
  a logistic recalibration of the parent's support score.
* ``fine-tune`` -- the parent cross-encoder fine-tuned on the fold's training gold items (the
  recipe of ``kit guard adapt``: :func:`kit.guard.training.adapt.fold_scores`), scored under
  the rule a fine-tuned model reads. Minutes per fold on CPU; needs torch and a kit-trained
  card.

Gold labels are 0/1 "unsupported"; fine-tuning needs NLI labels: a supported item trains as
entailment, an unsupported one as the label the gold names when it says (contradicted ->
contradiction, not enough info -> neutral), else neutral (the pair does not entail the claim;
nothing says it contradicts it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kit.guard.verifiers.fitted_rule import fit_rule, pair_scores

METHODS = ("recombine", "fine-tune")
SCORE_ONLY = ("score",)  # the one feature of a card without class probabilities


@dataclass(frozen=True)
class GoldPairs:
    """Every judged item's (claim, passage) in one numbering, and the gold items among them."""

    claims: list[str]
    passages: list[str]
    gold_index: np.ndarray  # the gold items' numbers
    unsupported: np.ndarray  # per gold item: 1 unsupported, 0 supported
    nli_labels: list[str]  # per gold item: entailment / neutral / contradiction (fine-tune)


def nli_labels(unsupported: np.ndarray, kinds: Sequence[str | None] | None) -> list[str]:
    """The NLI training label of each gold item (module doc): ``kinds[i]`` the gold's own
    label of an unsupported item (``contradicted`` / ``not_enough_info``) where it has one."""
    out = []
    for i, u in enumerate(np.asarray(unsupported)):
        kind = None if kinds is None else kinds[i]
        if not u:
            out.append("entailment")
        else:
            out.append("contradiction" if kind == "contradicted" else "neutral")
    return out


def _has_signals(verifier: Any) -> bool:
    return hasattr(verifier, "_pair_probs") and "entailment" in getattr(verifier, "labels", ())


def recombine_judge(verifier: Any, pairs: GoldPairs):
    """fit_predict of the ``recombine`` fold judges (module doc). The parent's signals over
    every window of every item are computed once; each fold refits four numbers."""
    from kit.guard.training.adapt import window_signals

    n_items = len(pairs.claims)
    if _has_signals(verifier):
        sig = window_signals(verifier, pairs.claims, pairs.passages)
        x, owner, rows, feats = sig.x, sig.owner, sig.rows, sig.features
    else:  # one score per item: each item is its own single window
        s = np.asarray(verifier.score(pairs.claims, pairs.passages), dtype=float)
        x, owner, rows, feats = s[:, None], np.arange(n_items), np.arange(n_items), SCORE_ONLY
    supported = 1.0 - np.asarray(pairs.unsupported, dtype=float)

    def fit_predict(train: np.ndarray, items: np.ndarray) -> np.ndarray:
        r = rows[pairs.gold_index[train]]
        keep = r >= 0
        rule = fit_rule(x[r[keep]], supported[train][keep], feats)
        return 1.0 - pair_scores(rule, x, owner, n_items)[items]

    return fit_predict


def fine_tune_judge(parent_folder: Any, pairs: GoldPairs, settings: Any):
    """fit_predict of the ``fine-tune`` fold judges (module doc): each fold fine-tunes the
    parent on its training gold items (on the window the parent scores highest, as
    ``kit guard adapt`` trains) and scores the asked items under the fine-tuned rule."""
    from kit.guard.training.adapt import best_window_text, fold_scores, load_parent
    from kit.guard.verifiers.load import load_verifier

    parent = load_parent(parent_folder, "fine-tune")
    parent_v = load_verifier(parent.folder)
    gold_claims = [pairs.claims[i] for i in pairs.gold_index]
    gold_passages = [pairs.passages[i] for i in pairs.gold_index]
    train_passage = [
        best_window_text(parent_v, c, q) for c, q in zip(gold_claims, gold_passages, strict=True)
    ]
    gold = pd.DataFrame(
        {
            "claim": gold_claims,
            "passage": gold_passages,
            "train_passage": train_passage,
            "label": pairs.nli_labels,
        }
    )

    def fit_predict(train: np.ndarray, items: np.ndarray) -> np.ndarray:
        asked = pd.DataFrame(
            {
                "claim": [pairs.claims[i] for i in items],
                "passage": [pairs.passages[i] for i in items],
            }
        )
        scores = fold_scores(parent, settings, gold.iloc[train], asked)
        return 1.0 - np.asarray(scores[parent.tuned_rule], dtype=float)

    return fit_predict
