"""`kit grade`: checklist grading, citation audit, behaviour, replay cache, planted audit.

docs/architecture.md, "Grading"; seed 002 (OpenBioRQ). Each subcommand reads its inputs, calls the
pure core in kit.grade, and prints or writes one table (--format, --out). Exit status: 0 ok; 1 a
check ran and failed (replay misses, a planted rate outside its interval); 2 bad input or
configuration.
"""

from __future__ import annotations

import click

from kit.commands.grade.checklists import checklist_cmd, frozen_core_cmd, judge_cmd
from kit.commands.grade.citations import audit_cmd
from kit.commands.grade.llm_judge import import_judge_cmd, judge_swap_cmd, validate_judge_cmd
from kit.commands.grade.planted import planted_cmd
from kit.commands.grade.replay import replay
from kit.commands.grade.runs import behaviour_cmd, runs_cmd


@click.group()
def grade() -> None:
    """Grade agent runs: frozen checklists, two-level citation audit, behaviour, replay cache.

    \b
    Examples:
      kit grade runs examples/grade/runs.jsonl
      kit grade judge examples/grade/runs.jsonl --checklists examples/grade/checklists.jsonl --out verdicts.csv
      kit grade checklist verdicts.csv --checklists examples/grade/checklists.jsonl --rates
      kit grade import-judge --base-url http://127.0.0.1:8000/v1 --model NAME --out data/judge
      kit grade judge-swap lexical.csv llm.csv --checklists examples/grade/checklists.jsonl --out swap/
      kit grade audit-citations examples/grade/runs.jsonl --catalog data/prepared/catalog.duckdb
      kit grade behaviour examples/grade/runs.jsonl --format markdown
      kit grade replay check examples/grade/runs.jsonl --cache examples/grade/cache.jsonl
      kit grade planted --out data/planted --seed 0
    """


for _command in (
    runs_cmd,
    judge_cmd,
    checklist_cmd,
    audit_cmd,
    behaviour_cmd,
    replay,
    frozen_core_cmd,
    planted_cmd,
    import_judge_cmd,
    judge_swap_cmd,
    validate_judge_cmd,
):
    grade.add_command(_command)
