"""Name-based citation markers and the reference-list keys they name (pure).

The marker parser (:mod:`kit.runs.citations`) reads numbers and identifiers itself; the markers
here name a reference-list entry by a *key* and are citations only against a list that holds
that key (:mod:`kit.runs.extract` builds the list), since a name and a year in parentheses is
ordinary prose otherwise. Keys are lower case:

* **author-year** ``"smith 2020"`` -- the first author's surname (particles kept:
  ``"van der berg 2018"``) and the year; a year suffix is kept on the marker's ref
  (``"smith 2020a"``) and :func:`base_key` drops it. Parenthetical: ``(Smith et al., 2020; Lee
  2019)``, ``(Smith et al. 2020a)``, ``(Smith & Lee, 2020)``, ``(Smith and Lee 2019, 2021)``
  (two refs), ``(see García-López et al., 2021)``; pieces are separated by ``;`` or ``,``.
  Narrative: ``Smith et al. (2020) showed``, ``Smith and Lee (2019)``, ``van der Berg et al.
  (2018)``: only the parenthesised year is the marker, so the names stay in the claim's text
  (``Smith et al. showed ...``: who showed it is part of what is claimed).
* **document key** (PaperQA2) ``"qian2011neural pages 1-2"`` / ``"qian2011neural"`` -- a key
  ``Surname + year + word`` with or without ``pages N-M``: ``(Qian2011Neural pages 1-2,
  Qian2011Neural pages 15-16)``, ``(Smith2020 pages 3-4; Lee2019a pages 1-1)``,
  ``(Qian2011Neural)``; :func:`base_key` is the document's name.
* **footnote** ``"^1"`` / ``"^note"`` -- ``[^1]``, read when the answer defines a footnote.

A parenthesis is a marker of a family when every piece reads as that family and at least one
piece's :func:`base_key` is listed (or, for document keys with pages, when the list holds
PaperQA2 contexts at all: :func:`doc_key_refs`); the other pieces stay on the marker (they
resolve to no entry: unresolved, a fabricated reference). Regexes are linear: each piece is matched inside a
parenthesis of at most 300 characters, and the narrative names before a year are bounded
(:data:`MAX_COAUTHORS` commas, 40-character words).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection

MAX_COAUTHORS = 6
_PARTICLE = r"(?i:van|von|der|den|de|del|della|dei|di|da|dos|das|du|la|le|ter|ten|al|el|bin)"
# a capitalised surname (Latin letters with accents), hyphens and apostrophes inside
_UPPER = "A-ZÀ-ÖØ-ÞĀ-ž"
NAME = rf"(?:{_PARTICLE}\s+){{0,3}}[{_UPPER}][\w'’-]{{0,40}}"
"""A surname (regex text): up to three particles (``van der``), a capital, letters, ``-``
``'``."""
DOC_KEY = r"[A-Za-z][A-Za-z'-]{0,40}(?:19|20)\d{2}[A-Za-z0-9]{0,40}"
"""A PaperQA2 document name (regex text): letters, a year, letters or digits
(``Qian2011Neural``, ``Lee2019a``)."""
PAGES = r"\d{1,5}(?:\s*[-–—]\s*\d{1,5})?"
"""A page or page range (regex text): ``1-2``, ``15``."""
_NAME = NAME
_ET_AL = r"\s+et\s+al\.?"
# the authors of one citation: "Smith", "Smith et al.", "Smith & Lee", "Smith, Lee and Wu"
_AUTHORS = (
    rf"(?P<first>{_NAME})(?:{_ET_AL}"
    rf"|(?:\s*,\s*{_NAME}){{0,{MAX_COAUTHORS}}},?\s*(?:\s(?:and)|&)\s+{_NAME}(?:{_ET_AL})?)?"
)
_YEAR = r"(?:19|20)\d{2}[a-z]?(?![\w])"
_AY_PIECE = re.compile(
    rf"(?:(?:see|e\.g\.|cf\.|i\.e\.),?\s+)?{_AUTHORS},?\s+(?P<years>{_YEAR}(?:\s*,\s*{_YEAR})*)"
)
_AY_SEP = re.compile(r"\s*[;,]\s*")
_YEAR_ONE = re.compile(r"(19|20)(\d{2})([a-z]?)")
# a narrative citation: the authors, then the year(s) in parentheses
_NARRATIVE = re.compile(
    rf"(?<![\w'’.-]){_AUTHORS}\s*(?P<paren>\(\s*(?P<years>{_YEAR}(?:\s*[,;]\s*{_YEAR})*)\s*\))"
)
_DOC_PIECE = re.compile(rf"^(?P<doc>{DOC_KEY})(?:\s+pages?\s+(?P<pages>{PAGES}))?$")
_PAGES_ONLY = re.compile(rf"^(?:pages?\s+)?({PAGES})$")
_FOOTNOTE = re.compile(r"^\^([A-Za-z0-9_.-]{1,40})$")
_COMMA = re.compile(r"\s*,")
_DASH = re.compile(r"\s*[-–—]\s*")
_SPLIT = re.compile(r"\s*[,;，；]\s*")


def surname_key(surname: str) -> str:
    """A surname as keys spell it: lower case, accents folded (``García`` and ``Garcia``, one
    author: answers and reference lists drop diacritics inconsistently), inner whitespace one
    space, curly apostrophes straight."""
    decomposed = unicodedata.normalize("NFKD", surname.replace("’", "'"))
    folded = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(folded.lower().split())


