"""The frozen prompt of an LLM verifier and how its answer becomes a score (pure).

An LLM verifier (``kind: llm`` cards, :mod:`kit.guard.verifiers.llm.verifier`) asks a chat model one
yes / no question per (claim, window). Two answer rules, named on the card:

* ``logprobs`` -- s = P(yes) / (P(yes) + P(no)) over the top log-probabilities of the first
  answer token (:func:`yes_probability`): every listed token whose text, stripped of
  whitespace, punctuation and sub-word markers and lower-cased, is "yes" adds its probability
  to P(yes), likewise "no". Neither among the listed tokens: the model gave no yes / no answer
  (a refusal), and the pair has no score.
* ``samples`` -- for an endpoint that returns no log-probabilities: k answers sampled at the
  card's temperature (seeds 0 .. k-1, where the endpoint honours a seed), s = the share of
  "yes" among the answers that are yes or no (:func:`yes_share`); none of them: no score.

A failed or refused call is never turned into a number: these functions return None for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from kit.core.errors import ConfigError
from kit.guard.verifiers.llm.instrument import answer_of

CLAIM_SLOT = "{claim}"
PASSAGE_SLOT = "{passage}"
ANSWERS = ("yes", "no")
DEFAULT_TEMPLATE = (
    "You check citations in scientific writing. Decide whether the passage supports the "
    "claim. Answer yes only if the passage states the claim or directly implies it; answer no "
    "if the passage contradicts the claim, is about something else, or does not say enough.\n"
    "\n"
    "Claim: {claim}\n"
    "\n"
    "Passage: {passage}\n"
    "\n"
    "Does the passage support the claim? Answer with one word: yes or no."
)
LOGPROBS_RULE = (
    "s = P(yes) / (P(yes) + P(no)) from the top log-probabilities of the first answer token "
    "(tokens matched case-insensitively after stripping whitespace and punctuation); no yes / "
    "no token among them: no score (refused)"
)


def samples_rule(k: int, temperature: float) -> str:
    return (
        f"s = share of yes among {k} sampled answers at temperature {temperature:g} (seeds 0.."
        f"{k - 1}; answers neither yes nor no are left out; none yes or no: no score (refused))"
    )


def check_template(template: str) -> str:
    """``template`` itself when it holds each of {claim} and {passage} exactly once."""
    for slot in (CLAIM_SLOT, PASSAGE_SLOT):
        if template.count(slot) != 1:
            raise ConfigError(
                "bad_prompt",
                f"the prompt template must hold {slot} exactly once; it holds it "
                f"{template.count(slot)} time(s)",
            )
    return template


def render(template: str, claim: str, passage: str) -> str:
    """The prompt of one (claim, window): each slot replaced once, nothing else interpreted
    (a brace in a claim or passage is text)."""
    head, tail = template.split(CLAIM_SLOT, 1)
    if PASSAGE_SLOT in head:
        a, b = head.split(PASSAGE_SLOT, 1)
        return a + passage + b + claim + tail
    a, b = tail.split(PASSAGE_SLOT, 1)
    return head + claim + a + passage + b


def yes_probability(top: Iterable[Mapping[str, Any]]) -> float | None:
    """P(yes) / (P(yes) + P(no)) over one position's top log-probabilities; None when neither
    answer is among them. Several tokens of one answer ("Yes", " yes") add up."""
    p = dict.fromkeys(ANSWERS, 0.0)
    for entry in top:
        ans = answer_of(str(entry.get("token", "")))
        if ans in p:
            lp = float(entry.get("logprob", -math.inf))
            p[ans] += math.exp(lp) if math.isfinite(lp) else 0.0
    total = p["yes"] + p["no"]
    if not total > 0:
        return None
    return p["yes"] / total


def yes_share(answers: Iterable[str]) -> float | None:
    """Share of yes among the answers whose first word is yes or no; None when there is none."""
    words = [answer_of((a.split() or [""])[0]) for a in answers]
    votes = [w for w in words if w in ANSWERS]
    if not votes:
        return None
    return sum(w == "yes" for w in votes) / len(votes)
