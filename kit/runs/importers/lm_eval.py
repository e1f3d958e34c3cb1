"""lm-evaluation-harness ``samples_<task>_<timestamp>.jsonl`` files -> run format v2 records.

lm-eval (``--log_samples``) writes one JSON object per (document, filter) with ``doc_id``,
``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``, ``metrics`` (the
names of the metric fields also on the line), ``doc_hash``, ``prompt_hash`` and ``target_hash``.
One record per document, for ONE filter:

* the filter: ``--filter NAME``, else the first filter of the file (lm-eval writes the lines of
  each filter of the task's ``filter_list`` in turn, so this is the task's first filter); the
  lines of the other filters are read and checked but not imported (a document under two
  filters is one answer, not two), and the summary says which filter was imported;
* ``run_id`` ``<task>:<doc_id>:<filter>``, ``task_id`` ``<task>:<doc_id>``, the filter in
  ``metadata.filter``;
* ``model`` from ``--model``, else ``model_name`` of the ``results_<timestamp>.json`` of the
  same run (same timestamp as the samples file; else the only ``results_*.json`` beside it);
* ``answer``: for a multiple-choice line (``filtered_resps`` one ``[log-likelihood,
  is-greedy]`` pair per choice) the chosen option -- the choice with the largest
  log-likelihood, lm-eval's ``acc`` rule (``acc_norm`` normalises by length and may choose
  another) -- whose text is the continuation of that choice's request in ``arguments``; its
  index and the log-likelihoods go to ``metadata``; for a generation line the first filtered
  response; any other response (a single log-likelihood) as its JSON text. ``filtered_resps``
  null, empty or holding null is refused;
* ``scores`` the line's metric values; ``metadata`` the task, doc, target, filter and hashes;
* ``tools_enabled`` false: lm-eval runs no tools.

The task name comes from ``--task`` or the file name. Problems name the file, line and field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kit.core import boundary
from kit.core.errors import ConfigError, InputError, Location
from kit.runs.importers.common import ImportSummary, check_limit, scalar_scores, write_runs

SAMPLES_NAME = re.compile(r"^samples_(.+)_(\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl$")
REQUIRED = ("doc_id", "filtered_resps")


def task_from_name(path: Path) -> str | None:
    m = SAMPLES_NAME.match(path.name)
    return m.group(1) if m else None


def model_from_results(path: Path) -> str | None:
    """``model_name`` of the ``results_*.json`` written by the same lm-eval run as ``path``
    (``results_<timestamp>.json`` with the samples file's timestamp), else of the only
    ``results_*.json`` beside it; None when there is none. Several, none of the same run, or
    one without ``model_name``, is a ConfigError naming them (give ``--model``)."""
    found = sorted(path.parent.glob("results_*.json"))
    if not found:
        return None
    m = SAMPLES_NAME.match(path.name)
    same = [f for f in found if m is not None and f.name == f"results_{m.group(2)}.json"]
    if same:
        found = same
    if len(found) > 1:
        raise ConfigError(
            "bad_parameter",
            f"{len(found)} results files beside {path.name} and none has its timestamp: "
            f"{', '.join(f.name for f in found)}; give --model",
        )
    obj = boundary.read_json(found[0])
    name = obj.get("model_name") if isinstance(obj, dict) else None
    if not (isinstance(name, str) and name):
        raise ConfigError("bad_parameter", f"{found[0]} has no model_name; give --model")
    return name


def _loglikelihood(x: Any) -> float | None:
    """The log-likelihood of one ``[log-likelihood, is-greedy]`` pair (numbers or, as lm-eval
    0.4 writes them, their text), else None."""
    if not (isinstance(x, list) and len(x) == 2) or isinstance(x[0], bool):
        return None
    try:
        value = float(x[0])
    except (TypeError, ValueError):
        return None
    return value if value == value else None


def _choices(arguments: Any, n: int) -> list[str] | None:
    """The continuation of each loglikelihood request, in request order (``gen_args_0`` ...)."""
    if not isinstance(arguments, dict) or len(arguments) != n:
        return None
    out = []
    for i in range(n):
        arg = arguments.get(f"gen_args_{i}")
        cont = arg.get("arg_1") if isinstance(arg, dict) else None
        if not isinstance(cont, str):
            return None
        out.append(cont.strip())
    return out


def _answer(obj: dict[str, Any], source: str, line: int) -> tuple[str, dict[str, Any]]:
    """The answer of one line and what the metadata records about how it was read."""
    resps = obj["filtered_resps"]
    where = Location(source, line, "filtered_resps")
    if resps is None or resps == [] or (isinstance(resps, list) and None in resps):
        raise InputError(
            "bad_field",
            f"filtered_resps is {json.dumps(resps)}: the sample has no response to import",
            where=where,
        )
    if isinstance(resps, list) and len(resps) > 1:
        lls = [_loglikelihood(r) for r in resps]
        if all(v is not None for v in lls):
            choices = _choices(obj.get("arguments"), len(resps))
            if choices is None:
                raise InputError(
                    "bad_field",
                    f"a multiple-choice response of {len(resps)} log-likelihoods, but arguments "
                    f"does not hold {len(resps)} requests gen_args_0.. with the choice as arg_1",
                    where=Location(source, line, "arguments"),
                )
            best = max(range(len(lls)), key=lambda i: (lls[i], -i))  # first of ties
            return choices[best], {
                "choice": best,
                "choices": choices,
                "loglikelihoods": lls,
                "answer_rule": "argmax log-likelihood (lm-eval acc)",
            }
    first = resps[0] if isinstance(resps, list) else resps
    while isinstance(first, list) and len(first) == 1:
        first = first[0]
    if first is None:
        raise InputError("bad_field", "filtered_resps holds null", where=where)
    return (first if isinstance(first, str) else json.dumps(first)), {}


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
    answer, how = _answer(obj, source, line)
    meta = {
        "harness": "lm-eval",
        "task": task,
        "filter": filt,
        "doc": obj.get("doc"),
        "target": obj.get("target"),
    }
    meta |= {k: obj[k] for k in ("doc_hash", "prompt_hash", "target_hash") if k in obj}
    meta |= how
    return {
        "format_version": 2,
        "run_id": f"{task}:{obj['doc_id']}:{filt}",
        "task_id": f"{task}:{obj['doc_id']}",
        "model": model,
        "answer": answer,
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
    filter_name: str | None = None,
) -> ImportSummary:
    """The lines of one filter of a samples file (module doc; at most ``limit`` runs) written
    to ``out`` as v2 runs."""
    check_limit(limit)
    task = task or task_from_name(path)
    if task is None:
        raise ConfigError(
            "bad_parameter",
            f"cannot tell the task from the file name {path.name!r} (samples_<task>_<time>.jsonl); give --task",
        )
    lines = list(boundary.read_jsonl(path))
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
            "no results_*.json beside the samples file to read model_name from; give --model",
        )
    records = [sample_record(obj, task, model, str(path), line) for line, obj in lines]
    filters = list(dict.fromkeys(r["metadata"]["filter"] for r in records))
    chosen = filters[0] if filter_name is None else filter_name
    if chosen not in filters:
        raise ConfigError(
            "bad_parameter",
            f"--filter {filter_name!r}: the file holds the filter(s) {', '.join(filters)}",
        )
    first: dict[str, int] = {}
    kept = []
    for (line, _), rec in zip(lines, records, strict=True):
        if rec["metadata"]["filter"] != chosen:
            continue
        if rec["run_id"] in first:
            raise InputError(
                "duplicate_run_id",
                f"doc_id {rec['task_id'].rsplit(':', 1)[1]} under filter {chosen!r} again (first "
                f"on line {first[rec['run_id']]})",
                where=Location(str(path), line, "doc_id"),
            )
        first[rec["run_id"]] = line
        kept.append(rec)
    notes = []
    if len(filters) > 1:
        others = ", ".join(f for f in filters if f != chosen)
        notes.append(
            f"filter {chosen!r} imported ({len(kept)} runs); the lines of filter(s) {others} "
            "were not (one answer per document; --filter to choose)"
        )
    kept = kept if limit is None else kept[:limit]
    return write_runs(kept, out, str(path), "lm-eval", len(lines), notes)