def author_year_ref(surname: str, year: str) -> str:
    """The ref of an author-year marker: ``("van der Berg", "2018b")`` -> ``"van der berg
    2018b"`` (the suffix kept; :func:`base_key` drops it)."""
    return f"{surname_key(surname)} {year.strip()}"


def doc_ref(doc: str, pages: str | None = None) -> str:
    """The ref of a document key: ``("Qian2011Neural", "1 – 2")`` -> ``"qian2011neural pages
    1-2"``; without pages the document's name alone."""
    name = doc.strip().lower()
    if not pages:
        return name
    return f"{name} pages {_DASH.sub('-', pages.strip())}"


def base_key(ref: str) -> str:
    """What a reference list must hold for ``ref`` to be read: an author-year ref without its
    year suffix (``"smith 2020a"`` -> ``"smith 2020"``), a document key without its pages; any
    other ref itself."""
    if " pages " in ref:
        return ref.split(" pages ", 1)[0]
    if len(ref) > 5 and ref[-1].isalpha() and ref[-5:-1].isdigit() and ref[-6] == " ":
        return ref[:-1]
    return ref


def _years(text: str) -> list[str]:
    return [m.group(0) for m in _YEAR_ONE.finditer(text)]


def _listed(refs: list[str], references: Collection[str]) -> bool:
    return bool(refs) and any(r in references or base_key(r) in references for r in refs)


def author_year_refs(content: str, references: Collection[str]) -> tuple[str, ...] | None:
    """Refs of a parenthetical author-year marker (the text inside the parentheses), or None
    when a piece is no author-year citation or no piece names a listed key (module doc)."""
    refs: list[str] = []
    text = content.strip()
    pos = 0
    while True:
        m = _AY_PIECE.match(text, pos)
        if not m:
            return None
        refs.extend(author_year_ref(m.group("first"), y) for y in _years(m.group("years")))
        if m.end() == len(text):
            break
        sep = _AY_SEP.match(text, m.end())
        if not sep or sep.end() == m.end() or sep.end() == len(text):
            return None
        pos = sep.end()
    return tuple(dict.fromkeys(refs)) if _listed(refs, references) else None


def narrative_markers(
    text: str, references: Collection[str]
) -> list[tuple[int, int, tuple[str, ...]]]:
    """(start, end, refs) of each narrative author-year marker ``Smith et al. (2020)`` in
    ``text`` whose key is listed; the span is the parenthesised year only (the names stay in the
    claim). The first author is the first name of the list; when its key is not listed, the
    name is dropped only if it is followed by a comma and is the surname of no listed entry
    (``However, Smith, Lee and Wu (2019)``: ``However`` is no author), and the list is read
    again from the next name. Otherwise the candidate is prose: ``Smith and Lee (2019)`` never
    becomes a citation of a listed ``Lee 2019`` (a co-author's paper is another paper)."""
    out: list[tuple[int, int, tuple[str, ...]]] = []
    surnames = {k[:-5] for k in references if " " in k and k[-4:].isdigit()}
    pos = 0
    while m := _NARRATIVE.search(text, pos):
        refs = [author_year_ref(m.group("first"), y) for y in _years(m.group("years"))]
        if _listed(refs, references):
            out.append((m.start("paren"), m.end("paren"), tuple(dict.fromkeys(refs))))
            pos = m.end()
        elif _COMMA.match(text, m.end("first")) and surname_key(m.group("first")) not in surnames:
            pos = m.end("first")
        else:
            pos = m.end()
    return out


def doc_key_refs(
    content: str, references: Collection[str], contexts: bool = False
) -> tuple[str, ...] | None:
    """Refs of a PaperQA2 marker (the text inside the parentheses): every piece a document key
    with or without pages (a bare page range after a key adds pages of that key), and at least
    one key listed -- or, when the list holds PaperQA2 contexts (``contexts``: keys with
    pages, :func:`has_contexts`), every piece with pages (``(Wu2018Tea pages 1-2)`` in a
    PaperQA2 answer is a citation of a document it does not list: unresolved); else None."""
    refs: list[str] = []
    last: str | None = None
    paged = True
    for raw in _SPLIT.split(content.strip()):
        piece = raw.strip()
        if m := _DOC_PIECE.match(piece):
            last = m.group("doc")
            refs.append(doc_ref(last, m.group("pages")))
            paged = paged and bool(m.group("pages"))
        elif last is not None and (p := _PAGES_ONLY.match(piece)):
            refs.append(doc_ref(last, p.group(1)))
        else:
            return None
    if _listed(refs, references) or (contexts and paged and refs):
        return tuple(dict.fromkeys(refs))
    return None


def has_contexts(references: Collection[str]) -> bool:
    """True when ``references`` holds a PaperQA2 context key (``qian2011neural pages 1-2``)."""
    return any(" pages " in k for k in references)


def footnote_ref(content: str, defined: bool) -> str | None:
    """The ref ``"^label"`` of a footnote marker ``[^label]`` (the text inside the brackets)
    when the answer ``defined`` some footnote (a ``^`` key is listed); else None. A marker whose
    label is not defined is kept (it resolves to no entry: unresolved)."""
    m = _FOOTNOTE.match(content.strip())
    return f"^{m.group(1).lower()}" if m and defined else None


def has_footnotes(references: Collection[str]) -> bool:
    """True when ``references`` holds a footnote key (``^1``)."""
    return any(k.startswith("^") for k in references)


def has_author_year(references: Collection[str]) -> bool:
    """True when ``references`` holds an author-year key (``smith 2020``)."""
    return any(" " in k and k[-4:].isdigit() for k in references)
