"""Harness logs -> per-sample scores and declared conditions, for `kit certify LOGS` (I/O edge).

`kit certify` reads a folder (or files) of harness logs -- inspect_ai ``.eval`` / ``.json``
logs, or lm-evaluation-harness ``samples_<task>_<time>.jsonl`` files -- as one
:class:`HarnessLog` per log: the system (the log's model), the conditions the log declares
(:data:`CONDITION_FIELDS`: what a certification must find equal before any score is read) and
one :class:`SampleScore` per (sample, epoch). The comparison itself (admissibility, the score
table, the conventional analysis) is pure: :mod:`kit.certify.harness` (docs/certify.md,
"From harness logs").

Conditions, as text (canonical JSON, sorted keys), ``None`` where the log does not record one:

* inspect_ai (``EvalLog.eval``: ``EvalSpec``; ``EvalLog.plan``): ``task``; ``dataset.name``;
  ``task_version`` and ``task_args``; ``dataset.location``; ``dataset.sample_ids`` (sha256 and
  count of the sorted ids); ``scorers`` (``EvalSpec.scorers``: name and options; else the
  results' scorer, name and params); ``tools`` (every tool offered to the model in the samples'
  model events: name, description, parameters); ``limits`` (``EvalConfig`` message, token,
  turn, time, working and cost limits); ``solver`` (the plan's steps and finish, solver and
  params, and ``EvalSpec.solver`` / ``solver_args``); ``generate_config`` (the eval's and the
  plan's generation config);
* lm-eval (the line fields; the ``configs[task]`` of the ``results_*.json`` of the same run
  when there is one): ``task``; ``dataset.name`` (``dataset_path`` / ``dataset_name``);
  ``dataset.split`` and ``dataset.kwargs``; ``dataset.sample_ids`` (the doc ids); ``scorers``
  (the metric read, the filter, the task's ``metric_list``); ``tools`` (none: lm-eval runs
  none); ``solver`` (how the prompt and answer are built: output type, few-shot, the
  ``doc_to_*`` templates, ``filter_list``, repeats); ``generate_config``
  (``generation_kwargs``: also its limits, e.g. ``max_gen_toks``).

Per sample, ``content`` holds what must agree between two logs on every common sample: the
sha256 of what the model received and the target (inspect_ai: input, choices, target; lm-eval:
``doc_hash`` + ``target_hash`` as ``dataset.samples``, ``prompt_hash`` as ``prompt``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.core import boundary
from kit.core.errors import ConfigError, InputError, Location
from kit.core.hashing import file_sha256, json_sha256
from kit.runs.importers.inspect_log import _read_log, not_run_records, sample_status
from kit.runs.importers.lm_eval import SAMPLES_NAME, model_from_results, task_from_name

CONDITION_FIELDS = (
    "task",
    "dataset.name",
    "task_version",
    "task_args",
    "dataset.location",
    "dataset.split",
    "dataset.kwargs",
    "dataset.sample_ids",
    "scorers",
    "tools",
    "limits",
    "solver",
    "generate_config",
)
"""Every declared condition, in the order they are compared and shown."""

RUN_FIELDS = ("task", "dataset.name")
"""Conditions every log of one certification shares (else exit 2: not one benchmark)."""

INSPECT_SUFFIXES = (".eval", ".json")
SKIPPED_JSON = ("logs.json", "eval-set.json")  # inspect_ai's listings of a log folder
LIMIT_FIELDS = (
    "message_limit",
    "token_limit",
    "turn_limit",
    "time_limit",
    "working_limit",
    "cost_limit",
)
LM_EVAL_SOLVER_KEYS = (
    "output_type",
    "num_fewshot",
    "fewshot_config",
    "fewshot_delimiter",
    "target_delimiter",
    "description",
    "doc_to_text",
    "doc_to_target",
    "doc_to_choice",
    "filter_list",
    "repeats",
)


@dataclass(frozen=True)
class SampleScore:
    """One (sample, epoch) of a log: its score on [0, 1] (None unless ``fate`` is ``ok``)."""

    sample_id: str
    epoch: int
    score: float | None
    fate: str  # ok, error, limit, unscored (no value of the score read), not_run
    content: Mapping[str, str]  # field -> sha256 of what must agree on a common sample
    metadata: Mapping[str, Any]  # the sample's metadata (inspect_ai) or doc (lm-eval)


@dataclass(frozen=True)
class HarnessLog:
    """One harness log: who ran, under which declared conditions, and each sample's score."""

    source: str  # the file, as given or found
    sha256: str
    harness: str  # inspect_ai or lm-eval
    system: str  # the log's model
    conditions: Mapping[str, str | None]  # CONDITION_FIELDS -> canonical text (None: unrecorded)
    readout: str  # the score read (scorer[.key] or metric)
    samples: tuple[SampleScore, ...]
    epochs: int
    info: Mapping[str, str]  # shown, never compared: eval id, revision, harness version


