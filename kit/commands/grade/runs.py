"""`kit grade runs` and `kit grade behaviour`: a runs file listed, checked, and its behaviour rates.

docs/architecture.md, "Grading"; the group is assembled in kit/commands/grade/__init__.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from kit.commands.grading_options import max_answer_chars_option, skip_bad_option
from kit.commands.options import PathDefault, echo_table, table_file_option, table_out_format_option
from kit.commands.sealed import sealed_file
from kit.core import atomic
from kit.core.errors import ConfigError
from kit.grade.behaviour import behaviour_rates, run_behaviour, run_list
from kit.registry.catalog import DEFAULT_DB
from kit.runs.reader import RunsRead, read_runs


def emit(frame: Any, schema: str, fmt: str | None, out: Path | None, title: str) -> None:
    """Validate ``frame`` against ``schemas/<schema>.yaml``, then print or write it (the
    one-line note of a written file goes to stderr)."""
    echo_table(frame, schema, fmt, out, title, where=f"<{schema}>", note_err=True)


def read_runs_reporting(path: Path, max_chars: int, skip_bad: bool) -> RunsRead:
    """The runs of ``path``; each skipped line (``--skip-bad``) named on stderr."""
    res = read_runs(path, max_chars, "skip" if skip_bad else "raise")
    for s in res.skipped:
        click.echo(
            f"skipped {path}, row {s.line}, column '{s.field}': [{s.reason}] {s.message}", err=True
        )
    if res.skipped:
        click.echo(f"{len(res.skipped)} line(s) skipped, {len(res.runs)} run(s) read", err=True)
    return res


@click.command("runs")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@max_answer_chars_option
@skip_bad_option
@click.option(
    "--guard-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the guard input (answer_id, answer, passages) as JSONL; passages from --catalog.",
)
@click.option(
    "--catalog",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DB,
    show_default=True,
    cls=PathDefault,
    help="The DuckDB catalog (kit db build): --guard-out takes cited passages from it.",
)
@table_out_format_option
@table_file_option
@sealed_file("out", kind="grade-runs", also=("guard_out",))
def runs_cmd(
    runs: Path,
    max_answer_chars: int,
    skip_bad: bool,
    guard_out: Path | None,
    catalog: Path,
    fmt: str | None,
    out: Path | None,
) -> None:
    """Validate RUNS, a runs JSONL file (schemas/json/agent_run.schema.json), and list its runs.

    Errors name the file, line and field (bad JSON, non-UTF-8, missing answer, duplicate
    run_id, an answer over --max-answer-chars). --guard-out converts the runs to the citation
    guard's input records.

    Example: kit grade runs examples/grade/runs.jsonl --format csv
    """
    res = read_runs_reporting(runs, max_answer_chars, skip_bad)
    frame = run_list(res.runs)
    if guard_out is not None:
        from kit.grade.corpus import CatalogPassages, pmid_lookup
        from kit.runs.v1 import to_guard_record

        texts = CatalogPassages(catalog).all_texts("PMID")
        lines = [
            json.dumps(to_guard_record(r, pmid_lookup(texts)), sort_keys=True)
            for r in sorted(res.runs, key=lambda r: r.run_id)
        ]
        atomic.write_text(guard_out, "".join(x + "\n" for x in lines))
        click.echo(f"guard input: {len(lines)} records -> {guard_out}", err=True)
    emit(frame, "grade_runs", fmt, out, "runs")


@click.command("behaviour")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@max_answer_chars_option
@skip_bad_option
@table_out_format_option
@table_file_option
@sealed_file("out", kind="grade-behaviour")
def behaviour_cmd(
    runs: Path, max_answer_chars: int, skip_bad: bool, fmt: str | None, out: Path | None
) -> None:
    """Zero-tool, non-attempt and cite rates and tool calls per answer of RUNS (a runs JSONL
    file), by model x difficulty.

    Tool-disabled runs (tools_enabled=false) form their own arm ('no_tools'); their zero-tool
    rate is undefined (empty), never counted as an agent that skipped its tools.

    Example: kit grade behaviour runs.jsonl --format markdown
    """
    res = read_runs_reporting(runs, max_answer_chars, skip_bad)
    if not res.runs:
        raise ConfigError("no_runs", f"{runs}: no runs to summarise")
    emit(behaviour_rates(run_behaviour(res.runs)), "grade_behaviour_rates", fmt, out, "behaviour")
