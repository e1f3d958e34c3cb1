"""Run format v1: one JSON object per line, one line per (model, task) attempt (pure).

Seed 002 (OpenBioRQ), Section "Agentic evaluation" and Appendix B (harness): "Traces record the
final answer, ordered tool calls, token usage, and wallclock time"; the trace also carries the
cited identifiers. The JSON Schema is ``schemas/json/agent_run.schema.json``; this module turns
one already-decoded JSON object into a frozen :class:`~kit.runs.model.AgentRun` (file reading
lives in :mod:`kit.runs.reader`). A record::

    {"run_id": "glm-t0001", "task_id": "t0001", "model": "GLM-5.1",
     "answer": "... (PMID:21645374)", "cited": ["PMID:21645374", "NCT01234567"],
     "tool_calls": [{"tool": "pubmed_search", "arguments": {"q": "lace plant PCD"},
                     "response_sha256": "<64 hex>", "status": "ok"}],
     "tokens": {"prompt": 812, "completion": 240}, "wall_time_s": 12.5,
     "tools_enabled": true, "difficulty": "core"}

``cited`` holds typed identifiers: ``PMID:<digits>`` or ``NCT<8 digits>`` (the two identifier
types of the paper's citation audit, Appendix C.1), and -- read by
:func:`kit.corpus.identifiers.canonical` -- PMCIDs, DOIs (any prefix or URL form), arXiv ids (with or
without version) and URLs; each is kept in its canonical form. ``difficulty`` is optional.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from kit.core.errors import InputError, Location
from kit.runs.model import (
    DEFAULT_MAX_ANSWER_CHARS,
    TOOL_STATUSES,
    AgentRun,
    Citation,
    ToolCall,
    check_answer_size,
    parse_citation,
)

REQUIRED = ("run_id", "task_id", "model", "answer", "cited", "tool_calls", "tools_enabled")
OPTIONAL = ("tokens", "wall_time_s", "difficulty")


def _fail(source: str, line: int, column: str, message: str, reason: str = "bad_field") -> None:
    raise InputError(reason, message, where=Location(source, line, column))


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def run_from_dict(
    obj: Any,
    source: str = "<runs>",
    line: int = 1,
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
) -> AgentRun:
    """Validate one decoded record; any problem is an InputError naming source, line and field.

    The checks mirror ``schemas/json/agent_run.schema.json`` (kept by hand so the message names
    the line and the field; tests check the two agree on the example file).
    """
    if not isinstance(obj, dict):
        _fail(source, line, "<record>", f"expected a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        _fail(source, line, unknown[0], f"unknown field(s) {', '.join(unknown)}", "unknown_field")
    for key in REQUIRED:
        if key not in obj:
            _fail(source, line, key, f"missing required field '{key}'", "missing_field")
    for key in ("run_id", "task_id", "model"):
        v = obj[key]
        if not isinstance(v, str) or not v.strip():
            _fail(source, line, key, f"expected a non-empty string, got {v!r}")
    answer = obj["answer"]
    if not isinstance(answer, str):
        _fail(
            source, line, "answer", f"expected a string (may be empty), got {type(answer).__name__}"
        )
    check_answer_size(answer, source, line, max_answer_chars)
    cited_raw = obj["cited"]
    if not isinstance(cited_raw, list):
        _fail(source, line, "cited", "expected a list of identifiers")
    cited: list[Citation] = []
    for i, c in enumerate(cited_raw):
        parsed = parse_citation(c) if isinstance(c, str) else None
        if parsed is None:
            _fail(
                source,
                line,
                f"cited[{i}]",
                f"expected an identifier (PMID:<digits>, NCT<8 digits>, PMC<digits>, a DOI, an arXiv "
                f"id or an http(s) URL), got {c!r}",
            )
        cited.append(parsed)  # type: ignore[arg-type]
    calls_raw = obj["tool_calls"]
    if not isinstance(calls_raw, list):
        _fail(source, line, "tool_calls", "expected an ordered list of tool calls")
    calls: list[ToolCall] = []
    for i, c in enumerate(calls_raw):
        col = f"tool_calls[{i}]"
        if not isinstance(c, dict):
            _fail(source, line, col, "expected an object")
        if not isinstance(c.get("tool"), str) or not c["tool"]:
            _fail(source, line, f"{col}.tool", "missing or empty tool name", "missing_field")
        args = c.get("arguments", {})
        if not isinstance(args, dict):
            _fail(source, line, f"{col}.arguments", "expected an object")
        h = c.get("response_sha256")
        if h is not None and not (isinstance(h, str) and re.fullmatch(r"[0-9a-f]{64}", h)):
            _fail(
                source, line, f"{col}.response_sha256", f"expected 64 hex digits or null, got {h!r}"
            )
        status = c.get("status", "ok")
        if status not in TOOL_STATUSES:
            _fail(source, line, f"{col}.status", f"expected one of {TOOL_STATUSES}, got {status!r}")
        calls.append(ToolCall(c["tool"], args, h, status))
    enabled = obj["tools_enabled"]
    if not isinstance(enabled, bool):
        _fail(source, line, "tools_enabled", f"expected true or false, got {enabled!r}")
    if not enabled and calls:
        _fail(
            source,
            line,
            "tool_calls",
            f"{len(calls)} tool call(s) recorded in a run with tools_enabled=false",
        )
    tokens = obj.get("tokens") or {}
    if not isinstance(tokens, dict):
        _fail(source, line, "tokens", "expected an object {prompt, completion}")
    for k in ("prompt", "completion"):
        v = tokens.get(k)
        if v is not None and not (_is_int(v) and v >= 0):
            _fail(source, line, f"tokens.{k}", f"expected an integer >= 0, got {v!r}")
    wall = obj.get("wall_time_s")
    if wall is not None and not (
        isinstance(wall, int | float) and not isinstance(wall, bool) and wall >= 0
    ):
        _fail(source, line, "wall_time_s", f"expected a number >= 0, got {wall!r}")
    diff = obj.get("difficulty")
    if diff is not None and not isinstance(diff, str):
        _fail(source, line, "difficulty", f"expected a string, got {diff!r}")
    return AgentRun(
        run_id=obj["run_id"],
        task_id=obj["task_id"],
        model=obj["model"],
        answer=answer,
        cited=tuple(cited),
        tool_calls=tuple(calls),
        tools_enabled=enabled,
        prompt_tokens=tokens.get("prompt"),
        completion_tokens=tokens.get("completion"),
        wall_time_s=None if wall is None else float(wall),
        difficulty=diff,
    )


def run_to_dict(run: AgentRun) -> dict[str, Any]:
    """The inverse of :func:`run_from_dict` (the record as written to a runs file)."""
    out: dict[str, Any] = {
        "run_id": run.run_id,
        "task_id": run.task_id,
        "model": run.model,
        "answer": run.answer,
        "cited": [c.label for c in run.cited],
        "tool_calls": [
            {
                "tool": c.tool,
                "arguments": dict(c.arguments),
                "response_sha256": c.response_sha256,
                "status": c.status,
            }
            for c in run.tool_calls
        ],
        "tools_enabled": run.tools_enabled,
    }
    if run.prompt_tokens is not None or run.completion_tokens is not None:
        out["tokens"] = {"prompt": run.prompt_tokens, "completion": run.completion_tokens}
    if run.wall_time_s is not None:
        out["wall_time_s"] = run.wall_time_s
    if run.difficulty is not None:
        out["difficulty"] = run.difficulty
    return out


def run_line(run: AgentRun) -> str:
    """One canonical JSON line (sorted keys, no spaces)."""
    return json.dumps(run_to_dict(run), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def to_guard_record(run: AgentRun, passage_of: Callable[[Citation], str | None]) -> dict[str, Any]:
    """The citation guard's input record for one run (``schemas/json/guard_answers.schema.json``:
    answer_id, answer, passages as {passage id: text}, meta).

    Passage ids are the labels (``PMID:123``, ``NCT01234567``) that the guard's marker resolver
    matches. A cited identifier whose text ``passage_of`` cannot supply is listed in
    ``meta.unresolved`` rather than silently dropped.
    """
    passages: dict[str, str] = {}
    unresolved: list[str] = []
    for c in run.cited:
        text = passage_of(c)
        if text:
            passages[c.label] = text
        else:
            unresolved.append(c.label)
    return {
        "answer_id": run.run_id,
        "answer": run.answer,
        "passages": passages,
        "meta": {
            "model": run.model,
            "task_id": run.task_id,
            "tools_enabled": run.tools_enabled,
            "unresolved": unresolved,
        },
    }
