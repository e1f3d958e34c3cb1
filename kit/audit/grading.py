"""Stages: checklist grading (imported judge verdicts, the built-in lexical judge, or an LLM
judge selected by card) and behaviour from the traces (pure apart from the injected passage
lookup and an LLM judge's endpoint and score store)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from kit.runs.model import AgentRun


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
    judge_spec: str = "lexical",
    store_root: Path | None = None,
) -> Grading:
    """Score the checklists (imported ``verdicts``, else the judge ``judge_spec`` names: the
    built-in lexical judge over ``texts``, or an LLM judge card whose verdicts go through the
    score store under ``store_root``) and read behaviour from every run."""
    from kit.grade.behaviour import run_behaviour

    scores = judge = None
    if checklists is not None:
        from kit.grade.checklist import score_verdicts

        if verdicts is None:
            from kit.grade.judge import judge_runs, open_judge

            # an unfinished run's text (a placeholder) is no answer: judged as an empty one
            answers = [r if r.completed else replace(r, answer="") for r in runs]
            if judge_spec == "lexical":
                from kit.grade.support import LexicalSupport

                lex = LexicalSupport.from_corpus(texts[k] for k in sorted(texts))
                instrument, _ = open_judge(
                    "lexical", None, scorer=lex, passage_of=lambda c: passage_of(c.id_type, c.value)
                )
                name, judge = "builtin-lexical", "builtin-lexical (kit.grade.judge rules)"
            else:
                instrument, name = open_judge(judge_spec, store_root)
                sha = instrument.spec["instrument_sha256"]  # type: ignore[attr-defined]
                judge = f"{name} (LLM checklist judge, instrument sha256 {sha[:12]})"
            try:
                verdicts, _ = judge_runs(checklists, answers, name, instrument=instrument)
            finally:
                close = getattr(instrument, "close", None)
                if close is not None:
                    close()
        else:
            judge = ",".join(sorted(set(verdicts["judge"])))
        scores = score_verdicts(checklists, verdicts)
    return Grading(scores, judge, run_behaviour(runs))