def canonical(value: Any) -> str:
    """``value`` as canonical JSON text (sorted keys; anything else as its str)."""
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def is_harness_input(paths: Sequence[Path]) -> bool:
    """Whether ``paths`` name harness logs (a folder, or ``.eval`` / ``.json`` / ``.jsonl``
    files) rather than one score table (CSV or Parquet)."""
    return any(p.is_dir() or p.suffix.lower() in (*INSPECT_SUFFIXES, ".jsonl") for p in paths)


def harness_files(paths: Sequence[Path]) -> list[Path]:
    """The log files of ``paths``: each file as given, each folder searched (recursively, sorted)
    for inspect_ai logs and lm-eval ``samples_*.jsonl``; lm-eval's ``results_*.json`` and
    inspect_ai's folder listings are not logs and are skipped."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and _is_log(f))
            if not found:
                raise InputError(
                    "no_logs",
                    "no inspect_ai log (.eval, .json) or lm-eval samples_*.jsonl in this folder",
                    where=Location(str(p)),
                )
            out.extend(found)
        elif not p.is_file():
            raise InputError("missing_file", "file not found", where=Location(str(p)))
        else:
            out.append(p)
    unique: dict[Path, Path] = {}
    for p in out:
        unique.setdefault(p.resolve(), p)  # a file named twice (or inside a named folder) once
    return list(unique.values())


def _is_log(f: Path) -> bool:
    if f.suffix == ".jsonl":
        return f.name.startswith("samples_")
    if f.suffix == ".json":
        return not f.name.startswith("results_") and f.name not in SKIPPED_JSON
    return f.suffix == ".eval"


def read_harness_logs(
    paths: Sequence[Path], score: str | None = None, filter_name: str | None = None
) -> list[HarnessLog]:
    """Every log of ``paths`` (:func:`harness_files`) read with the score ``score`` (inspect_ai:
    a scorer name, ``scorer.key`` for a dict value; lm-eval: a metric; None: the log's only
    one) and, for lm-eval, the filter ``filter_name`` (None: the file's first). A folder mixing
    the two harnesses is an :class:`InputError` naming one file of each."""
    files = harness_files(paths)
    kinds = {f: "lm-eval" if f.suffix == ".jsonl" else "inspect_ai" for f in files}
    if len(set(kinds.values())) > 1:
        a = next(f for f in files if kinds[f] == "inspect_ai")
        b = next(f for f in files if kinds[f] == "lm-eval")
        raise InputError(
            "mixed_harnesses",
            f"inspect_ai logs ({a.name}) and lm-eval samples ({b.name}) together: one "
            "certification compares logs of one harness",
            where=Location(str(b)),
        )
    if filter_name is not None and "inspect_ai" in kinds.values():
        raise ConfigError(
            "bad_parameter", "--filter names an lm-eval filter; these are inspect_ai logs"
        )
    return [
        _read_inspect(f, score)
        if kinds[f] == "inspect_ai"
        else _read_lm_eval(f, score, filter_name)
        for f in files
    ]


# -- inspect_ai --------------------------------------------------------------------------------


def _dump(obj: Any) -> Any:
    """A pydantic object (or None) as plain JSON data, unset fields left out."""
    if obj is None:
        return None
    if hasattr(obj, "model_dump"):
        return json.loads(json.dumps(obj.model_dump(exclude_none=True), default=str))
    return json.loads(json.dumps(obj, default=str))


def _inspect_conditions(log: Any) -> dict[str, str | None]:
    spec, plan = log.eval, log.plan
    ids = spec.dataset.sample_ids
    sorted_ids = None if ids is None else sorted(str(i) for i in ids)
    if spec.scorers:
        scorers = [{"name": s.name, "options": s.options or {}} for s in spec.scorers]
    elif log.results is not None and log.results.scores:
        scorers = [{"name": s.scorer, "params": s.params} for s in log.results.scores]
    else:
        scorers = None
    config = spec.config
    limits = {k: getattr(config, k, None) for k in LIMIT_FIELDS}
    steps = [{"solver": s.solver, "params": _dump(s.params)} for s in plan.steps]
    solver = {
        "steps": steps,
        "finish": None
        if plan.finish is None
        else {"solver": plan.finish.solver, "params": _dump(plan.finish.params)},
        "solver": spec.solver,
        "solver_args": spec.solver_args,
    }
    tools: dict[str, Any] = {}
    for sample in log.samples or []:
        for event in sample.events:
            if getattr(event, "event", "") == "model":
                for t in getattr(event, "tools", None) or []:
                    tools[t.name] = _dump(t)
    generate = {"eval": _dump(spec.model_generate_config), "plan": _dump(plan.config)}
    return {
        "task": str(spec.task),
        "dataset.name": spec.dataset.name,
        "task_version": canonical(spec.task_version),
        "task_args": canonical(spec.task_args or {}),
        "dataset.location": spec.dataset.location,
        "dataset.split": None,
        "dataset.kwargs": None,
        "dataset.sample_ids": None
        if sorted_ids is None
        else f"{len(sorted_ids)} ids, sha256 {json_sha256(sorted_ids)[:16]}",
        "scorers": None if scorers is None else canonical(scorers),
        "tools": canonical([tools[k] for k in sorted(tools)]) if log.samples else None,
        "limits": canonical(limits),
        "solver": canonical(solver),
        "generate_config": canonical(generate),
    }


def _message_data(messages: Any) -> Any:
    if isinstance(messages, str):
        return messages
    return [_dump(m.model_copy(update={"id": None, "source": None})) for m in messages]


def _inspect_value(value: Any, readout: str, key: str | None, where: Location) -> float:
    """A Score value on [0, 1]: a number or bool, inspect_ai's C / I / P / N, yes / no,
    true / false, or a numeric string; with ``key``, that key of a dict value."""
    from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, PARTIAL

    if key is not None:
        if not isinstance(value, dict) or key not in value:
            raise InputError(
                "bad_score",
                f"score {readout!r}: the value {canonical(value)[:200]} has no key {key!r}",
                where=where,
            )
        value = value[key]
    if isinstance(value, dict | list):
        raise InputError(
            "bad_score",
            f"score {readout!r} is {canonical(value)[:200]}: name one key of a dict value with "
            "--score SCORER.KEY",
            where=where,
        )
    words = {CORRECT: 1.0, INCORRECT: 0.0, PARTIAL: 0.5, NOANSWER: 0.0}
    words |= {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}
    if isinstance(value, bool):
        out = float(value)
    elif isinstance(value, int | float):
        out = float(value)
    elif isinstance(value, str) and value.strip().lower() in {str(k).lower() for k in words}:
        out = next(v for k, v in words.items() if str(k).lower() == value.strip().lower())
    else:
        try:
            out = float(str(value))
        except ValueError:
            raise InputError(
                "bad_score",
                f"score {readout!r} is {value!r}: expected a number, a bool, C / I / P / N, "
                "yes / no or true / false",
                where=where,
            ) from None
    if not (math.isfinite(out) and 0.0 <= out <= 1.0):
        raise InputError(
            "bad_score", f"score {readout!r} is {out}: a score must lie in [0, 1]", where=where
        )
    return out


def _pick_score(
    names: Sequence[str], score: str | None, source: str
) -> tuple[str, str, str | None]:
    """(readout, scorer, dict key) for ``--score`` among the log's scorer ``names``."""
    if score is None:
        if len(names) != 1:
            raise ConfigError(
                "bad_parameter",
                f"{source} has {len(names)} scorers ({', '.join(names) or 'none'}): name one "
                "with --score",
            )
        return names[0], names[0], None
    if score in names:
        return score, score, None
    head, _, key = score.rpartition(".")
    if head in names and key:
        return score, head, key
    raise ConfigError(
        "bad_parameter",
        f"--score {score!r} names no scorer of {source} (scorers: {', '.join(names) or 'none'}; "
        "a key of a dict score is SCORER.KEY)",
    )


def _read_inspect(path: Path, score: str | None) -> HarnessLog:
    log = _read_log(path)
    source = str(path)
    if log.samples is None:
        raise InputError(
            "no_samples", "the log holds no samples (header only)", where=Location(source)
        )
    conditions = _inspect_conditions(log)
    names = sorted(
        {n for s in log.samples for n in (s.scores or {})}
        | {s.name for s in (log.eval.scorers or [])}
    )
    readout, scorer, key = _pick_score(names, score, source)
    samples: list[SampleScore] = []
    for s in log.samples:
        content = {
            "dataset.samples": json_sha256(
                {
                    "input": _message_data(s.input),
                    "choices": s.choices,
                    "target": _dump(s.target),
                }
            )
        }
        fate = sample_status(s)["status"]
        value = None
        if fate == "ok":
            found = (s.scores or {}).get(scorer)
            if found is None:
                fate = "unscored"
            else:
                where = Location(
                    source, column=f"samples[{s.id!r}, epoch {s.epoch}].scores.{scorer}"
                )
                value = _inspect_value(found.value, readout, key, where)
        samples.append(
            SampleScore(str(s.id), int(s.epoch), value, fate, content, _dump(s.metadata) or {})
        )
    for rec in not_run_records(log, path.name):
        meta = rec["metadata"]
        samples.append(
            SampleScore(str(meta["sample_id"]), int(meta["epoch"]), None, "not_run", {}, {})
        )
    revision = log.eval.revision
    info = {
        "eval_id": str(log.eval.eval_id),
        "status": str(log.status),
        "harness_version": str(log.eval.packages.get("inspect_ai", "")),
        "revision": "" if revision is None else f"{revision.origin}@{revision.commit}",
    }
    epochs = int(log.eval.config.epochs or 1)
    return HarnessLog(
        source,
        file_sha256(path),
        "inspect_ai",
        str(log.eval.model),
        conditions,
        readout,
        tuple(samples),
        epochs,
        info,
    )


# -- lm-evaluation-harness --------------------------------------------------------------------


def _results_config(path: Path, task: str) -> dict[str, Any] | None:
    """``configs[task]`` of the results_*.json of the same lm-eval run as ``path`` (same
    timestamp, else the only one beside it), or None."""
    found = sorted(path.parent.glob("results_*.json"))
    m = SAMPLES_NAME.match(path.name)
    same = [f for f in found if m is not None and f.name == f"results_{m.group(2)}.json"]
    found = same or (found if len(found) == 1 else [])
    if not found:
        return None
    obj = boundary.read_json(found[0])
    configs = obj.get("configs") if isinstance(obj, dict) else None
    config = configs.get(task) if isinstance(configs, dict) else None
    return config if isinstance(config, dict) else None


def _lm_eval_conditions(
    config: dict[str, Any] | None, task: str, metric: str, filt: str, doc_ids: list[str]
) -> dict[str, str | None]:
    def get(key: str) -> Any:
        return None if config is None else config.get(key)

    name = None
    if config is not None and get("dataset_path") is not None:
        name = "/".join(str(x) for x in (get("dataset_path"), get("dataset_name")) if x)
    solver = None if config is None else canonical({k: get(k) for k in LM_EVAL_SOLVER_KEYS})
    scorers = {"metric": metric, "filter": filt}
    if config is not None:
        scorers["metric_list"] = get("metric_list")
    ids = sorted(doc_ids)
    return {
        "task": task,
        "dataset.name": name,
        "task_version": None
        if config is None
        else canonical((get("metadata") or {}).get("version")),
        "task_args": None,
        "dataset.location": None,
        "dataset.split": None if config is None else canonical(get("test_split")),
        "dataset.kwargs": None if config is None else canonical(get("dataset_kwargs")),
        "dataset.sample_ids": f"{len(ids)} ids, sha256 {json_sha256(ids)[:16]}",
        "scorers": canonical(scorers),
        "tools": canonical([]),
        "limits": None,
        "solver": solver,
        "generate_config": None if config is None else canonical(get("generation_kwargs")),
    }


def _lm_eval_value(obj: dict[str, Any], metric: str, where: Location) -> float | None:
    value = obj.get(metric)
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, int | float):
        raise InputError(
            "bad_score", f"metric {metric!r} is {value!r}: expected a number", where=where
        )
    out = float(value)
    if not math.isfinite(out):
        return None
    if not 0.0 <= out <= 1.0:
        raise InputError(
            "bad_score", f"metric {metric!r} is {out}: a score must lie in [0, 1]", where=where
        )
    return out


