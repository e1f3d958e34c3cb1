"""The agent-run model: one attempt of one model at one task, whatever format it came in (pure).

:class:`AgentRun` is what every run reader returns and every audit stage reads: the final answer,
the typed identifiers it cites (:class:`Citation`), its claims (:class:`RunClaim`, run format v2),
the ordered tool calls (:class:`ToolCall`) and the harness's fate of the run
(:data:`RUN_STATUSES`). The formats that produce it live beside it: :mod:`kit.runs.v1`
(``schemas/json/agent_run.schema.json``), :mod:`kit.runs.v2`
(``schemas/json/agent_run.v2.schema.json``) and the importers of other harnesses' logs
(:mod:`kit.runs.importers`); files are read by :mod:`kit.runs.reader` (docs/runs.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kit.core.errors import InputError, Location
from kit.corpus.identifiers import Identifier, canonical

TOOL_STATUSES = ("ok", "error", "timeout")
RUN_STATUSES = ("ok", "error", "limit")
"""A run's fate in its harness: ``ok`` it finished (success); ``error`` the harness failed on
it (``AgentRun.error`` holds the message); ``limit`` a limit cancelled it (``AgentRun.limit``
names which: message, token, time, ...). Only ``ok`` runs have an answer the audit reads."""
DEFAULT_MAX_ANSWER_CHARS = 100_000


@dataclass(frozen=True)
class Citation:
    """A typed identifier: ``id_type`` is a scheme of :data:`kit.corpus.identifiers.SCHEMES`
    (PMID, PMCID, DOI, ARXIV, NCT, URL); ``value`` the canonical identifier (a PMID's bare digits);
    ``version`` an arXiv version (None otherwise)."""

    id_type: str
    value: str
    version: int | None = None

    @property
    def identifier(self) -> Identifier:
        return Identifier(self.id_type, self.value, self.version)

    @property
    def label(self) -> str:
        return self.identifier.label


@dataclass(frozen=True)
class RunClaim:
    """A claim of a run-format v2 record (:mod:`kit.runs.v2`): given explicitly or extracted from the
    answer; ``cites`` are the identifiers (:attr:`Citation.label`) it cites, ``unresolved`` the
    markers that name no reference-list entry, ``ambiguous`` those that name several (two
    ``Smith 2020`` papers with no ``a``/``b`` to tell them apart): reported, never attached to
    any of them (:func:`kit.runs.extract.marker_targets`)."""

    text: str
    cites: tuple[str, ...]
    unresolved: tuple[str, ...] = ()
    ambiguous: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolCall:
    tool: str
    arguments: Mapping[str, Any] = field(hash=False)
    response_sha256: str | None
    status: str
    response_text: str | None = None  # run format v2: what the agent read
    response_ref: str | None = None  # run format v2: STORE#KEY of the text in a response store


@dataclass(frozen=True)
class AgentRun:
    run_id: str
    task_id: str
    model: str
    answer: str
    cited: tuple[Citation, ...]
    tool_calls: tuple[ToolCall, ...]
    tools_enabled: bool
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    wall_time_s: float | None = None
    difficulty: str | None = None
    # run format v2 (kit.runs.v2); v1 records keep the defaults
    format_version: int = 1
    claims: tuple[RunClaim, ...] = ()
    error: str | None = None  # the harness failed on this sample (a failed run, kept)
    scores: Mapping[str, Any] = field(default_factory=dict, hash=False)
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    status: str = "ok"  # RUN_STATUSES: ok, error, limit
    limit: str | None = None  # status limit: which limit (message, token, time, ...)
    limit_value: float | None = None  # and its value, when the harness logged it

    @property
    def failed(self) -> bool:
        """The harness failed on this run (status error)."""
        return self.status == "error"

    @property
    def completed(self) -> bool:
        """The run finished (status ok): only then is its answer audited as an answer."""
        return self.status == "ok"

    @property
    def status_detail(self) -> str:
        """The error message, or the limit that cancelled the run; empty for a finished run."""
        if self.status == "error":
            return self.error or "error"
        if self.status == "limit":
            value = "" if self.limit_value is None else f" {self.limit_value:g}"
            return f"{self.limit or 'unknown'} limit{value}"
        return ""

    @property
    def n_tool_calls(self) -> int:
        return len(self.tool_calls)


def parse_citation(text: str) -> Citation | None:
    """``PMID:123`` -> Citation('PMID', '123'); ``NCT01234567`` -> Citation('NCT', ...); a PMCID,
    DOI, arXiv id or URL in any spelling -> its canonical Citation; else None."""
    ident = canonical(text)
    return None if ident is None else Citation(ident.scheme, ident.value, ident.version)


def _fail(source: str, line: int, column: str, message: str, reason: str = "bad_field") -> None:
    raise InputError(reason, message, where=Location(source, line, column))


def check_answer_size(answer: str, source: str, line: int, max_answer_chars: int) -> None:
    """Refuse an answer over the size cap (both run-format versions)."""
    if len(answer) > max_answer_chars:
        _fail(
            source,
            line,
            "answer",
            f"answer has {len(answer)} characters, over the cap of {max_answer_chars}",
            "answer_too_large",
        )


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
