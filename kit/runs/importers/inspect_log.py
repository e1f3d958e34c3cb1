"""inspect_ai EvalLogs (``.eval`` and ``.json``) -> run format v2 records.

Reads the log with inspect_ai's own reader (``inspect_ai.log.read_eval_log``; the optional
``import`` extra). One record per (sample, epoch):

* ``run_id`` ``<task>:<eval id>:<sample id>:<epoch>``: unique across the logs of a folder (reruns
  of one task, several models: each eval has its own ``eval_id``, written in the log) and the
  same on every import; ``task_id`` and ``metadata.sample_id`` the log's own sample id,
  ``model`` the eval's model;
* ``answer`` the sample's final completion; claims and citations are read from it by the v2
  reader (docs/runs.md);
* ``tool_calls`` in the order the assistant made them, each with the text the tool returned
  (``response_text``) and ``status`` error when the tool reported one or never answered;
* ``tokens`` summed over the sample's model usage, ``wall_time_s`` the sample's total time;
* ``scores`` each scorer's value; ``metadata`` the log, eval id, epoch, target and the
  sample's own metadata;
* the sample's fate: ``status`` ok; ``error`` with the error message when the sample errored
  (``EvalSample.error``: a tool or solver raised); ``limit`` with ``{type, value, reason}`` when a
  limit cancelled it (``EvalSample.limit``: message, token, time, ...). Such runs are kept and
  counted, never dropped; the text the log holds as their output (a placeholder such as the
  pending tool call) is kept as ``answer`` but never audited (docs/runs.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kit.core.errors import ConfigError, InputError, Location
from kit.runs.importers.common import ImportSummary, check_limit, scalar_scores, write_runs

LOG_SUFFIXES = (".eval", ".json")


def _read_log(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:  # pragma: no cover - the extra is installed in dev
        raise ConfigError(
            "missing_extra",
            "reading inspect_ai logs needs the 'import' extra: pip install kit[import]",
        ) from None
    try:
        if Path(path).suffix == ".eval":
            _check_members(Path(path))
        return read_eval_log(str(path))
    except InputError:
        raise
    except Exception as exc:  # inspect_ai raises its own and pydantic errors on bad logs
        raise InputError(
            "bad_inspect_log",
            f"not an inspect_ai log: {type(exc).__name__}: {exc}"[:500],
            where=Location(str(path)),
        ) from None


def _check_members(path: Path) -> None:
    """Every member of an ``.eval`` zip against its CRC-32 (inspect_ai's reader does not check
    them, so a changed byte in a sample could pass unseen). Its zstd members are readable once
    inspect_ai.log is imported (inspect_ai registers the codec with zipfile)."""
    import zipfile

    with zipfile.ZipFile(path) as zf:
        bad = zf.testzip()
    if bad is not None:
        raise InputError(
            "bad_inspect_log",
            f"member {bad!r} fails its CRC-32 check: the log is corrupted",
            where=Location(str(path), column=bad),
        )


def log_files(path: Path) -> list[Path]:
    """``path`` itself, or every ``.eval`` / ``.json`` log in a folder (sorted)."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in LOG_SUFFIXES and p.is_file())
        if not files:
            raise InputError(
                "no_logs", "no .eval or .json log in this folder", where=Location(str(path))
            )
        return files
    if not path.is_file():
        raise InputError("missing_file", "file not found", where=Location(str(path)))
    return [path]


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=str, sort_keys=True))


def _tool_calls(messages: list[Any]) -> list[dict[str, Any]]:
    calls: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for m in messages:
        if m.role == "assistant":
            for tc in m.tool_calls or []:
                calls[tc.id] = {
                    "tool": tc.function,
                    "call_id": tc.id,
                    "arguments": _jsonable(tc.arguments or {}),
                    "status": "error",  # until a tool message answers it
                    "response_text": None,
                }
                order.append(tc.id)
        elif m.role == "tool" and m.tool_call_id in calls:
            call = calls[m.tool_call_id]
            call["response_text"] = m.text
            call["status"] = "error" if m.error is not None else "ok"
    return [calls[i] for i in order]


