"""`kit grade replay`: the tool-response replay cache (request keys, lookups, coverage).

docs/architecture.md, "Grading"; the group is assembled in kit/commands/grade/__init__.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from kit.commands.grade.runs import emit, read_runs_reporting
from kit.commands.grading_options import max_answer_chars_option, skip_bad_option
from kit.commands.options import table_file_option, table_out_format_option
from kit.commands.sealed import sealed_file
from kit.core import boundary
from kit.core.errors import ConfigError


@click.group("replay")
def replay() -> None:
    """Tool-response replay cache: request keys, lookups, coverage of a runs file.

    \b
    Examples:
      kit grade replay key pubmed_search '{"q": "aspirin"}'
      kit grade replay get --cache cache.jsonl pubmed_search '{"q": "aspirin"}'
      kit grade replay check runs.jsonl --cache cache.jsonl
    """


def _args(text: str) -> dict[str, Any]:
    obj = boundary.parse_json(text, "ARGUMENTS")
    if not isinstance(obj, dict):
        raise ConfigError("bad_parameter", "ARGUMENTS must be a JSON object")
    return obj


@replay.command("key")
@click.argument("tool")
@click.argument("arguments")
def replay_key_cmd(tool: str, arguments: str) -> None:
    """Print the request key of TOOL called with ARGUMENTS (a JSON object): sha256 of canonical
    JSON {"arguments": ..., "tool": ...}.

    Example: kit grade replay key pubmed_search '{"q": "aspirin"}'
    """
    from kit.grade.replay import request_key

    click.echo(request_key(tool, _args(arguments)))


@replay.command("get")
@click.option(
    "--cache",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The replay cache JSONL (recorded tool responses).",
)
@click.argument("tool")
@click.argument("arguments")
def replay_get_cmd(cache: Path, tool: str, arguments: str) -> None:
    """Answer one request, TOOL with ARGUMENTS (a JSON object), from the cache only (replay
    mode); a miss is an error (exit 2).

    Example: kit grade replay get --cache cache.jsonl pubmed_search '{"q": "aspirin"}'
    """
    from kit.grade.replay import ReplayTools, load_cache

    tools = ReplayTools("replay", load_cache(cache))
    click.echo(json.dumps(tools(tool, _args(arguments)), sort_keys=True, ensure_ascii=False))


@replay.command("check")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--cache",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The replay cache JSONL (recorded tool responses).",
)
@max_answer_chars_option
@skip_bad_option
@table_out_format_option
@table_file_option
@sealed_file("out", kind="grade-replay-check")
def replay_check_cmd(
    runs: Path,
    cache: Path,
    max_answer_chars: int,
    skip_bad: bool,
    fmt: str | None,
    out: Path | None,
) -> None:
    """Is every recorded tool call of RUNS answerable from the cache (and its response hash
    unchanged)? Exit 1 naming the first missing request when not.

    Example: kit grade replay check runs.jsonl --cache cache.jsonl
    """
    from kit.grade.replay import load_cache, replay_coverage

    res = read_runs_reporting(runs, max_answer_chars, skip_bad)
    cov = replay_coverage(res.runs, load_cache(cache))
    emit(cov, "grade_replay_coverage", fmt, out, "replay coverage")
    miss = cov[~cov["in_cache"]]
    bad = cov[cov["response_match"].eq(False)]
    if len(miss) or len(bad):
        if len(miss):
            r = miss.iloc[0]
            click.echo(
                f"replay check failed: {len(miss)} call(s) not in the cache; first: run "
                f"{r['run_id']} call {r['call_index']} tool {r['tool']!r} key {r['key']}",
                err=True,
            )
        if len(bad):
            click.echo(
                f"replay check failed: {len(bad)} cached response(s) differ from the trace's hash",
                err=True,
            )
        click.get_current_context().exit(1)
    click.echo(f"replay check ok: {len(cov)} call(s), all in the cache", err=True)
