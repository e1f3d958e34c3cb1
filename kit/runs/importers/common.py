"""What the importers share: the import summary and the validated, atomic runs writer."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.core import atomic
from kit.core.errors import ConfigError, InputError, Location
from kit.runs.v2 import run_v2_from_dict


@dataclass(frozen=True)
class ImportSummary:
    """Counts of one import: samples seen in the source, runs written, runs the harness failed
    on (status error) and runs a limit cancelled (status limit); ``notes`` are printed beside
    the table (e.g. which lm-eval filter was imported)."""

    source: str
    harness: str
    samples: int
    written: int
    failed: int
    out: str
    cancelled: int = 0
    notes: tuple[str, ...] = ()

    def as_row(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "notes"}


def check_limit(limit: int | None) -> None:
    if limit is not None and limit < 1:
        raise ConfigError("bad_parameter", f"--limit must be a positive integer; got {limit}")


def write_runs(
    records: Sequence[dict[str, Any]],
    out: Path,
    source: str,
    harness: str,
    samples: int,
    notes: Sequence[str] = (),
) -> ImportSummary:
    """Check every record against the v2 reader (so what is written reads back) and write them
    as one JSONL file, atomically. A duplicate run_id is an InputError naming the source."""
    seen: set[str] = set()
    for i, rec in enumerate(records, start=1):
        run_v2_from_dict(rec, f"{source} (record {i})", i)
        if rec["run_id"] in seen:
            raise InputError(
                "duplicate_run_id",
                f"two samples map to run_id {rec['run_id']!r}",
                where=Location(source, i, "run_id"),
            )
        seen.add(rec["run_id"])
    text = "".join(
        json.dumps(r, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n" for r in records
    )
    atomic.write_text(out, text)
    failed = sum(1 for r in records if r.get("status") == "error")
    cancelled = sum(1 for r in records if r.get("status") == "limit")
    return ImportSummary(
        source, harness, samples, len(records), failed, str(out), cancelled, tuple(notes)
    )


def scalar_scores(raw: dict[str, Any]) -> dict[str, Any]:
    """Scores as {name: number | string | bool | None}; a dict value is flattened to
    ``name.key``, a list value kept as its JSON text."""
    out: dict[str, Any] = {}
    for name, value in raw.items():
        if isinstance(value, dict):
            for k, v in value.items():
                out[f"{name}.{k}"] = _scalar(v)
        else:
            out[str(name)] = _scalar(value)
    return out


def _scalar(v: Any) -> Any:
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return v if v == v and abs(v) != float("inf") else None
    return json.dumps(v, sort_keys=True, default=str)