def _read_lm_eval(path: Path, score: str | None, filter_name: str | None) -> HarnessLog:
    source = str(path)
    task = task_from_name(path)
    if task is None:
        raise InputError(
            "bad_file_name",
            "cannot tell the task from the file name (lm-eval writes samples_<task>_<time>.jsonl)",
            where=Location(source),
        )
    lines = list(boundary.read_jsonl(path))
    if not lines:
        raise InputError("empty_samples", "no sample line", where=Location(source))
    model = model_from_results(path)
    if model is None:
        raise InputError(
            "no_model",
            "no results_*.json beside the samples file to read model_name from (lm-eval writes "
            "one per run)",
            where=Location(source),
        )
    for line, obj in lines:
        if not isinstance(obj, dict) or "doc_id" not in obj:
            raise InputError(
                "missing_field",
                "missing lm-eval sample field 'doc_id'",
                where=Location(source, line, "doc_id"),
            )
    filters = list(dict.fromkeys(str(obj.get("filter", "none")) for _, obj in lines))
    filt = filters[0] if filter_name is None else filter_name
    if filt not in filters:
        raise ConfigError(
            "bad_parameter",
            f"--filter {filter_name!r}: {source} holds the filter(s) {', '.join(filters)}",
        )
    kept = [(line, obj) for line, obj in lines if str(obj.get("filter", "none")) == filt]
    metrics = list(dict.fromkeys(m for _, obj in kept for m in obj.get("metrics") or []))
    if score is None and len(metrics) != 1:
        raise ConfigError(
            "bad_parameter",
            f"{source} has {len(metrics)} metrics ({', '.join(metrics) or 'none'}): name one with --score",
        )
    metric = metrics[0] if score is None else score
    if metric not in metrics:
        raise ConfigError(
            "bad_parameter",
            f"--score {metric!r} names no metric of {source} (metrics: {', '.join(metrics)})",
        )
    samples = []
    seen: dict[str, int] = {}
    for line, obj in kept:
        sid = str(obj["doc_id"])
        if sid in seen:
            raise InputError(
                "duplicate_run_id",
                f"doc_id {sid} under filter {filt!r} again (first on line {seen[sid]})",
                where=Location(source, line, "doc_id"),
            )
        seen[sid] = line
        value = _lm_eval_value(obj, metric, Location(source, line, metric))
        content = {
            "dataset.samples": json_sha256([obj.get("doc_hash"), obj.get("target_hash")]),
            "prompt": json_sha256(obj.get("prompt_hash")),
        }
        doc = obj.get("doc")
        samples.append(
            SampleScore(
                sid,
                1,
                value,
                "ok" if value is not None else "unscored",
                content,
                doc if isinstance(doc, dict) else {},
            )
        )
    conditions = _lm_eval_conditions(_results_config(path, task), task, metric, filt, list(seen))
    return HarnessLog(
        source,
        file_sha256(path),
        "lm-eval",
        model,
        conditions,
        metric,
        tuple(samples),
        1,
        {"filter": filt},
    )
