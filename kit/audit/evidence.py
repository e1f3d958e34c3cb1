"""What the agent read about each cited identifier: the tool responses of its run (pure).

Run format v2 keeps each tool call's ``response_text`` (docs/runs.md). For a citation of a run,
the *agent-read passage* is assembled from the responses of its successful tool calls, in call
order (declared rule):

* a call whose ``arguments`` name the identifier (``{"pmid": "21645374"}``, ``{"id": "doi:..."}``
  -- any spelling :func:`kit.corpus.identifiers.canonical` reads, an argument named after a
  scheme read in that scheme) contributes its whole response: the agent asked for that paper;
* otherwise a response that names the identifier (any spelling,
  :func:`kit.corpus.identifiers.find_identifiers`) contributes its whole text when it names no
  other identifier, else the record that identifier heads: from each mention up to the next
  mention of a different identifier (search results list one record per paper, identifier
  first). A response naming the identifier only after its record's text is cut at the mention
  -- a known limit of this rule;
* an identifier outside every scheme (``OTHER``) counts when its text occurs literally.

A response kept only as ``response_ref`` (a pointer into a response store) cannot be read: this
kit has no response-store reader yet, so such calls are counted (:func:`unread_refs`) and the
citation falls back to the corpus passage. A failed call (status error / timeout) is not read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kit.corpus.identifiers import SCHEMES, canonical, find_identifiers
from kit.grade.citation_audit import AgentRead
from kit.grade.runs import AgentRun, Citation, ToolCall

# An argument named like a scheme holds a bare value of that scheme ({"pmid": "123"}).
_ARG_SCHEME = {s.lower(): s for s in SCHEMES} | {
    "pubmed_id": "PMID",
    "pmc": "PMCID",
    "nct_id": "NCT",
    "arxiv_id": "ARXIV",
}


def _key(c: Citation) -> tuple[str, str]:
    return (c.id_type, c.value)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, int) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def argument_keys(arguments: Mapping[str, Any]) -> set[tuple[str, str]]:
    """(scheme, canonical value) of every identifier a tool call was asked for."""
    out: set[tuple[str, str]] = set()
    for name, value in arguments.items():
        scheme = _ARG_SCHEME.get(str(name).lower())
        for text in _strings(value):
            ident = canonical(text, default_scheme=scheme) if scheme else canonical(text)
            if ident is not None:
                out.add(ident.key)
    return out


def response_segment(text: str, citation: Citation) -> str | None:
    """The part of one response ``text`` that concerns ``citation`` (module rule), or None."""
    if citation.id_type not in SCHEMES:
        return text if citation.value and citation.value in text else None
    key = _key(citation)
    found = find_identifiers(text)
    mine = [i for i, (_, _, ident) in enumerate(found) if ident.key == key]
    if not mine:
        return None
    if all(ident.key == key for _, _, ident in found):
        return text
    spans: list[tuple[int, int]] = []
    for i in mine:
        start = found[i][0]
        end = next((s for s, _, ident in found[i + 1 :] if ident.key != key), len(text))
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return "\n".join(text[s:e].strip() for s, e in spans)


def _readable(call: ToolCall) -> bool:
    return call.status == "ok" and bool(call.response_text)


def agent_read(run: AgentRun, citation: Citation) -> AgentRead | None:
    """The agent-read passage for one citation of ``run`` (module rule), or None."""
    parts: list[str] = []
    calls: list[int] = []
    for i, call in enumerate(run.tool_calls):
        if not _readable(call):
            continue
        text = str(call.response_text)
        if citation.id_type in SCHEMES and _key(citation) in argument_keys(call.arguments):
            part: str | None = text
        else:
            part = response_segment(text, citation)
        if part:
            parts.append(part)
            calls.append(i)
    return AgentRead("\n\n".join(parts), tuple(calls)) if parts else None


def agent_read_rows(
    runs: Sequence[AgentRun], run_ids: Sequence[str], cites: Sequence[Citation]
) -> list[AgentRead | None]:
    """:func:`agent_read` for each citation row (``run_ids[i]``, ``cites[i]``)."""
    by_id = {r.run_id: r for r in runs}
    memo: dict[tuple[str, Citation], AgentRead | None] = {}
    out: list[AgentRead | None] = []
    for rid, c in zip(run_ids, cites, strict=True):
        if (rid, c) not in memo:
            memo[(rid, c)] = agent_read(by_id[rid], c)
        out.append(memo[(rid, c)])
    return out


def unread_refs(runs: Sequence[AgentRun]) -> int:
    """Tool calls that kept their response only as ``response_ref`` (not readable here)."""
    return sum(1 for r in runs for c in r.tool_calls if c.response_ref and c.response_text is None)
