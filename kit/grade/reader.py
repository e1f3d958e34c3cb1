"""Reading grade inputs from files (the I/O edge of kit.grade): runs JSONL, checklists, caches.

Every problem becomes an :class:`~kit.errors.InputError` naming file, line and field -- or, with
``on_error="skip"``, a counted skip row (line, reason, field, message); never a traceback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.errors import ConfigError, InputError, Location
from kit.grade.runs import DEFAULT_MAX_ANSWER_CHARS, AgentRun, run_from_dict


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


def _lines(path: Path) -> list[bytes]:
    if not path.is_file():
        raise InputError("missing_file", "file not found", where=Location(str(path)))
    return path.read_bytes().split(b"\n")


def read_runs(
    path: str | Path,
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
    on_error: str = "raise",
) -> RunsRead:
    """Read an agent-runs JSONL file (``schemas/json/agent_run.schema.json``).

    Blank lines are ignored. Non-UTF-8 bytes, invalid JSON, a missing or ill-typed field, an
    answer over ``max_answer_chars`` and a duplicate ``run_id`` are each an error naming the
    line and field (``on_error="raise"``) or a counted skip (``on_error="skip"``; the first
    occurrence of a duplicated run_id is kept, later ones skipped).
    """
    if on_error not in ("raise", "skip"):
        raise ConfigError("bad_parameter", f"on_error must be 'raise' or 'skip'; got {on_error!r}")
    p = Path(path)
    src = str(p)
    runs: list[AgentRun] = []
    skipped: list[Skip] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(_lines(p), start=1):
        if not raw.strip():
            continue
        try:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    "not_utf8",
                    f"not UTF-8 (byte {raw[exc.start]:#04x} at offset {exc.start})",
                    where=Location(src, i, "<line>"),
                ) from None
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(
                    "bad_json",
                    f"not valid JSON: {exc.msg} (char {exc.pos})",
                    where=Location(src, i, "<line>"),
                ) from None
            run = run_from_dict(obj, src, i, max_answer_chars)
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
    return RunsRead(src, tuple(runs), tuple(skipped))


def read_json_file(path: str | Path) -> Any:
    p = Path(path)
    if not p.is_file():
        raise InputError("missing_file", "file not found", where=Location(str(p)))
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(
            "not_utf8", f"not UTF-8 (offset {exc.start})", where=Location(str(p))
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            "bad_json", f"not valid JSON: {exc.msg}", where=Location(str(p), exc.lineno)
        ) from None


def read_jsonl_objects(path: str | Path) -> list[tuple[int, Any]]:
    """(line, object) for each non-blank line; errors name the line."""
    p = Path(path)
    out: list[tuple[int, Any]] = []
    for i, raw in enumerate(_lines(p), start=1):
        if not raw.strip():
            continue
        try:
            out.append((i, json.loads(raw.decode("utf-8"))))
        except UnicodeDecodeError:
            raise InputError("not_utf8", "not UTF-8", where=Location(str(p), i)) from None
        except json.JSONDecodeError as exc:
            raise InputError(
                "bad_json", f"not valid JSON: {exc.msg}", where=Location(str(p), i)
            ) from None
    return out


def read_checklists(path: str | Path) -> dict[str, Any]:
    """Frozen checklists from a JSONL file, keyed by task id; a second checklist for the same
    task is an InputError naming the line."""
    from kit.errors import InputError, Location
    from kit.grade.checklist import checklist_from_dict

    out: dict[str, Any] = {}
    for line, obj in read_jsonl_objects(path):
        cl = checklist_from_dict(obj, str(path), line)
        if cl.task_id in out:
            raise InputError(
                "duplicate_task",
                f"a second checklist for task {cl.task_id!r}",
                where=Location(str(path), line, "task_id"),
            )
        out[cl.task_id] = cl
    return out
