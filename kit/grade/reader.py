"""Reading grade inputs from files (the I/O edge of kit.grade): checklists, caches. Runs files
are read by :func:`kit.runs.reader.read_runs` (v1 and v2 records), the one runs reader.

Every problem becomes an :class:`~kit.core.errors.InputError` naming file, line and field -- or, with
``on_error="skip"``, a counted skip row (line, reason, field, message); never a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kit.core import boundary


def read_json_file(path: str | Path) -> Any:
    """A JSON file through :mod:`kit.core.boundary` (UTF-8, finite numbers, bounded depth)."""
    return boundary.read_json(path)


def read_checklists(path: str | Path) -> dict[str, Any]:
    """Frozen checklists from a JSONL file, keyed by task id; a second checklist for the same
    task is an InputError naming the line, a file without any an InputError naming the file."""
    from kit.core.errors import InputError, Location
    from kit.grade.checklist import checklist_from_dict

    out: dict[str, Any] = {}
    for line, obj in boundary.read_jsonl(path):
        cl = checklist_from_dict(obj, str(path), line)
        if cl.task_id in out:
            raise InputError(
                "duplicate_task",
                f"a second checklist for task {cl.task_id!r}",
                where=Location(str(path), line, "task_id"),
            )
        out[cl.task_id] = cl
    if not out:
        raise InputError(
            "empty_file", "no checklist in the file (only blank lines)", where=Location(str(path))
        )
    return out
