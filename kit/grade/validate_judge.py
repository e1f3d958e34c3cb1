"""`kit grade validate-judge`: an LLM checklist judge validated against human verdicts (the shell).

docs/architecture.md, "Instruments and gold", *validated before trust*, for the checklist judge: the runs
that people graded are graded by the judge twice -- each time a fresh
:class:`kit.grade.llm_judge.LlmJudge` with the score store bypassed (``store_root=None``) -- and
the first pass is compared with the people's verdicts exactly as a judge swap compares two
judges (:func:`kit.grade.judge_swap.judge_swap`, judge A = the instrument, B = the people):
per criterion (met vs not; met or partial vs not_met) and per (model, task) solve label, the base
rates beside Cohen's kappa, Gwet's AC1 and the positive- / negative-specific agreements with
bootstrap CIs (over answers for the criterion levels). Self-consistency: the share of the
criterion verdicts (met / partial / not_met) that differ between the two passes. Cost: the first
pass's seconds per verdict, requests, retries and tokens from the API's usage field. The pure
statistics live in :mod:`kit.guard.evaluation.validation`; the card folder is written by
:func:`kit.guard.verifiers.validate_card.write_validated_card`.

GOLD is a verdict table (schemas/grade_verdicts.yaml) of one judge (the people), covering
whole checklists of the (model, task) pairs it grades (a checklist score needs every criterion);
its pairs without a run in RUNS are counted and left out.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core.errors import InputError, Location
from kit.grade.checklist import Checklist
from kit.grade.judge import NO_TOOLS_SUFFIX, judge_runs
from kit.runs.model import AgentRun

UNIT = "(model, task, criterion) verdicts"
KEYS = ["model", "task_id", "criterion_id"]


def _entry(run: AgentRun) -> str:
    return run.model if run.tools_enabled else f"{run.model} {NO_TOOLS_SUFFIX}"


def one_pass(
    card: Mapping[str, Any], checklists: Mapping[str, Checklist], runs: Sequence[AgentRun]
) -> tuple[pd.DataFrame, float, dict[str, int]]:
    """Grade ``runs`` once with a fresh, store-less judge: (verdicts, seconds, usage)."""
    from kit.grade.llm_judge import LlmJudge

    judge = LlmJudge(dict(card), None)
    try:
        t0 = time.perf_counter()
        frame, _ = judge_runs(checklists, runs, str(card["name"]), instrument=judge)
        seconds = time.perf_counter() - t0
    finally:
        judge.close()
    return frame, seconds, judge.usage()


def validate_judge(
    folder: Path,
    runs: Sequence[AgentRun],
    checklists: Mapping[str, Checklist],
    gold: Path,
    threshold: float,
    n_boot: int,
    seed: int,
    level: float = 0.95,
) -> tuple[dict[str, Any], dict[str, Any], int]:
    """(the judge card with its validation block, the block, the gold's (model, task) pairs
    without a run) for the llm-judge card at ``folder`` validated on the human verdicts
    ``gold`` of ``runs``."""
    from kit import __version__
    from kit.core.schema import read_table
    from kit.grade.judge_swap import judge_name, judge_swap
    from kit.grade.llm_judge import load_judge_card
    from kit.guard.evaluation.validation import (
        agreement_rows,
        cost_block,
        self_consistency,
        validation_entry,
        with_validation,
    )
    from kit.guard.verifiers.validate_card import gold_block, instrument_of

    card = load_judge_card(folder)
    human = read_table(gold, "grade_verdicts")
    people = judge_name(human, str(gold))
    pairs = set(zip(human["model"].astype(str), human["task_id"].astype(str), strict=True))
    chosen = [r for r in runs if (_entry(r), r.task_id) in pairs]
    if not chosen:
        raise InputError(
            "no_graded_runs",
            f"none of the {len(pairs)} (model, task) pairs {people!r} graded has a run in RUNS "
            "(model, or 'MODEL [no tools]' for a tool-disabled run, and task_id must match)",
            where=Location(str(gold), column="model"),
        )
    first, seconds, usage = one_pass(card, checklists, chosen)
    second, _, _ = one_pass(card, checklists, chosen)
    rng = np.random.default_rng(seed)
    swap = judge_swap(
        checklists,
        first,
        human,
        rng,
        threshold,
        n_boot,
        level,
        names=(str(folder), str(gold)),
    )
    both = first[[*KEYS, "verdict"]].merge(
        second[[*KEYS, "verdict"]], on=KEYS, suffixes=("_1", "_2"), validate="one_to_one"
    )
    consistency = self_consistency(
        both["verdict_1"].tolist(), both["verdict_2"].tolist(), level
    ) | {
        "method": "every criterion of the graded runs judged twice by two fresh judges, the "
        "score store bypassed both times; a flip = the verdict (met / partial / not_met) differs"
    }
    graded = first[KEYS].merge(human[KEYS], on=KEYS)
    entry = validation_entry(
        instrument=instrument_of(card),
        gold=gold_block(gold, len(human), len(graded), UNIT, clusters="answers"),
        decision=f"criterion_met: verdict met; criterion_credit: met or partial; solved: "
        f"checklist score >= {threshold:g} (people's verdicts in {gold.name}, judge {people!r})",
        agreement=agreement_rows(swap.agreement.to_dict("records")),
        consistency=consistency,
        cost=cost_block(
            len(first),
            seconds,
            {k: v for k, v in usage.items() if k != "questions"},
            usage["questions"],
            "(question, criterion, answer) questions",
        ),
        missing=(0, {}),
        parameters={"threshold": threshold, "n_boot": n_boot, "seed": seed, "level": level},
        kit_version=__version__,
    )
    return with_validation(card, entry), entry, swap.only_b
