"""Agent behaviour from traces: zero-tool, non-attempt, cite rate, tool calls (pure).

Seed 002 (OpenBioRQ), Appendix C.2 ("Behavioral divergence") and C.3 (no-tool ablation):

* zero-tool: a run *with tools enabled* that made no tool call (agentic collapse). A run with
  tools disabled (``tools_enabled = false``, the no-tool ablation arm) is not an agent that
  skipped its tools: such runs form their own arm, and their zero-tool rate is undefined (an
  empty cell), never 100%.
* non-attempt: the answer does not attempt the question. The paper's detector is an LLM judge;
  the kit's is declared and lexical: an answer that is empty, shorter than ``min_chars``
  characters, or matches one of :data:`NON_ATTEMPT_PATTERNS` (refusals, "unable to determine",
  "no relevant information was found"). Injectable (``is_non_attempt``) for a better detector.
* cite rate: runs that cite at least one identifier.
* tool calls per answer: mean and median number of recorded calls (enabled arm).

A run the harness did not finish (status ``error``: it failed, or ``limit``: a limit cancelled
it; :data:`kit.runs.model.RUN_STATUSES`) is counted apart (``status``, ``n_error``, ``n_limit``)
and never as a non-attempt, a zero-tool run or a run that cites: its text is no answer and its
trace stops early. The three flags are False for it and their rates are over finished runs.

Rates carry Wilson intervals (runs independent), grouped by model x difficulty bucket
(``difficulty`` of the run, or 'unlabelled') and pooled over buckets ('all').
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from kit.runs.model import AgentRun
from kit.stats.wilson import wilson_ci

NON_ATTEMPT_PATTERNS = (
    r"\b(i am|i'm) (unable|not able) to\b",
    r"\b(cannot|can't|could not|couldn't) (answer|determine|provide|find|assess)\b",
    r"\bunable to (answer|determine|provide|find|assess)\b",
    r"\bno (relevant |specific |published )?(information|evidence|data|results|studies)"
    r" (was |were )?(found|available)\b",
    r"\bi (do not|don't) know\b",
    r"\binsufficient (information|evidence|data) to (answer|determine)\b",
)
_NON_ATTEMPT = re.compile("|".join(NON_ATTEMPT_PATTERNS), re.IGNORECASE)
DEFAULT_MIN_CHARS = 40


def lexical_non_attempt(answer: str, min_chars: int = DEFAULT_MIN_CHARS) -> bool:
    """Declared lexical non-attempt detector (see module docstring)."""
    text = answer.strip()
    return len(text) < min_chars or bool(_NON_ATTEMPT.search(text))


def run_behaviour(
    runs: Sequence[AgentRun],
    is_non_attempt: Callable[[str], bool] = lexical_non_attempt,
) -> pd.DataFrame:
    """One row per run: its status and the behaviour flags every rate is computed from (the
    flags are False for a run that did not finish)."""
    rows = [
        {
            "run_id": r.run_id,
            "model": r.model,
            "task_id": r.task_id,
            "difficulty": r.difficulty or "unlabelled",
            "arm": "tools" if r.tools_enabled else "no_tools",
            "status": r.status,
            "n_tool_calls": r.n_tool_calls,
            "zero_tool": r.completed and r.tools_enabled and r.n_tool_calls == 0,
            "non_attempt": r.completed and is_non_attempt(r.answer),
            "cites": r.completed and len(r.cited) > 0,
        }
        for r in sorted(runs, key=lambda r: r.run_id)
    ]
    cols = ["run_id", "model", "task_id", "difficulty", "arm", "status", "n_tool_calls"]
    return pd.DataFrame(rows, columns=[*cols, "zero_tool", "non_attempt", "cites"])


def _rate(flags: np.ndarray, level: float) -> tuple[int, float, float, float]:
    if flags.size == 0:  # no finished run: the rate is undefined, not 0
        return 0, float("nan"), float("nan"), float("nan")
    ci = wilson_ci(int(flags.sum()), int(flags.size), level)
    return ci.k, ci.estimate, ci.lo, ci.hi


def behaviour_rates(per_run: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Rates per (model, difficulty, arm), with difficulty 'all' pooling the buckets: ``n_runs``
    every run, ``n_error`` / ``n_limit`` those the harness did not finish, the rates and tool
    calls per answer over the finished ones."""
    pooled = per_run.assign(difficulty="all")
    both = pd.concat([per_run, pooled], ignore_index=True)
    rows = []
    for (model, diff, arm), g in both.groupby(["model", "difficulty", "arm"], sort=True):
        row: dict[str, object] = {"model": model, "difficulty": diff, "arm": arm, "n_runs": len(g)}
        row["n_error"] = int((g["status"] == "error").sum())
        row["n_limit"] = int((g["status"] == "limit").sum())
        done = g[g["status"] == "ok"]
        for flag in ("zero_tool", "non_attempt", "cites"):
            k, est, lo, hi = _rate(done[flag].to_numpy(bool), level)
            undefined = flag == "zero_tool" and arm == "no_tools"
            nan = float("nan")
            row[f"{flag}_k"] = k
            row[f"{flag}_rate"] = nan if undefined else est
            row[f"{flag}_lo"] = nan if undefined else lo
            row[f"{flag}_hi"] = nan if undefined else hi
        calls = done["n_tool_calls"].to_numpy(float)
        tools = arm == "tools" and calls.size > 0
        row["tool_calls_mean"] = float(calls.mean()) if tools else float("nan")
        row["tool_calls_median"] = float(np.median(calls)) if tools else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


RUN_LIST_COLUMNS = [
    "run_id",
    "task_id",
    "model",
    "tools_enabled",
    "n_tool_calls",
    "n_cited",
    "answer_chars",
]


def run_list(runs: Sequence[AgentRun]) -> pd.DataFrame:
    """One row per run, sorted by run_id (schemas/grade_runs.yaml): `kit grade runs`."""
    return pd.DataFrame(
        [
            {
                "run_id": r.run_id,
                "task_id": r.task_id,
                "model": r.model,
                "tools_enabled": r.tools_enabled,
                "n_tool_calls": r.n_tool_calls,
                "n_cited": len(r.cited),
                "answer_chars": len(r.answer),
            }
            for r in sorted(runs, key=lambda r: r.run_id)
        ],
        columns=RUN_LIST_COLUMNS,
    )
