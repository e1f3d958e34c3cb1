"""`kit import`: runs logged by other harnesses -> run format v2 (kit.runs.importers; docs/runs.md)."""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.options import format_option
from kit.core.schema import validate_frame
from kit.core.tables import frame_of, render
from kit.runs.importers.common import ImportSummary
from kit.runs.importers.jsonl import CITED_SCHEMES

_path = click.Path(path_type=Path)
_file = click.Path(dir_okay=False, path_type=Path)
_out = click.option(
    "--out", type=_file, required=True, help="The runs JSONL to write (format v2; atomic)."
)
_limit = click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Import at most N runs (the first N samples).",
)


def _print(summary: ImportSummary, fmt: str) -> None:
    frame = validate_frame(frame_of([summary.as_row()]), "import_summary", "<import_summary>")
    click.echo(render(frame, fmt, title="import"), nl=False)
    for note in summary.notes:
        click.echo(f"note: {note}", err=True)


@click.group("import")
def import_group() -> None:
    """Import runs from the harnesses labs already use into the kit's run format v2.

    \b
    kit import inspect-ai logs/ --out runs.jsonl
    kit import lm-eval samples_pubmedqa_2026-01-01T00-00-00.jsonl --model m --out runs.jsonl
    kit import jsonl runs_raw.jsonl --map run_id=id,task_id=task,model=model,answer=output.text --out runs.jsonl
    kit audit runs.jsonl --out report/
    """


@import_group.command("inspect-ai")
@click.argument("log", type=_path)
@_out
@_limit
@format_option
def inspect_ai_cmd(log: Path, out: Path, limit: int | None, fmt: str) -> None:
    """Import LOG, an inspect_ai log (.eval or .json), or every log in a folder LOG.

    One run per sample and epoch: the final answer, tool calls with the text each tool
    returned, scores, token usage, model and metadata. Samples that errored become failed runs
    (status error), counted in the printed summary. Needs the 'import' extra.

    Example: kit import inspect-ai logs/2026-01-01_task.eval --out runs.jsonl --limit 50
    """
    from kit.runs.importers.inspect_log import import_inspect_logs

    _print(import_inspect_logs(log, out, limit), fmt)


@import_group.command("lm-eval")
@click.argument("samples", type=_file)
@_out
@click.option("--model", default=None, help="Model name [model_name of results_*.json beside].")
@click.option("--task", default=None, help="Task name [from samples_<task>_<time>.jsonl].")
@click.option(
    "--filter",
    "filter_name",
    default=None,
    help="The lm-eval filter whose responses are imported [the file's first filter].",
)
@_limit
@format_option
def lm_eval_cmd(
    samples: Path,
    out: Path,
    model: str | None,
    task: str | None,
    filter_name: str | None,
    limit: int | None,
    fmt: str,
) -> None:
    """Import SAMPLES, an lm-evaluation-harness samples file (lm-eval --log_samples).

    One run per document, for one filter (--filter; default the file's first filter, i.e.
    the task's first; the summary names it): for a multiple-choice task the chosen option
    (largest log-likelihood, lm-eval's acc rule) as the answer, else the first filtered
    response; the line's metrics as scores, doc, target, filter and hashes as metadata. A
    null filtered_resps stops the import naming file, line and field (exit 2).

    Example: kit import lm-eval out/samples_pubmedqa_2026-01-01T00-00-00.jsonl --out runs.jsonl
    """
    from kit.runs.importers.lm_eval import import_lm_eval_samples

    _print(import_lm_eval_samples(samples, out, model, task, limit, filter_name), fmt)


@import_group.command("jsonl")
@click.argument("file", type=_file)
@click.option(
    "--map",
    "mapping",
    required=True,
    help="TARGET=FIELD.PATH,...: where each run field is on a line. Required targets run_id, "
    "task_id, model (or --model), answer; optional claims, cited, scores, metadata, status "
    "(ok, error, limit), error, limit. Dots for nested keys, a number for a list item "
    "(answer=output.choices.0.text).",
)
@_out
@click.option("--model", default=None, help="Model name for every line (instead of model=).")
@click.option(
    "--id-scheme",
    "cited_scheme",
    type=click.Choice(CITED_SCHEMES),
    default=None,
    help="Scheme of the cited= identifiers [read from each identifier; 'other' if none].",
)
@_limit
@format_option
def jsonl_cmd(
    file: Path,
    mapping: str,
    out: Path,
    model: str | None,
    cited_scheme: str | None,
    limit: int | None,
    fmt: str,
) -> None:
    """Import FILE, any JSON Lines file of runs (one run per line), through a field map.

    The answer becomes the run's answer (claims and citations are read from it unless claims=
    is mapped); cited= is the run's reference list. No tool calls are imported (runs are
    written tools_enabled: false). A mapped field missing from a line stops the import naming
    file, line and field (exit 2). docs/runs.md.

    Example: kit import jsonl raw.jsonl --map run_id=id,task_id=question.id,model=model,answer=output.text,cited=refs --out runs.jsonl
    """
    from kit.runs.importers.jsonl import import_jsonl

    _print(import_jsonl(file, out, mapping, model, cited_scheme, limit), fmt)
