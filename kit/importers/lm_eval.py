"""lm-evaluation-harness ``samples_<task>_<timestamp>.jsonl`` files -> run format v2 records.

lm-eval (``--log_samples``) writes one JSON object per document with ``doc_id``, ``doc``,
``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``, ``metrics`` (the names of
the metric fields also on the line), ``doc_hash``, ``prompt_hash`` and ``target_hash``. One
record per line:

* ``run_id`` ``<task>:<doc_id>:<filter>``, ``task_id`` ``<task>:<doc_id>``;
* ``model`` from ``--model``, else ``model_name`` of the ``results_*.json`` beside the file;
* ``answer`` the first filtered response (a non-text response, e.g. a log-likelihood pair, as
  its JSON text), read for claims and citations by the v2 reader;
* ``scores`` the line's metric values; ``metadata`` the task, doc, target, filter and hashes;
* ``tools_enabled`` false: lm-eval runs no tools.

The task name comes from ``--task`` or the file name. Problems name the file, line and field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kit import boundary
from kit.errors import ConfigError, InputError, Location
from kit.grade.reader import read_jsonl_objects
from kit.importers.common import ImportSummary, check_limit, scalar_scores, write_runs

SAMPLES_NAME = re.compile(r"^samples_(.+)_(\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")
REQUIRED = ("doc_id", "filtered_resps")


def task_from_name(path: Path) -> str | None:
    m = SAMPLES_NAME.match(path.name)
    return m.group(1) if m else None


def model_from_results(path: Path) -> str | None:
    """``model_name`` of the single ``results_*.json`` beside ``path``, if there is one."""
    found = sorted(path.parent.glob("results_*.json"))
    if len(found) != 1:
        return None
    try:
        obj = boundary.read_json(found[0])
    except InputError:
        return None
    name = obj.get("model_name") if isinstance(obj, dict) else None
    return name if isinstance(name, str) and name else None


def _answer(resps: Any) -> str:
    first = resps[0] if isinstance(resps, list) and resps else resps
    while isinstance(first, list) and len(first) == 1:
        first = first[0]
    return first if isinstance(first, str) else json.dumps(first)


def sample_record(obj: Any, task: str, model: str, source: str, line: int) -> dict[str, Any]:
    """One v2 record for one line of a samples file."""
    if not isinstance(obj, dict):
        raise InputError(
            "bad_field", "expected a JSON object", where=Location(source, line, "<record>")
        )
    for key in REQUIRED:
        if key not in obj:
            raise InputError(
                "missing_field",
                f"missing lm-eval sample field '{key}'",
                where=Location(source, line, key),
            )
    metrics = obj.get("metrics", [])
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise InputError(
            "bad_field", "expected a list of metric names", where=Location(source, line, "metrics")
        )
    missing = [m for m in metrics if m not in obj]
    if missing:
        raise InputError(
            "missing_field",
            f"metric '{missing[0]}' is listed but has no value",
            where=Location(source, line, missing[0]),
        )
    filt = str(obj.get("filter", "none"))
    meta = {
        "harness": "lm-eval",
        "task": task,
        "filter": filt,
        "doc": obj.get("doc"),
        "target": obj.get("target"),
    }
    meta |= {k: obj[k] for k in ("doc_hash", "prompt_hash", "target_hash") if k in obj}
    return {
        "format_version": 2,
        "run_id": f"{task}:{obj['doc_id']}:{filt}",
        "task_id": f"{task}:{obj['doc_id']}",
        "model": model,
        "answer": _answer(obj["filtered_resps"]),
        "tools_enabled": False,
        "scores": scalar_scores({m: obj[m] for m in metrics}),
        "metadata": json.loads(json.dumps(meta, default=str)),
    }


def import_lm_eval_samples(
    path: Path,
    out: Path,
    model: str | None = None,
    task: str | None = None,
    limit: int | None = None,
) -> ImportSummary:
    """Every line of a samples file (at most ``limit``) written to ``out`` as v2 runs."""
    check_limit(limit)
    task = task or task_from_name(path)
    if task is None:
        raise ConfigError(
            "bad_parameter",
            f"cannot tell the task from the file name {path.name!r} (samples_<task>_<time>.jsonl); give --task",
        )
    lines = read_jsonl_objects(path)
    if not lines:
        raise InputError(
            "empty_samples",
            "no sample line: an lm-eval samples file has one JSON object per document",
            where=Location(str(path)),
        )
    model = model or model_from_results(path)
    if model is None:
        raise ConfigError(
            "bad_parameter",
            "no results_*.json with model_name beside the samples file; give --model",
        )
    chosen = lines if limit is None else lines[:limit]
    records = [sample_record(obj, task, model, str(path), line) for line, obj in chosen]
    return write_runs(records, out, str(path), "lm-eval", len(lines))
