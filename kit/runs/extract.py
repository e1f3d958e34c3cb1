"""Claims and their citations from a run-format v2 record (pure).

A v2 run gives its claims explicitly (``claims: [{text, cites}]``) or leaves them to be read from
the answer. Reading uses the marker parser of :mod:`kit.runs.citations` against the run's
reference list: the ``citations`` entries (by ``key`` and by id), the entries of a ``References``
/ ``Sources`` section at the end of the answer and its footnote definitions ``[^1]: ...``
(:func:`split_reference_section`). Each entry is found by its number, its author-year key, its
PaperQA2 context and document, its footnote label (:func:`entry_keys`, keys of
:mod:`kit.runs.keys`). A marker is linked to its claim by :func:`marker_targets`: one citation
links; a marker naming no entry is kept on its claim as ``unresolved`` (a fabricated
reference), one naming several different papers as ``ambiguous``; neither is dropped, neither is
attached to a guessed entry.

Identifiers are recognised by the corpus layer (:mod:`kit.corpus.identifiers`: one reading of
every spelling, a PubMed link is a PMID wherever it stands) and made canonical by it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from string import ascii_lowercase

from kit.corpus.identifiers import SCHEMES, canonical, find_identifiers
from kit.runs.citations import identifier_ref, parse_answer
from kit.runs.keys import DOC_KEY, NAME, PAGES, author_year_ref, base_key, doc_ref
from kit.runs.model import Citation, RunClaim

SCHEME_ID_TYPE = {s.lower(): s for s in SCHEMES} | {"other": "OTHER"}
MARKERS = ("auto", "numeric", "identifiers", "author-year", "none")

_HEADING = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*"
    r"(?:references|reference list|sources|bibliography|works cited|citations)"
    r"[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_ENTRY = re.compile(r"^\s*(?:\[(\d{1,4})\]|(\d{1,4})[.)]|[-*•])\s+(.+)$")
# a footnote definition "[^1]: text" (up to 3 spaces before it); indented lines continue it
_FOOTNOTE_DEF = re.compile(r"^[ ]{0,3}\[\^([A-Za-z0-9_.-]{1,40})\]:[ \t]*(.*)$")
_CONTINUATION = re.compile(r"^(?:[ ]{2,}|\t)\S")
# a PaperQA2 entry's context key: "(Qian2011Neural pages 1-2): Qian, Lulu, ..."
_DOC_PREFIX = re.compile(rf"^\(\s*({DOC_KEY})(?:\s+pages?\s+({PAGES}))?\s*\)\s*:?\s*")
_SURNAME = re.compile(rf"^[\W_]*({NAME})")
_YEAR_PAREN = re.compile(r"\(((?:19|20)\d{2}[a-z]?)\)")
_YEAR = re.compile(r"\b((?:19|20)\d{2}[a-z]?)\b")

Index = dict[str, tuple[Citation | None, ...]]
"""Marker key or identifier -> the distinct citations of the entries it names (None: an entry
with no identifier). One: the key links; several: it is ambiguous (reported, never guessed)."""


@dataclass(frozen=True)
class Reference:
    """One entry of a run's reference list: the markers that name it, its identifier, and for a
    PaperQA2 context its document's name (lower case: entries sharing it are one document)."""

    keys: tuple[str, ...]
    citation: Citation | None  # None: an entry that gives no identifier (a bare title)
    doc: str | None = None


def identifiers_in(text: str) -> list[tuple[str, str]]:
    """(identifier as written, scheme) for each identifier in ``text``, in order, found by the
    corpus layer (:func:`kit.corpus.identifiers.find_identifiers`: any spelling it reads, a
    PubMed / PMC / doi.org / arXiv / ClinicalTrials.gov link read as that identifier); a DOI is
    given in its canonical form (no ``doi:`` / ``https://doi.org/`` prefix, lower case), and a
    URL of no other scheme counts only when the text names no other identifier. Every URL is
    read here: an entry of the answer's reference list is a reference by its place, so a web
    page it gives is that reference's identifier (URLs in the answer's prose are citations only
    when scholarly, :func:`kit.runs.citations.find_citations`)."""
    found: list[tuple[str, str]] = []
    for a, b, ident in find_identifiers(text):
        written = ident.value if ident.scheme == "DOI" else text[a:b]
        found.append((written, ident.scheme.lower()))
    named = [f for f in found if f[1] != "url"]
    return named or found


def to_citation(ident: str, scheme: str) -> Citation | None:
    """The audit's typed identifier for ``ident`` read in ``scheme``; None when a PMID or NCT id
    does not look like one (the reader reports it)."""
    id_type = SCHEME_ID_TYPE[scheme]
    if id_type == "OTHER":
        return Citation("OTHER", ident.strip())
    got = canonical(ident, default_scheme=id_type)  # one canonical form (kit.corpus)
    if got is None or (id_type in ("PMID", "NCT") and got.scheme != id_type):
        return None
    return Citation(got.scheme, got.value, got.version)


