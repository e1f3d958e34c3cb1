"""Any JSON Lines file of runs -> run format v2 records, through a field map (docs/runs.md).

``kit import jsonl FILE --map run_id=id,task_id=task,model=meta.model,answer=output.text``: each
line is one run; ``--map`` names, for each v2 field, the path of the line's field that holds it
(dots for nested keys, a number for a list item: ``output.choices.0.text``).

* required: ``run_id``, ``task_id``, ``answer`` and ``model`` (or ``--model NAME`` for every
  line); ``run_id`` / ``task_id`` / ``model`` may be strings or integers (kept as text);
* optional: ``claims`` (a list of ``{text, cites}`` objects or of claim strings, which cite
  nothing), ``cited`` (the run's reference list: identifier strings, whose scheme is read from
  the identifier -- ``PMID:1``, ``10.1000/x``, ``PMC1``, ``NCT01234567``, ``arXiv:...``, a URL
  -- or given by ``--cited-scheme`` for bare ids, else ``other``; or v2 ``{id, scheme, key?,
  title?}`` objects), ``scores`` (an object of scalar scores), ``metadata`` (an object),
  ``status`` (the run's fate: ``ok``, ``error`` or ``limit``; absent: ok), ``error`` (its
  message, for status error), ``limit`` (which limit, for status limit: a name such as
  ``message``, or a ``{type, value?, reason?}`` object); these three may be absent from a
  line (a line without status is ``ok``);
* without ``claims`` the v2 reader extracts them from the answer (docs/runs.md);
* no tool calls are imported: runs are written ``tools_enabled: false``, so the behaviour audit
  never counts them as runs that abandoned their tools.

A mapped field missing from a line, or of the wrong type, is an :class:`InputError` naming the
file, the line and the field path; a required target absent from ``--map`` is a
:class:`ConfigError` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kit.core import boundary
from kit.core.errors import ConfigError, InputError, Location
from kit.corpus.identifiers import canonical
from kit.runs.importers.common import ImportSummary, check_limit, scalar_scores, write_runs
from kit.runs.v2 import run_v2_from_dict

TARGETS = (
    "run_id",
    "task_id",
    "model",
    "answer",
    "claims",
    "cited",
    "scores",
    "metadata",
    "status",
    "error",
    "limit",
)
REQUIRED = ("run_id", "task_id", "model", "answer")
FATE = ("status", "error", "limit")  # may be absent from a line (absent status: ok)
CITED_SCHEMES = ("pmid", "pmcid", "doi", "arxiv", "nct", "url", "other")


def parse_map(text: str, model: str | None = None) -> dict[str, tuple[str, ...]]:
    """``"answer=output.text,task_id=id"`` -> ``{"answer": ("output", "text"), ...}``.

    Raises :class:`ConfigError` for an item without ``=``, an unknown target, a target given
    twice, an empty path segment, ``model`` both mapped and given as ``--model``, and for a
    required target (``REQUIRED``; ``model`` unless ``model`` is given) absent from the map.
    """
    out: dict[str, tuple[str, ...]] = {}
    for item in (i.strip() for i in text.split(",")):
        if not item:
            continue
        target, sep, path = (p.strip() for p in item.partition("="))
        if not sep or not target or not path:
            raise ConfigError(
                "bad_parameter", f"--map expects TARGET=FIELD.PATH[,...]; got {item!r}"
            )
        if target not in TARGETS:
            raise ConfigError(
                "bad_parameter",
                f"--map target {target!r} is not a run field; one of: {', '.join(TARGETS)}",
            )
        if target in out:
            raise ConfigError("bad_parameter", f"--map gives {target!r} twice")
        segments = tuple(s.strip() for s in path.split("."))
        if any(not s for s in segments):
            raise ConfigError(
                "bad_parameter", f"--map {target}={path}: empty key in the field path"
            )
        out[target] = segments
    if model is not None and "model" in out:
        raise ConfigError(
            "bad_parameter", "model is both mapped in --map and given as --model: keep one"
        )
    missing = [t for t in REQUIRED if t not in out and not (t == "model" and model is not None)]
    if missing:
        raise ConfigError(
            "missing_mapping",
            f"--map lacks the required mapping(s) {', '.join(missing)} (required: "
            f"{', '.join(REQUIRED)}; model may be given as --model NAME instead); e.g. --map "
            "run_id=id,task_id=task,model=model,answer=output.text",
        )
    return out


class _Missing:
    pass


MISSING = _Missing()


def lookup(obj: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` in ``obj`` (dict keys; list items by number), or ``MISSING``."""
    for key in path:
        if isinstance(obj, Mapping) and key in obj:
            obj = obj[key]
        elif isinstance(obj, list) and key.isdigit() and int(key) < len(obj):
            obj = obj[int(key)]
        else:
            return MISSING
    return obj


