"""Reading agent-run files, format v1 and v2 alike (the I/O edge of :mod:`kit.runs`).

One reader for ``kit audit`` and ``kit grade``: a JSONL file whose lines are v1 records
(:func:`kit.runs.v1.run_from_dict`) or v2 records (:func:`kit.runs.v2.run_v2_from_dict`),
told apart by the ``format_version`` field, all returned as the audit's
:class:`~kit.runs.model.AgentRun`. Every problem becomes an :class:`~kit.core.errors.InputError`
naming file, line and field (the CLI's exit 2) -- or, with ``on_error="skip"``, a counted skip.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.core import boundary
from kit.core.errors import ConfigError, InputError, Location
from kit.runs.model import DEFAULT_MAX_ANSWER_CHARS, AgentRun
from kit.runs.v1 import run_from_dict


def run_from_record(
    obj: Any, source: str, line: int, max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS
) -> AgentRun:
    """A v2 record when ``obj`` carries ``format_version`` (which must be 2), else v1."""
    if isinstance(obj, dict) and "format_version" in obj:
        from kit.runs.v2 import FORMAT_VERSION, run_v2_from_dict

        if obj["format_version"] != FORMAT_VERSION:
            raise InputError(
                "unknown_format_version",
                f"format_version {obj['format_version']!r} is not one this kit reads (1 has no "
                f"format_version field; {FORMAT_VERSION})",
                where=Location(source, line, "format_version"),
            )
        return run_v2_from_dict(obj, source, line, max_answer_chars)
    return run_from_dict(obj, source, line, max_answer_chars)


@dataclass(frozen=True)
class Skip:
    line: int
    reason: str
    field: str
    message: str


@dataclass(frozen=True)
class RunsRead:
    source: str
    runs: tuple[AgentRun, ...]
    skipped: tuple[Skip, ...]


def read_runs(
    path: str | Path,
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
    on_error: str = "raise",
) -> RunsRead:
    """Read an agent-runs JSONL file: each line a v1 record (``schemas/json/agent_run.schema.json``)
    or a v2 record (``agent_run.v2.schema.json``, a line with ``format_version``), in any mix.

    Blank lines are ignored. Non-UTF-8 bytes, invalid JSON, NaN/Infinity anywhere, nesting
    deeper than :data:`kit.core.boundary.MAX_DEPTH`, a missing or ill-typed field, an
    answer over ``max_answer_chars`` and a duplicate ``run_id`` are each an error naming the
    line and field (``on_error="raise"``) or a counted skip (``on_error="skip"``; the first
    occurrence of a duplicated run_id is kept, later ones skipped). A file without a single
    record (empty, or blank lines only) is refused naming the file.
    """
    if on_error not in ("raise", "skip"):
        raise ConfigError("bad_parameter", f"on_error must be 'raise' or 'skip'; got {on_error!r}")
    p = Path(path)
    src = str(p)
    runs: list[AgentRun] = []
    skipped: list[Skip] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(boundary.file_lines(p), start=1):
        if not raw.strip():
            continue
        try:
            obj = boundary.parse_json_line(raw, src, i)
            run = run_from_record(obj, src, i, max_answer_chars)
            if run.run_id in seen:
                raise InputError(
                    "duplicate_run_id",
                    f"run_id {run.run_id!r} already used on line {seen[run.run_id]}",
                    where=Location(src, i, "run_id"),
                )
        except InputError as err:
            if on_error == "raise":
                raise
            skipped.append(Skip(i, err.reason, err.where.column or "", err.message))
            continue
        seen[run.run_id] = i
        runs.append(run)
    if not runs and not skipped:
        raise InputError("empty_file", "no run in the file (only blank lines)", where=Location(src))
    return RunsRead(src, tuple(runs), tuple(skipped))