def _footnotes(answer: str) -> tuple[str, list[tuple[str, str]]]:
    """(answer without its footnote definitions, (label, text) of each definition). A
    definition is a line ``[^label]: text`` anywhere in the answer; the indented lines after it
    continue it."""
    kept: list[str] = []
    defs: list[tuple[str, str]] = []
    inside = False
    for line in answer.splitlines(keepends=True):
        if m := _FOOTNOTE_DEF.match(line.rstrip("\r\n")):
            defs.append((m.group(1).lower(), m.group(2).strip()))
            inside = True
        elif inside and _CONTINUATION.match(line):
            defs[-1] = (defs[-1][0], f"{defs[-1][1]} {line.strip()}")
        else:
            inside = False
            kept.append(line)
    return ("".join(kept) if defs else answer), defs


def entry_keys(text: str) -> tuple[list[str], str | None]:
    """(keys, document) of a reference entry's text (its number or label apart): a PaperQA2
    context key ``(Qian2011Neural pages 1-2): ...`` gives ``qian2011neural pages 1-2`` and the
    document ``qian2011neural``; the first author's surname (particles kept) and the year give
    the author-year key ``smith 2020`` -- the year in parentheses (APA ``(2020a)``) if there is
    one, else the first year -- and, when the year carries a suffix, ``smith 2020a`` too."""
    keys: list[str] = []
    doc = None
    if m := _DOC_PREFIX.match(text):
        doc = doc_ref(m.group(1))
        keys.append(doc_ref(m.group(1), m.group(2)))
        if m.group(2):
            keys.append(doc)
        text = text[m.end() :]
    surname = _SURNAME.match(text)
    year = _YEAR_PAREN.search(text) or _YEAR.search(text)
    if surname and year:
        ref = author_year_ref(surname.group(1), year.group(1))
        keys.extend(dict.fromkeys([ref, base_key(ref)]))
    return keys, doc


def _section_entries(section: str) -> list[tuple[list[str], str]]:
    """(number keys, text) of the entries of a reference section: ``[1] ...``, ``1. ...``,
    ``1) ...``, ``- ...`` lines, a line that starts no entry continuing the one before; a
    section where no line opens such an entry (APA lists are plain lines) has one entry per
    non-blank line."""
    lines = section.splitlines()
    entries: list[tuple[list[str], str]] = []
    for line in lines:
        if m := _ENTRY.match(line):
            number = m.group(1) or m.group(2)
            entries.append(([str(int(number))] if number else [], m.group(3)))
        elif line.strip() and entries:
            entries[-1] = (entries[-1][0], f"{entries[-1][1]} {line.strip()}")
    if not entries:
        entries = [([], line.strip()) for line in lines if line.strip()]
    return entries


def split_reference_section(answer: str) -> tuple[str, list[Reference]]:
    """(answer without its reference section and footnote definitions, their entries). The
    section starts at the last heading line ``References`` / ``Sources`` / ``Bibliography``
    (markdown ``#`` or ``**`` allowed); entries are ``[1] ...``, ``1. ...``, ``1) ...`` or
    ``- ...`` lines, a line that starts no entry continuing the one before (plain lines when
    none does: :func:`_section_entries`). Footnote
    definitions ``[^1]: ...`` anywhere are entries too (key ``^1``), never claims. Each entry's
    keys: :func:`entry_keys`; its identifier: the first that :func:`identifiers_in` reads."""
    answer, notes = _footnotes(answer)
    raw: list[tuple[list[str], str]] = [([f"^{label}"], text) for label, text in notes]
    heads = list(_HEADING.finditer(answer))
    body = answer
    if heads:
        head = heads[-1]
        body = answer[: head.start()].rstrip()
        raw = _section_entries(answer[head.end() :]) + raw
    refs = []
    for keys, text in raw:
        more, doc = entry_keys(text)
        ids = identifiers_in(text)
        citation = to_citation(*ids[0]) if ids else None
        refs.append(Reference(tuple(dict.fromkeys(keys + more)), citation, doc))
    return body, refs


def _distinct(cits: Sequence[Citation | None], one_document: bool) -> tuple[Citation | None, ...]:
    """The distinct citations of the entries a key names; for a document's name (entries of one
    document) those without an identifier do not count beside one that has one."""
    out = tuple(dict.fromkeys(cits))
    if one_document and any(c is not None for c in out):
        out = tuple(c for c in out if c is not None)
    return out