def _text_id(value: Any, field: str, source: str, line: int) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value) == "":
        raise InputError(
            "bad_field",
            f"expected a non-empty string or an integer, got {type(value).__name__} {value!r}"[
                :300
            ],
            where=Location(source, line, field),
        )
    return str(value)


def _cited(value: Any, field: str, scheme: str | None, source: str, line: int) -> list[Any]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise InputError(
            "bad_field",
            f"expected a list of identifiers, got {type(value).__name__}",
            where=Location(source, line, field),
        )
    out: list[Any] = []
    for i, item in enumerate(items):
        if isinstance(item, Mapping):
            out.append(dict(item))  # a v2 citation object: checked by the v2 reader
        elif isinstance(item, str) and item.strip():
            found = canonical(item) if scheme is None else None
            out.append(
                {
                    "id": item.strip(),
                    "scheme": scheme or (found.scheme.lower() if found else "other"),
                }
            )
        else:
            raise InputError(
                "bad_field",
                f"expected an identifier string or an {{id, scheme}} object, got {item!r}"[:300],
                where=Location(source, line, f"{field}[{i}]"),
            )
    return out


def _claims(value: Any, field: str, source: str, line: int) -> list[Any]:
    if not isinstance(value, list):
        raise InputError(
            "bad_field",
            f"expected a list of claims, got {type(value).__name__}",
            where=Location(source, line, field),
        )
    return [{"text": c, "cites": []} if isinstance(c, str) else c for c in value]


def _fate(target: str, value: Any, field: str, source: str, line: int) -> Any:
    """A mapped ``status`` (one of RUN_STATUSES), ``error`` (text or null) or ``limit`` (a
    name, or a ``{type, value?, reason?}`` object checked by the v2 reader)."""
    from kit.runs.model import RUN_STATUSES

    if target == "status" and value not in RUN_STATUSES:
        raise InputError(
            "bad_field",
            f"status: expected one of {', '.join(RUN_STATUSES)}, got {value!r}"[:300],
            where=Location(source, line, field),
        )
    if target == "error" and value is not None and not isinstance(value, str):
        raise InputError(
            "bad_field",
            f"error: expected a message (string) or null, got {type(value).__name__}",
            where=Location(source, line, field),
        )
    if target == "limit":
        if isinstance(value, str) and value:
            return {"type": value}
        if not isinstance(value, Mapping):
            raise InputError(
                "bad_field",
                f"limit: expected a name or a {{type, value}} object, got {value!r}"[:300],
                where=Location(source, line, field),
            )
        return dict(value)
    return value