def tools_offered(events: Sequence[Any]) -> bool:
    """Whether any model call of a sample's ``events`` offered the model tools."""
    return any(getattr(e, "event", "") == "model" and getattr(e, "tools", None) for e in events)


def run_record(
    *,
    run_id: str,
    task_id: str,
    model: str,
    messages: Sequence[Any],
    output: Any,
    events: Sequence[Any],
    fate: dict[str, Any],
) -> dict[str, Any]:
    """The v2 record of one inspect_ai conversation: its ``messages``, its ``output`` (a
    ``ModelOutput`` or None) and its ``events``, with the sample's ``fate`` (:func:`sample_status`
    or :func:`fate_from_events`). The one conversion of an inspect_ai sample into a run: the
    importer (:func:`sample_record`, from an ``EvalSample``) and the citation scorer
    (:mod:`kit.inspect_ext.scorer`, from a ``TaskState``) both call it, so a sample is the same
    run to both."""
    calls = _tool_calls(list(messages))
    return {
        "format_version": 2,
        "run_id": run_id,
        "task_id": task_id,
        "model": model,
        "answer": "" if output is None else str(output.completion or ""),
        "tool_calls": calls,
        "tools_enabled": bool(calls) or tools_offered(events),
        **fate,
    }


def sample_record(log: Any, sample: Any, source: str) -> dict[str, Any]:
    """One v2 record for one sample of an EvalLog (:func:`run_record`, with the log's usage,
    scores, time and metadata)."""
    task = str(log.eval.task)
    usage = list((sample.model_usage or {}).values())
    rec = run_record(
        run_id=f"{task}:{log.eval.eval_id}:{sample.id}:{sample.epoch}",
        task_id=str(sample.id),
        model=str(log.eval.model),
        messages=sample.messages,
        output=sample.output,
        events=sample.events,
        fate=sample_status(sample),
    )
    rec |= {
        "tokens": {
            "prompt": sum(u.input_tokens or 0 for u in usage) if usage else None,
            "completion": sum(u.output_tokens or 0 for u in usage) if usage else None,
        },
        "scores": scalar_scores({k: s.value for k, s in (sample.scores or {}).items()}),
        "metadata": {
            "harness": "inspect_ai",
            "harness_version": str(log.eval.packages.get("inspect_ai", "")),
            "log": source,
            "eval_id": str(log.eval.eval_id),
            "eval_run_id": str(log.eval.run_id),
            "sample_id": sample.id,
            "task": task,
            "epoch": sample.epoch,
            "target": _jsonable(sample.target),
            "sample": _jsonable(sample.metadata or {}),
        },
    }
    if sample.total_time is not None:
        rec["wall_time_s"] = float(sample.total_time)
    return rec


def fate_from_events(events: Sequence[Any]) -> dict[str, Any]:
    """A sample's fate read from its transcript events, the form a scorer sees (a
    ``TaskState`` carries no error or limit): the last ``error`` event makes it ``status:
    error``, else the last ``sample_limit`` event ``status: limit``, else ``ok``. Fields as
    :func:`sample_status` gives them from an ``EvalSample``."""
    errors = [e for e in events if getattr(e, "event", "") == "error"]
    if errors:
        return {"status": "error", "error": str(errors[-1].error.message)}
    limits = [e for e in events if getattr(e, "event", "") == "sample_limit"]
    if limits:
        lim = limits[-1]
        return {
            "status": "limit",
            "limit": {
                "type": str(lim.type),
                "value": None if lim.limit is None else float(lim.limit),
                "reason": None if lim.message is None else str(lim.message),
            },
        }
    return {"status": "ok"}


