"""The frozen prompt of an LLM checklist judge and how its reply becomes a verdict (pure).

Seed 002 (OpenBioRQ), Section "Checklist-based grading": a judge gives each frozen checklist
criterion a verdict met / partial / not_met. An LLM judge (``kind: llm-judge`` cards,
:mod:`kit.grade.llm_judge`) is asked one question per (question, criterion, answer) at
temperature 0 and replies with the verdict as its first word, then a short reason.

* verdict (:func:`reply_verdict`): the reply's first word, case-insensitive, after leading
  whitespace and punctuation: ``met``, ``partial`` (or ``partially``), ``not_met`` (also
  spelled ``not met`` / ``not-met``). Anything else is no verdict (counted, never guessed).
* reason: the rest of the reply, without the leading separator (punctuation such as ``:``,
  ``-``, ``**``), a final full stop and repeated whitespace, cut at :data:`REASON_CHARS`
  characters.
* evidence (``logprobs`` answer rule only, :func:`label_probabilities`): on the first
  generated token that is more than whitespace / punctuation, every listed token whose
  stripped, lower-cased text is a prefix of at least 3 letters of one label (``met``,
  ``par``..``partial``, ``not``..``not_met``) adds its probability to that label; evidence =
  P(verdict) / (P(met) + P(partial) + P(not_met)). None listed: no evidence (the verdict stands,
  read from the text).

The verdict of a must_avoid criterion records whether the prohibited content is *present*
(kit.grade.checklist inverts its polarity when scoring): the criterion's text describes that
content, and "met" means the answer does what the text describes, for every kind alike.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Iterable, Mapping

from kit.core.errors import ConfigError
from kit.guard.verifiers.llm.instrument import answer_of

SLOTS = ("{question}", "{criterion}", "{answer}")
LABELS = ("met", "partial", "not_met")
REASON_CHARS = 200
DEFAULT_TEMPLATE = (
    "You grade an answer to a research question against one criterion of a frozen checklist. "
    "Decide whether the answer does what the criterion describes.\n"
    "\n"
    "Question: {question}\n"
    "\n"
    "Criterion: {criterion}\n"
    "\n"
    "Answer: {answer}\n"
    "\n"
    "Reply with one word first -- met (the answer fully does what the criterion describes), "
    "partial (it does so only in part) or not_met (it does not) -- then a colon and one short "
    "sentence saying why."
)
VERDICT_RULE = (
    "verdict = the first word of the temperature-0 reply (met / partial / not_met, "
    "case-insensitive; 'not met' and 'partially' accepted); any other reply: no verdict "
    f"(counted); reason = the rest of the reply, at most {REASON_CHARS} characters"
)
LOGPROBS_RULE = (
    VERDICT_RULE + "; evidence = P(verdict) / (P(met) + P(partial) + P(not_met)) from the top "
    "log-probabilities of the first answer token (a token counts for a label when its stripped, "
    "lower-cased text is a prefix of 3+ letters of it)"
)
_FIRST = re.compile(r"^[\W_]*(not[\s_-]*met|partial(?:ly)?|met)\b(.*)$", re.I | re.S)
_LEAD = string.whitespace + string.punctuation + "\u2013\u2014"  # separators before a reason
_TRAIL = string.whitespace + "."


def check_template(template: str) -> str:
    """``template`` itself when it holds each of {question}, {criterion}, {answer} once."""
    for slot in SLOTS:
        if template.count(slot) != 1:
            raise ConfigError(
                "bad_prompt",
                f"the judge's prompt template must hold {slot} exactly once; it holds it "
                f"{template.count(slot)} time(s)",
            )
    return template


def render(template: str, question: str, criterion: str, answer: str) -> str:
    """The prompt of one (question, criterion, answer): each slot replaced once, nothing else
    interpreted (a brace in an answer is text)."""
    values = dict(zip(SLOTS, (question, criterion, answer), strict=True))
    parts = re.split("(" + "|".join(re.escape(s) for s in SLOTS) + ")", template)
    return "".join(values.get(p, p) for p in parts)


def reply_verdict(text: str) -> tuple[str, str] | None:
    """(verdict, reason) read from a reply; None when its first word is no verdict."""
    m = _FIRST.match(text or "")
    if m is None:
        return None
    word = m.group(1).lower()
    verdict = "met" if word == "met" else "partial" if word.startswith("partial") else "not_met"
    reason = " ".join(m.group(2).lstrip(_LEAD).rstrip(_TRAIL).split())
    return verdict, reason[:REASON_CHARS]


def _label_of(token: str) -> str | None:
    t = answer_of(token)
    if len(t) < 3:
        return None
    hits = [lab for lab in LABELS if lab.startswith(t)]
    return hits[0] if len(hits) == 1 else None


def label_probabilities(top: Iterable[Mapping[str, object]]) -> tuple[float, float, float] | None:
    """(P(met), P(partial), P(not_met)) normalised over the three, from one position's top
    log-probabilities; None when no listed token reads as a label."""
    p = dict.fromkeys(LABELS, 0.0)
    for entry in top:
        lab = _label_of(str(entry.get("token", "")))
        if lab is not None:
            lp = float(entry.get("logprob", -math.inf))  # type: ignore[arg-type]
            p[lab] += math.exp(lp) if math.isfinite(lp) else 0.0
    total = sum(p.values())
    if not total > 0:
        return None
    return tuple(p[lab] / total for lab in LABELS)  # type: ignore[return-value]
