"""What every checklist judge takes and gives: one :class:`JudgeItem` in, one :class:`Verdict`
out (:class:`ChecklistJudge`); the lexical judge (:mod:`kit.grade.judge`) and the LLM judge
(:mod:`kit.grade.llm_judge`) both implement it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kit.grade.checklist import Criterion
from kit.runs.model import Citation


@dataclass(frozen=True)
class JudgeItem:
    """One question to a checklist judge: does ``answer`` meet ``criterion``?"""

    question: str
    criterion: Criterion
    answer: str
    cited: tuple[Citation, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """A judge's verdict on one item: met / partial / not_met, its evidence in [0, 1] (None:
    the judge gives none) and its short reason (None: the judge gives none)."""

    verdict: str
    evidence: float | None = None
    reason: str | None = None


class ChecklistJudge(Protocol):
    """Any checklist judge: one verdict per item, in order."""

    def judge(self, items: Sequence[JudgeItem]) -> list[Verdict]: ...
