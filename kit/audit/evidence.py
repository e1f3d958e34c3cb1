"""What the agent read about each cited identifier: the tool responses of its run (pure).

Run format v2 keeps each tool call's ``response_text`` (docs/runs.md). For a citation of a run,
the *agent-read passage* is assembled from the responses of its successful tool calls, in call
order (declared rule):

* a call whose ``arguments`` ask for the identifier and no other paper (``{"pmid": "21645374"}``,
  ``{"id": "doi:..."}``, E-utilities ``{"db": "pubmed", "id": "21645374"}`` -- any spelling
  :func:`kit.corpus.identifiers.canonical` reads; an argument named after a scheme, or an
  ``id`` / ``ids`` argument beside ``db``, read in that scheme; comma-separated lists read item
  by item; a bare number under ``id`` / ``ids`` with no ``db``, ``{"id": 12345}``, is the PMID
  -- or the PMC id -- that exactly one record of its response names, in its identifiers or as a
  whole token of its text) contributes its whole response
  (:func:`kit.audit.records.whole_record`): the agent asked for that paper, whatever records the
  response prints;
* else the response is cut into the records it lists (:func:`kit.audit.records.split_records`:
  a parser per record format -- E-utilities XML, JSON, MEDLINE, PubMed's abstract text --, else
  key-value blocks, one paper, headings / numbered / bulleted entries, identifier-led lines,
  paragraphs); every record whose own
  identifiers (:attr:`kit.audit.records.Record.keys`: its id fields and header lines, not a
  mention in its prose) name the identifier contributes its whole text -- so a PMID, the PMCID
  and the DOI of one record read the same passage, wherever in the record they stand; a call
  that asked for several papers, this one among them, contributes its whole response when no
  record of it names the identifier;
* a record holding only a title and metadata (no passage, :attr:`kit.audit.records.Record.passage`)
  is read but gives nothing to verify against: when every record the agent read about the
  identifier is such, the read is kept with an empty text and L2 reports ``no_passage`` rather
  than scoring the claim against a title;
* an identifier outside every scheme (``OTHER``) counts when its text occurs literally;
* the read names the record format(s) of the records it took
  (:attr:`kit.grade.citation_audit.AgentRead.record_format`: each record's
  :attr:`~kit.audit.records.Record.format`, distinct ones joined with ``+`` in call order).

A response kept only as ``response_ref`` (a pointer into a response store) cannot be read: this
kit has no response-store reader yet, so such calls are counted (:func:`unread_refs`) and the
citation falls back to the corpus passage. A failed call (status error / timeout) is not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from kit.audit.records import Record, split_records, whole_record
from kit.audit.records_json import one_paper
from kit.corpus.identifiers import SCHEMES, canonical
from kit.grade.citation_audit import AgentRead
from kit.runs.model import AgentRun, Citation, ToolCall

# An argument named like a scheme holds a bare value of that scheme ({"pmid": "123"}).
_ARG_SCHEME = {s.lower(): s for s in SCHEMES} | {
    "pubmed_id": "PMID",
    "pmids": "PMID",
    "pmc": "PMCID",
    "pmcids": "PMCID",
    "dois": "DOI",
    "nct_id": "NCT",
    "arxiv_id": "ARXIV",
}
# E-utilities: an id argument read in the scheme of the database argument ({"db": "pubmed"})
_DB_SCHEME = {"pubmed": "PMID", "pmc": "PMCID"}
_ID_ARGS = frozenset(("id", "ids", "uid", "uids", "identifier", "identifiers"))
_ITEMS = re.compile(r"[\s,;]+")


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


def _read(text: str, scheme: str | None, listed: bool) -> list[tuple[str, str]]:
    """The identifiers one argument value names: read whole, else (``listed``: an argument
    named after a scheme, or an id argument) item by item."""
    ident = canonical(text, default_scheme=scheme) if scheme else canonical(text)
    if ident is not None or not listed:
        return [ident.key] if ident is not None else []
    items = (
        canonical(t, default_scheme=scheme) if scheme else canonical(t) for t in _ITEMS.split(text)
    )
    return [i.key for i in items if i is not None]


def argument_keys(arguments: Mapping[str, Any]) -> set[tuple[str, str]]:
    """(scheme, canonical value) of every identifier a tool call was asked for (module doc:
    ``{"pmid": "123"}``, ``{"db": "pubmed", "id": "1,2,3"}``, ``{"id": "doi:..."}``)."""
    lower = {str(k).lower(): v for k, v in arguments.items()}
    db = _DB_SCHEME.get(str(lower.get("db", "")).lower())
    out: set[tuple[str, str]] = set()
    for name, value in lower.items():
        scheme = _ARG_SCHEME.get(name) or (db if name in _ID_ARGS else None)
        listed = scheme is not None or name in _ID_ARGS
        for text in _strings(value):
            out.update(_read(text, scheme, listed))
    return out


def bare_numbers(arguments: Mapping[str, Any]) -> list[str]:
    """The bare numbers (``12345``, ``"12345"``) of a call's ``id`` / ``ids`` arguments when no
    ``db`` argument names their scheme: a PMID or a PMC number, the response tells which."""
    lower = {str(k).lower(): v for k, v in arguments.items()}
    if str(lower.get("db", "")).lower() in _DB_SCHEME:
        return []
    out: list[str] = []
    for name, value in lower.items():
        if name in _ID_ARGS:
            out += [t for text in _strings(value) for t in _ITEMS.split(text) if t.isdigit()]
    return [str(int(t)) for t in out if int(t) > 0]


def _named_number(number: str, records: Sequence[Record]) -> tuple[str, str] | None:
    """The key a bare ``number`` stands for (module rule): the PMID ``number`` or the PMC id
    ``PMC<number>`` when exactly one record names it -- in its own identifiers, else as a
    whole token of its text (``{"id": 12345, "title": ...}``)."""
    keyed = [r for r in records if {("PMID", number), ("PMCID", f"PMC{number}")} & r.keys]
    token = re.compile(rf"(?<![\w.]){number}(?![\w.])")
    named = keyed or [r for r in records if token.search(r.text)]
    if len(named) != 1:
        return None
    return (
        ("PMCID", f"PMC{number}")
        if ("PMCID", f"PMC{number}") in named[0].keys
        else (
            "PMID",
            number,
        )
    )


def asked_keys(arguments: Mapping[str, Any], text: str) -> set[tuple[str, str]]:
    """:func:`argument_keys`, plus each bare number (:func:`bare_numbers`) read as the PMID or
    PMC id that one record of the response ``text`` names (:func:`_named_number`)."""
    out = argument_keys(arguments)
    numbers = bare_numbers(arguments)
    if numbers:
        recs = _records(text)
        out |= {k for k in (_named_number(n, recs) for n in numbers) if k is not None}
    return out


@lru_cache(maxsize=128)
def _records(text: str) -> tuple[Record, ...]:
    return tuple(split_records(text))


def response_records(text: str, citation: Citation) -> list[Record]:
    """The records of one response ``text`` that name ``citation`` (module rule)."""
    if citation.id_type not in SCHEMES:
        literal = bool(citation.value) and citation.value in text
        return [whole_record(text)] if literal else []
    key = _key(citation)
    return [r for r in _records(text) if key in r.keys]


def response_segment(text: str, citation: Citation) -> str | None:
    """The part of one response ``text`` that concerns ``citation`` (its records), or None."""
    recs = response_records(text, citation)
    return "\n\n".join(r.text for r in recs) if recs else None


def _readable(call: ToolCall) -> bool:
    return call.status == "ok" and bool(call.response_text)


def _call_records(call: ToolCall, citation: Citation) -> list[Record]:
    """The records of one call about ``citation`` (module rule): the whole response when the
    call asked for this paper alone, else the records naming it, else the whole response when
    the call asked for it among others."""
    text = str(call.response_text)
    asked = asked_keys(call.arguments, text) if citation.id_type in SCHEMES else set()
    if _key(citation) in asked and one_paper(asked):
        return [whole_record(text)]
    recs = response_records(text, citation)
    return recs if recs or _key(citation) not in asked else [whole_record(text)]


def agent_read(run: AgentRun, citation: Citation) -> AgentRead | None:
    """The agent-read passage for one citation of ``run`` (module rule), or None when the agent
    read nothing about it; an empty ``text`` when it read only records without a passage."""
    parts: list[str] = []
    calls: list[int] = []
    formats: list[str] = []
    bare: list[int] = []  # calls whose records about the citation hold no passage
    bare_formats: list[str] = []
    for i, call in enumerate(run.tool_calls):
        if not _readable(call):
            continue
        recs = _call_records(call, citation)
        with_text = [r for r in recs if r.passage]
        if with_text:
            parts.append("\n\n".join(r.text for r in with_text))
            calls.append(i)
            formats.extend(r.format for r in with_text)
        elif recs:
            bare.append(i)
            bare_formats.extend(r.format for r in recs)
    if parts:
        return AgentRead("\n\n".join(parts), tuple(calls), _joined(formats))
    return AgentRead("", tuple(bare), _joined(bare_formats)) if bare else None


def _joined(formats: list[str]) -> str:
    """Distinct record formats in call order, joined with ``+`` (``pubmed-abstract+json``)."""
    return "+".join(dict.fromkeys(formats))


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


def citation_pairs(
    cites: Any, runs: Sequence[AgentRun], passage_of: Callable[[str, str], str | None]
) -> dict[str, tuple[str, str]]:
    """item_id (RUN_ID/CLAIM_NO/CITATION) -> (claim, passage) of every scored citation, the
    passage as L2 read it: what the agent read when that decided (evidence tool_response), else
    the corpus passage."""
    by_id = {r.run_id: r for r in runs}
    out: dict[str, tuple[str, str]] = {}
    scored = cites[cites["support_score"].notna()]
    for r in scored.itertuples(index=False):
        text = None
        if r.evidence == "tool_response":
            run = by_id[r.run_id]
            cit = next(c for c in run.cited if c.label == r.citation)
            read = agent_read(run, cit)
            text = None if read is None else read.text
        if not text:
            text = passage_of(str(r.id_type), str(r.value))
        if text:
            out[f"{r.run_id}/{r.claim_no}/{r.citation}"] = (str(r.claim), text)
    return out
