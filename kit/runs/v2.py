"""Run format v2: one decoded JSON object -> the audit's :class:`~kit.runs.model.AgentRun` (pure).

The JSON Schema is ``schemas/json/agent_run.v2.schema.json`` (docs/runs.md). Checks run in
two steps: the schema (the first problem, by field path, becomes an InputError naming source,
line and field), then what a schema cannot say (a claim citing nothing the run lists, a PMID
that is not one, tool calls in a run without tools). ``cited`` of the result is the run's
reference list followed by identifiers the answer names that the list lacks, so the audit's
L1/L2 stages read a v2 run exactly like a v1 one. An answer with no reference list of its own, in
a run with no ``citations``, has its numeric markers read against the numbered list of documents
a tool returned, when that reading is unambiguous (:mod:`kit.runs.tool_lists`).
"""

from __future__ import annotations

from typing import Any

from kit.core.errors import InputError, Location
from kit.runs.citations import identifier_ref
from kit.runs.extract import (
    Index,
    claims_from_answer,
    marker_citation,
    reference_index,
    split_reference_section,
    to_citation,
)
from kit.runs.model import (
    DEFAULT_MAX_ANSWER_CHARS,
    AgentRun,
    Citation,
    RunClaim,
    ToolCall,
    check_answer_size,
)
from kit.runs.tool_lists import tool_list_index

FORMAT_VERSION = 2
SCHEMA = "agent_run.v2"


def _fail(source: str, line: int, column: str, message: str, reason: str = "bad_field") -> None:
    raise InputError(reason, message, where=Location(source, line, column))


def _schema_check(obj: Any, source: str, line: int) -> None:
    import jsonschema

    from kit.core.schema import load_json_schema

    validator = jsonschema.Draft202012Validator(load_json_schema(SCHEMA))
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        e = errors[0]
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
        reason = "unknown_field" if e.validator == "additionalProperties" else "bad_field"
        reason = "missing_field" if e.validator == "required" else reason
        _fail(source, line, path.lstrip(".") or "<record>", f"{e.message} ({SCHEMA})", reason)


def _explicit_claims(
    obj: dict[str, Any], index: Index, source: str, line: int
) -> tuple[tuple[RunClaim, ...], tuple[Citation, ...]]:
    out = []
    named: dict[str, Citation] = {}
    for i, c in enumerate(obj["claims"]):
        cites: list[str] = []
        for j, name in enumerate(c["cites"]):
            key = name.lower() if " " in name and name[:1].isalpha() else name
            ident = identifier_ref(name)
            targets = index.get(key, ())
            cit = targets[0] if len(targets) == 1 else None
            if not targets and ident:
                cit = marker_citation(ident[0], ident[1], index)
            if cit is None:
                what = "several citations" if len(targets) > 1 else "no citation key or id"
                _fail(
                    source,
                    line,
                    f"claims[{i}].cites[{j}]",
                    f"{name!r} names {what} of this run",
                    "unknown_citation",
                )
            assert cit is not None
            cites.append(cit.label)
            named.setdefault(cit.label, cit)
        out.append(RunClaim(c["text"], tuple(dict.fromkeys(cites))))
    return tuple(out), tuple(named.values())


def run_v2_from_dict(
    obj: Any,
    source: str = "<runs>",
    line: int = 1,
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
) -> AgentRun:
    """Validate one v2 record and return it as an :class:`AgentRun` (``format_version=2``)."""
    _schema_check(obj, source, line)
    answer = obj["answer"]
    check_answer_size(answer, source, line, max_answer_chars)
    listed: list[tuple[str, str, str | None]] = []
    cited: list[Citation] = []
    for i, c in enumerate(obj.get("citations", [])):
        cit = to_citation(c["id"], c["scheme"])
        if cit is None:
            _fail(source, line, f"citations[{i}].id", f"{c['id']!r} is not a {c['scheme']} id")
        listed.append((c["id"], c["scheme"], c.get("key")))
        cited.append(cit)  # type: ignore[arg-type]
    status = obj.get("status", "ok")
    if status != "ok":  # an errored or cancelled run's text is no answer: nothing is read from it
        return _unfinished(obj, status, calls_of(obj), source, line)
    _, answer_refs = split_reference_section(answer)
    index = reference_index(listed, answer_refs)
    calls = calls_of(obj)
    markers = obj.get("markers", "auto")
    if "claims" in obj:
        claims, named = _explicit_claims(obj, index, source, line)
    else:
        if not listed and not answer_refs and markers in ("auto", "numeric"):
            # no list of its own: [n] may name the n-th document a tool returned
            texts = [c.response_text for c in calls if c.response_text and c.status == "ok"]
            index = tool_list_index(answer, texts) or index
        claims, named = claims_from_answer(answer, index, markers)
    known = {c.label: c for c in cited}
    for ref in answer_refs:
        if ref.citation is not None:
            known.setdefault(ref.citation.label, ref.citation)
    for c in named:
        known.setdefault(c.label, c)
    return _run(obj, calls, source, line, tuple(known.values()), claims)


def calls_of(obj: dict[str, Any]) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(
            c["tool"],
            c.get("arguments", {}),
            c.get("response_sha256"),
            c.get("status", "ok"),
            c.get("response_text"),
            c.get("response_ref"),
        )
        for c in obj.get("tool_calls", [])
    )


def _unfinished(
    obj: dict[str, Any], status: str, calls: tuple[ToolCall, ...], source: str, line: int
) -> AgentRun:
    """A run with status error or limit: kept with its status, its tool calls and its logged
    text, but with no claims and no citations (a placeholder is not an answer)."""
    if status == "limit" and "limit" not in obj:
        _fail(
            source, line, "limit", "status limit needs the limit: {type, value?}", "missing_field"
        )
    return _run(obj, calls, source, line, (), ())


def _run(
    obj: dict[str, Any],
    calls: tuple[ToolCall, ...],
    source: str,
    line: int,
    cited: tuple[Citation, ...],
    claims: tuple[RunClaim, ...],
) -> AgentRun:
    enabled = obj.get("tools_enabled", True)
    if not enabled and calls:
        _fail(
            source,
            line,
            "tool_calls",
            f"{len(calls)} tool call(s) recorded in a run with tools_enabled=false",
        )
    status = obj.get("status", "ok")
    limit = obj.get("limit") or {}
    tokens = obj.get("tokens") or {}
    wall = obj.get("wall_time_s")
    value = limit.get("value")
    return AgentRun(
        run_id=obj["run_id"],
        task_id=obj["task_id"],
        model=obj["model"],
        answer=obj["answer"],
        cited=cited,
        tool_calls=calls,
        tools_enabled=enabled,
        prompt_tokens=tokens.get("prompt"),
        completion_tokens=tokens.get("completion"),
        wall_time_s=None if wall is None else float(wall),
        difficulty=obj.get("difficulty"),
        format_version=FORMAT_VERSION,
        claims=claims,
        error=(obj.get("error") or "error") if status == "error" else None,
        scores=dict(obj.get("scores", {})),
        metadata=dict(obj.get("metadata", {})),
        status=status,
        limit=limit.get("type") if status == "limit" else None,
        limit_value=None if status != "limit" or value is None else float(value),
    )
