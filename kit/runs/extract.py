"""Claims and their citations from a run-format v2 record (pure).

A v2 run gives its claims explicitly (``claims: [{text, cites}]``) or leaves them to be read from
the answer. Reading uses the marker parser of :mod:`kit.runs.citations` against the run's
reference list: the ``citations`` entries (by ``key`` and by id) and the numbered or author-year
entries of a ``References`` / ``Sources`` section at the end of the answer. A numeric marker
naming no entry is kept on its claim as ``unresolved`` (a fabricated reference), never dropped.

Identifiers are recognised by the corpus layer (:mod:`kit.corpus.identifiers`: one reading of
every spelling, a PubMed link is a PMID wherever it stands) and made canonical by it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kit.corpus.identifiers import SCHEMES, canonical, find_identifiers
from kit.runs.citations import author_year_key, identifier_ref, parse_answer
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
_SURNAME = re.compile(r"^\W*([A-Z][\w'’-]+)")
_YEAR = re.compile(r"\b((?:19|20)\d{2})[a-z]?\b")


@dataclass(frozen=True)
class Reference:
    """One entry of a run's reference list: the markers that name it and its identifier."""

    keys: tuple[str, ...]
    citation: Citation | None  # None: an entry that gives no identifier (a bare title)


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


def split_reference_section(answer: str) -> tuple[str, list[Reference]]:
    """(answer without its reference section, the section's entries). The section starts at
    the last heading line ``References`` / ``Sources`` / ``Bibliography`` (markdown ``#`` or
    ``**`` allowed); entries are ``[1] ...``, ``1. ...``, ``1) ...`` or ``- ...`` lines, a line
    that starts no entry continuing the one before."""
    heads = list(_HEADING.finditer(answer))
    if not heads:
        return answer, []
    head = heads[-1]
    raw: list[tuple[str | None, str]] = []
    for line in answer[head.end() :].splitlines():
        if m := _ENTRY.match(line):
            raw.append((m.group(1) or m.group(2), m.group(3)))
        elif line.strip() and raw:
            raw[-1] = (raw[-1][0], f"{raw[-1][1]} {line.strip()}")
    refs = []
    for number, text in raw:
        keys = [str(int(number))] if number else []
        surname, year = _SURNAME.match(text), _YEAR.search(text)
        if surname and year:
            keys.append(author_year_key(surname.group(1), year.group(1)))
        ids = identifiers_in(text)
        refs.append(Reference(tuple(keys), to_citation(*ids[0]) if ids else None))
    return answer[: head.start()].rstrip(), refs


def reference_index(
    listed: Sequence[tuple[str, str, str | None]], answer_refs: Sequence[Reference]
) -> dict[str, Citation | None]:
    """Marker key or identifier -> citation, from the run's ``citations`` (id, scheme, key) and
    the answer's reference section (listed entries win on a shared key)."""
    index: dict[str, Citation | None] = {}
    for ref in answer_refs:
        for k in ref.keys:
            index.setdefault(k, ref.citation)
    for ident, scheme, key in listed:
        cit = to_citation(ident, scheme)
        names = [ident] + ([key] if key else [])
        if named := identifier_ref(ident):
            names.append(named[0])
        for name in names:
            index[name.lower() if name[:1].isalpha() and " " in name else name] = cit
    return index


def marker_citation(ref: str, style: str, index: dict[str, Citation | None]) -> Citation | None:
    """The citation a parsed marker ref names: its reference-list entry, else (for a
    self-naming identifier) the identifier itself; None for a numeric / author-year key that
    names no entry."""
    if ref in index:
        return index[ref]
    if style in ("numeric", "author-year"):
        return None
    got = canonical(ref)
    return None if got is None else Citation(got.scheme, got.value, got.version)


def claims_from_answer(
    answer: str, index: dict[str, Citation | None], markers: str = "auto"
) -> tuple[tuple[RunClaim, ...], tuple[Citation, ...]]:
    """Every sentence of ``answer`` (reference section removed) with the labels it cites, and
    the citations those labels name (in order of first mention).

    ``markers``: ``auto`` reads numeric / author-year markers only against ``index``;
    ``numeric`` reads numeric brackets even without a list; ``identifiers`` reads self-naming
    identifiers only; ``none`` extracts nothing."""
    if markers == "none":
        return (), ()
    body, _ = split_reference_section(answer)
    keys = frozenset(k for k in index if k.isdigit() or " " in k)
    if markers == "identifiers":
        keys = frozenset()
    references = None if markers == "numeric" and not any(k.isdigit() for k in keys) else keys
    out = []
    named: dict[str, Citation] = {}
    for claim in parse_answer(body, references):
        cites: list[str] = []
        unresolved: list[str] = []
        for marker in claim.citations:
            for ref in marker.refs:
                if cit := marker_citation(ref, marker.style, index):
                    cites.append(cit.label)
                    named.setdefault(cit.label, cit)
                else:
                    unresolved.append(ref)
        out.append(RunClaim(claim.text, tuple(dict.fromkeys(cites)), tuple(unresolved)))
    return tuple(out), tuple(named.values())
