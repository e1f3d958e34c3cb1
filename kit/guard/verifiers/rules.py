"""Scoring rules of a cross-encoder verifier: the support score from class probabilities (pure).

:func:`class_score` (``entailment``, ``entailment_minus_contradiction``), :func:`two_signal_score`
(P(entailment) with the card's relatedness bi-encoder), :func:`softmax`; the ``fitted`` rule
(weights fitted on a lab's sample) is :mod:`kit.guard.verifiers.fitted_rule`. docs/architecture.md,
"Citation guard".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def class_score(probs: np.ndarray, labels: Sequence[str], scoring: str) -> np.ndarray:
    """The support score s in [0, 1] from class probabilities [n, C] under a card's scoring rule.

    ``entailment``: s = P(entailment). ``entailment_minus_contradiction``:
    s = (1 + P(entailment) - P(contradiction)) / 2, so a contradicted citation scores below a
    merely unrelated one (a model with no contradiction class reduces to P(entailment)).
    ``two_signal`` needs the relatedness score as well (:func:`two_signal_score`); its class
    part, returned here, is P(entailment).
    """
    probs = np.asarray(probs, dtype=np.float64)
    e = probs[:, list(labels).index("entailment")]
    if scoring in ("entailment", "two_signal") or "contradiction" not in labels:
        return e
    c = probs[:, list(labels).index("contradiction")]
    return np.clip((1.0 + e - c) / 2.0, 0.0, 1.0)


def two_signal_score(p_entailment: np.ndarray, relatedness: np.ndarray) -> np.ndarray:
    """The ``two_signal`` rule for one (claim, window): s = (P(entailment) + r) / 2 in [0, 1].

    r is the relatedness bi-encoder's score clip((1 + cos) / 2, 0, 1) of the same (claim,
    window) and P(entailment) the cross-encoder's. Neither signal is enough alone: similarity
    cannot see polarity ("not" barely moves a cosine), and a cross-encoder trained on other
    sources judges an off-topic or unseen-domain passage poorly where cosine does not. The
    weights are fixed (no parameter is fitted); the card's validation says whether the rule
    was chosen (:func:`kit.guard.training.nli_verifier.finish_card`).
    """
    p = np.asarray(p_entailment, dtype=np.float64)
    r = np.asarray(relatedness, dtype=np.float64)
    return np.clip((p + r) / 2.0, 0.0, 1.0)


def softmax(logits: np.ndarray) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float64)
    if logits.shape[1] == 1:  # one logit: P(entailment) = sigmoid, P(other) = 1 - that
        p = 1.0 / (1.0 + np.exp(-logits[:, 0]))
        return np.stack([p, 1.0 - p], axis=1)
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


CLASS_RULES = ("entailment", "entailment_minus_contradiction")  # from class probabilities alone


FITTED_RULE = "fitted"  # weights fitted on a lab's sample by `kit guard adapt` (extra.fitted)


SCORING_RULES = (*CLASS_RULES, "two_signal", FITTED_RULE)  # two_signal: + the relatedness model