def sample_status(sample: Any) -> dict[str, Any]:
    """The run-format fields of the sample's fate: ``status`` and ``error`` or ``limit``."""
    if sample.error is not None:
        return {"status": "error", "error": str(sample.error.message)}
    lim = getattr(sample, "limit", None)
    if lim is not None:
        value = lim.limit
        return {
            "status": "limit",
            "limit": {
                "type": str(lim.type),
                "value": None if value is None else float(value),
                "reason": None if getattr(lim, "reason", None) is None else str(lim.reason),
            },
        }
    return {"status": "ok"}


def not_run_records(log: Any, source: str) -> list[dict[str, Any]]:
    """One ``status: error`` record per (sample, epoch) an eval that ended in error or was
    cancelled never logged (inspect_ai stops an eval at its first sample error unless told
    otherwise, and the samples not yet run are absent from the log): the dataset's
    ``sample_ids`` times the eval's epochs, less the samples the log holds. Their ``error``
    names the eval's fate and message; ``metadata.not_run`` is true. Such runs are counted, never
    dropped (docs/runs.md); an eval that finished, or whose dataset lists no sample ids, gives
    none."""
    status = str(getattr(log, "status", ""))
    ids = getattr(log.eval.dataset, "sample_ids", None)
    if status not in ("error", "cancelled") or not ids:
        return []
    epochs = int(getattr(log.eval.config, "epochs", None) or 1)
    logged = {(str(s.id), int(s.epoch)) for s in log.samples or []}
    message = "" if log.error is None else f": {log.error.message}"
    error = f"not run: the eval ended with status {status}{message}"[:2000]
    task = str(log.eval.task)
    out = []
    for epoch in range(1, epochs + 1):
        for sid in ids:
            if (str(sid), epoch) in logged:
                continue
            out.append(
                {
                    "format_version": 2,
                    "run_id": f"{task}:{log.eval.eval_id}:{sid}:{epoch}",
                    "task_id": str(sid),
                    "model": str(log.eval.model),
                    "answer": "",
                    "tool_calls": [],
                    "status": "error",
                    "error": error,
                    "metadata": {
                        "harness": "inspect_ai",
                        "log": source,
                        "eval_id": str(log.eval.eval_id),
                        "eval_run_id": str(log.eval.run_id),
                        "sample_id": sid,
                        "task": task,
                        "epoch": epoch,
                        "not_run": True,
                    },
                }
            )
    return out


def import_inspect_logs(path: Path, out: Path, limit: int | None = None) -> ImportSummary:
    """Every sample of the log(s) at ``path`` (at most ``limit`` runs) written to ``out``, and
    one error run per sample an unfinished eval never ran (:func:`not_run_records`)."""
    check_limit(limit)
    records: list[dict[str, Any]] = []
    first: dict[str, str] = {}
    samples = 0
    notes: list[str] = []
    for file in log_files(path):
        log = _read_log(file)
        if log.samples is None and not not_run_records(log, file.name):
            raise InputError(
                "no_samples", "the log holds no samples (header only)", where=Location(str(file))
            )
        logged = [sample_record(log, s, file.name) for s in log.samples or []]
        missing = not_run_records(log, file.name)
        samples += len(logged) + len(missing)
        if missing:
            notes.append(
                f"{file.name}: the eval ended with status {log.status}; {len(missing)} of its "
                f"{len(logged) + len(missing)} sample-epochs were never run and are imported as "
                "error runs (metadata.not_run)"
            )
        for rec in [*logged, *missing]:
            if limit is not None and len(records) >= limit:
                break
            if rec["run_id"] in first:
                meta = rec["metadata"]
                raise InputError(
                    "duplicate_run_id",
                    f"run {rec['run_id']!r} (eval {log.eval.eval_id}, sample "
                    f"{meta['sample_id']!r}, epoch {meta['epoch']}) is also in "
                    f"{first[rec['run_id']]}: the same eval logged twice; keep one copy",
                    where=Location(str(file), column="eval_id"),
                )
            first[rec["run_id"]] = file.name
            records.append(rec)
    return write_runs(records, out, str(path), "inspect_ai", samples, notes)