def _listed_names(ident: str, key: str | None) -> list[str]:
    """The names a ``citations`` entry is found by: its id, its identifier's ref, its key as
    written and lower case (and without a year suffix or pages, :func:`base_key`)."""
    names = [ident]
    if named := identifier_ref(ident):
        names.append(named[0])
    if key:
        low = " ".join(key.lower().split())
        names.extend([key, low, base_key(low)])
    return list(dict.fromkeys(names))


def reference_index(
    listed: Sequence[tuple[str, str, str | None]], answer_refs: Sequence[Reference]
) -> Index:
    """Marker key or identifier -> the distinct citations it names (:data:`Index`), from the
    run's ``citations`` (id, scheme, key) and the answer's reference entries. A key several
    entries share names each of their citations (two ``Smith 2020`` papers: ambiguous; one
    paper listed twice: one citation); the entries of one PaperQA2 document count as one
    paper. The run's ``citations`` win on a shared key."""
    found: dict[str, list[Citation | None]] = {}
    docs = {r.doc for r in answer_refs if r.doc}
    for ref in answer_refs:
        for k in ref.keys:
            found.setdefault(k, []).append(ref.citation)
    index = {k: _distinct(v, k in docs) for k, v in found.items()}
    given: dict[str, list[Citation | None]] = {}
    for ident, scheme, key in listed:
        cit = to_citation(ident, scheme)
        for name in _listed_names(ident, key):
            given.setdefault(name, []).append(cit)
    index.update({k: _distinct(v, False) for k, v in given.items()})
    return index


def marker_targets(ref: str, style: str, index: Index) -> tuple[Citation | None, ...]:
    """The citations a parsed marker ref may name: one links, several are ambiguous, none (or
    ``(None,)``, an entry without identifier) is unresolved.

    * author-year ``smith 2020a``: the entry keyed so; else, when no entry of ``smith 2020``
      carries a suffix, the entries of ``smith 2020`` (a suffix the list does not use);
    * document key ``qian2011neural pages 1-2``: the entry with those pages if it has an
      identifier, else the document's entries (one paper, or ambiguous);
    * numeric, footnote: the entry; a self-naming identifier: its entry, else itself."""
    if style == "author-year":
        if ref in index:
            return index[ref]
        base = base_key(ref)
        if base != ref and any(f"{base}{c}" in index for c in ascii_lowercase):
            return ()
        return index.get(base, ())
    if style == "doc-key":
        exact = index.get(ref, ())
        if len(exact) == 1 and exact[0] is not None:
            return exact
        return index.get(base_key(ref), ()) or exact
    if ref in index:
        return index[ref]
    if style in ("numeric", "footnote"):
        return ()
    got = canonical(ref)
    return () if got is None else (Citation(got.scheme, got.value, got.version),)


def marker_citation(ref: str, style: str, index: Index) -> Citation | None:
    """The one citation a parsed marker ref names (:func:`marker_targets`); None when it names
    none or is ambiguous."""
    targets = marker_targets(ref, style, index)
    return targets[0] if len(targets) == 1 else None


def claims_from_answer(
    answer: str, index: Index, markers: str = "auto"
) -> tuple[tuple[RunClaim, ...], tuple[Citation, ...]]:
    """Every sentence of ``answer`` (reference section and footnote definitions removed) with
    the labels it cites, and the citations those labels name (in order of first mention). A
    marker ref naming several citations is kept on its claim as ``ambiguous``, one naming none
    as ``unresolved``; neither is attached to any entry.

    ``markers``: ``auto`` reads numeric and key markers only against ``index``;
    ``numeric`` reads numeric brackets even without a list; ``identifiers`` reads self-naming
    identifiers only; ``none`` extracts nothing."""
    if markers == "none":
        return (), ()
    body, _ = split_reference_section(answer)
    keys = frozenset() if markers == "identifiers" else frozenset(index)
    references = None if markers == "numeric" and not any(k.isdigit() for k in keys) else keys
    out = []
    named: dict[str, Citation] = {}
    for claim in parse_answer(body, references):
        cites: list[str] = []
        unresolved: list[str] = []
        ambiguous: list[str] = []
        for marker in claim.citations:
            for ref in marker.refs:
                targets = marker_targets(ref, marker.style, index)
                if len(targets) > 1:
                    ambiguous.append(ref)
                elif targets and (cit := targets[0]) is not None:
                    cites.append(cit.label)
                    named.setdefault(cit.label, cit)
                else:
                    unresolved.append(ref)
        out.append(
            RunClaim(claim.text, tuple(dict.fromkeys(cites)), tuple(unresolved), tuple(ambiguous))
        )
    return tuple(out), tuple(named.values())
