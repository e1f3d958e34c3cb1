"""Reading grade inputs from files (the I/O edge of kit.grade): checklists, caches; runs JSONL
through :func:`kit.runs.reader.read_runs` (v1 and v2 records, re-exported here).

Every problem becomes an :class:`~kit.errors.InputError` naming file, line and field -- or, with
``on_error="skip"``, a counted skip row (line, reason, field, message); never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kit.errors import InputError, Location
from kit.runs.reader import RunsRead, Skip, file_lines, read_runs

__all__ = [
    "RunsRead",
    "Skip",
    "read_checklists",
    "read_json_file",
    "read_jsonl_objects",
    "read_runs",
]


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
    for i, raw in enumerate(file_lines(p), start=1):
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
