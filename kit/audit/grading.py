"""Stages: checklist grading (imported judge verdicts or the built-in lexical judge) and
behaviour from the traces (pure apart from the injected passage lookup)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from kit.grade.runs import AgentRun


@dataclass(frozen=True)
class Grading:
    """Checklist scores (None without checklists), the judge's name, per-run behaviour."""

    scores: pd.DataFrame | None
    judge: str | None
    behaviour: pd.DataFrame


def grade(
    runs: Sequence[AgentRun],
    checklists: Mapping[str, Any] | None,
    verdicts: pd.DataFrame | None,
    texts: Mapping[str, str],
    passage_of: Callable[[str, str], str | None],
) -> Grading:
    """Score the checklists (imported ``verdicts``, else the built-in lexical judge over
    ``texts``) and read behaviour from every run."""
    from kit.grade.behaviour import run_behaviour

    scores = judge = None
    if checklists is not None:
        from kit.grade.checklist import score_verdicts

        if verdicts is None:
            from kit.grade.judge import judge_runs
            from kit.grade.support import LexicalSupport

            lex = LexicalSupport.from_corpus(texts[k] for k in sorted(texts))
            # an unfinished run's text (a placeholder) is no answer: judged as an empty one
            answers = [r if r.completed else replace(r, answer="") for r in runs]
            verdicts, _ = judge_runs(
                checklists,
                answers,
                "builtin-lexical",
                scorer=lex,
                passage_of=lambda c: passage_of(c.id_type, c.value),
            )
            judge = "builtin-lexical (kit.grade.judge rules)"
        else:
            judge = ",".join(sorted(set(verdicts["judge"])))
        scores = score_verdicts(checklists, verdicts)
    return Grading(scores, judge, run_behaviour(runs))