def record_from_line(
    obj: Any,
    mapping: Mapping[str, tuple[str, ...]],
    source: str,
    line: int,
    model: str | None = None,
    cited_scheme: str | None = None,
) -> dict[str, Any]:
    """One v2 record from one decoded line, checked by the v2 reader (errors name the file,
    the line and the field: the mapped path for a missing or mistyped value)."""
    if not isinstance(obj, Mapping):
        raise InputError(
            "bad_field", "expected a JSON object", where=Location(source, line, "<record>")
        )
    got: dict[str, Any] = {}
    for target, path in mapping.items():
        value = lookup(obj, path)
        field = ".".join(path)
        if value is MISSING and target in FATE:
            continue  # absent on this line: status ok, no error, no limit
        if value is MISSING:
            raise InputError(
                "missing_field",
                f"field '{field}' (mapped to {target}) is missing",
                where=Location(source, line, field),
            )
        if target in ("run_id", "task_id", "model"):
            got[target] = _text_id(value, field, source, line)
        elif target == "answer":
            if not isinstance(value, str):
                raise InputError(
                    "bad_field",
                    f"answer: expected a string, got {type(value).__name__}",
                    where=Location(source, line, field),
                )
            got[target] = value
        elif target == "cited":
            got["citations"] = _cited(value, field, cited_scheme, source, line)
        elif target == "claims":
            got["claims"] = _claims(value, field, source, line)
        elif target in ("status", "error", "limit"):
            got[target] = _fate(target, value, field, source, line)
        elif not isinstance(value, Mapping):  # scores, metadata
            raise InputError(
                "bad_field",
                f"{target}: expected an object, got {type(value).__name__}",
                where=Location(source, line, field),
            )
        elif target == "scores":
            got["scores"] = scalar_scores(dict(value))
        else:
            got["metadata"] = dict(value)
    rec: dict[str, Any] = {
        "format_version": 2,
        "run_id": got["run_id"],
        "task_id": got["task_id"],
        "model": got.get("model", model),
        "answer": got["answer"],
        "tools_enabled": False,
        "metadata": {
            "harness": "jsonl",
            "source": Path(source).name,
            "line": line,
            **({"record": got["metadata"]} if "metadata" in got else {}),
        },
    }
    rec |= {k: got[k] for k in ("citations", "claims", "scores") if k in got}
    status = got.get("status", "ok")
    if status != "ok":
        rec["status"] = status
    if status == "error":
        rec["error"] = got.get("error")
    if status == "limit":
        if "limit" not in got:
            raise InputError(
                "missing_field",
                "status limit: map limit= to the field naming which limit cancelled the run",
                where=Location(source, line, ".".join(mapping["status"])),
            )
        rec["limit"] = got["limit"]
    try:
        run_v2_from_dict(rec, source, line)
    except InputError as exc:  # name the line's own field, not the v2 record's
        raise _on_mapped_field(exc, mapping) from None
    return rec


def _on_mapped_field(exc: InputError, mapping: Mapping[str, tuple[str, ...]]) -> InputError:
    """``exc`` with a v2 field path (``citations[0].id``) renamed to the mapped one
    (``refs[0].id``), so the message names the field of the input line."""
    column = exc.where.column or ""
    for v2, target in (("citations", "cited"), ("claims", "claims")):
        if column.startswith(v2) and target in mapping:
            prefix = f"{exc.where}: "
            text = exc.message[len(prefix) :] if exc.message.startswith(prefix) else exc.message
            where = Location(
                exc.where.file, exc.where.row, ".".join(mapping[target]) + column[len(v2) :]
            )
            return InputError(exc.reason, text, where=where, details=exc.details)
    return exc


def import_jsonl(
    path: Path,
    out: Path,
    mapping_text: str,
    model: str | None = None,
    cited_scheme: str | None = None,
    limit: int | None = None,
) -> ImportSummary:
    """Every line of ``path`` (at most ``limit``) mapped by ``mapping_text`` and written to
    ``out`` as v2 runs."""
    check_limit(limit)
    if cited_scheme is not None and cited_scheme not in CITED_SCHEMES:
        raise ConfigError(
            "bad_parameter",
            f"--cited-scheme {cited_scheme!r}: one of {', '.join(CITED_SCHEMES)}",
        )
    mapping = parse_map(mapping_text, model)
    if cited_scheme is not None and "cited" not in mapping:
        raise ConfigError("bad_parameter", "--cited-scheme without a cited= mapping in --map")
    lines = list(boundary.read_jsonl(path))
    if not lines:
        raise InputError("empty_file", "no JSON line in the file", where=Location(str(path)))
    chosen = lines if limit is None else lines[:limit]
    records = []
    first: dict[str, int] = {}
    for line, obj in chosen:
        rec = record_from_line(obj, mapping, str(path), line, model, cited_scheme)
        if rec["run_id"] in first:
            raise InputError(
                "duplicate_run_id",
                f"run_id {rec['run_id']!r} again (first on line {first[rec['run_id']]}): map "
                "run_id to a field unique per line",
                where=Location(str(path), line, ".".join(mapping["run_id"])),
            )
        first[rec["run_id"]] = line
        records.append(rec)
    return write_runs(records, out, str(path), "jsonl", len(lines))
