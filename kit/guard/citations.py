"""Parse a cited answer into sentences, citation markers and claim-citation pairs (pure).

DESIGN.md section B "Claims and citations": split an answer into sentences; each sentence with
citations yields claim-citation pairs. Recognised styles:

* numeric brackets ``[1]``, ``[1, 2]``, ``[1; 3]``, ranges ``[1-3]`` / ``[1–3]`` (at most
  :data:`MAX_RANGE` ids; a longer or reversed range is not read as a citation);
* PubMed ids ``[PMID:123]``, ``[PMID 123]``, ``(PMID 123)``, ``(PMID: 123, 456)``; PubMed
  Central ids ``(PMCID: PMC123)``;
* DOIs ``(doi:10.1000/xyz)``, ``[https://doi.org/10.1000/xyz]`` and bare ``doi:10.1000/xyz``;
* ClinicalTrials.gov ids ``NCT`` + 8 digits, bare or inside brackets/parentheses;
* every identifier :func:`kit.corpus.identifiers.find_identifiers` reads, wherever it stands
  (prose, brackets, parentheses): PubMed links (``https://pubmed.ncbi.nlm.nih.gov/123/``, the
  legacy ``https://www.ncbi.nlm.nih.gov/pubmed/123``), PMC links, doi.org links, bare
  ``PMID 123`` / ``PMC123`` / ``10.x/y`` DOIs, arXiv ids and links, ClinicalTrials.gov links,
  and any other http(s) URL (style ``url``); each becomes one ref in the canonical scheme of the
  corpus layer (a PubMed link is ``PMID:123``, a PMC link ``PMC123``), never a second reading;
* author-year ``(Smith et al., 2020)``, ``(Smith and Lee 2019; Wu 2021)`` -- only with a
  reference list that holds the key (:func:`author_year_key`), since a parenthesised name and
  year is ordinary prose otherwise.

When is ``[10]`` a citation? A bracket of numbers is also how prose writes intervals
(``dose range [10, 20] mg``) and foreign references (``see ref [10] of the trial``). Rules:

1. a numeric bracket followed by a unit (``mg``, ``%``, ``years``...) or preceded by an
   interval word (``range``, ``interval``, ``between``, ``CI``, ``IQR``) or ``=`` is text;
2. ``references=None`` means the run declares numeric markers without giving a list: every
   other numeric bracket is a citation (the historical reading);
3. with a reference list (the answer's passage ids, or its reference section), a numeric
   bracket is a citation when it names at least one listed entry; one that names none is a
   citation only if the list is numeric and the bracket stands where citations stand (before
   ``. , ; : ! ?``, another marker or the end) -- a fabricated entry ``[9]`` of a 3-entry
   list, kept so it resolves to ``missing_passage``; anything else is text.

A bracket whose content is not entirely citation ids (``[see above]``, ``(n = 5)``) is left as
text. Nested brackets ``[[1]]`` read the inner marker. A marker opening a sentence (``Claim.
[2] Next``) belongs to the previous sentence. Nothing here raises on odd text: unicode, empty
answers and very long answers parse (linear-time regexes).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from kit.corpus.identifiers import Identifier, canonical, find_identifiers
from kit.guard.windows import sentence_spans

MAX_RANGE = 50
_BRACKET = re.compile(r"\[([^\[\]\n]{1,300})\]")
_PAREN = re.compile(r"\(([^()\n]{1,300})\)")
_DOI_BODY = r"10\.\d{4,9}/[^\s\[\]()<>\"']*[^\s\[\]()<>\"'.,;:]"
_BARE_DOI = re.compile(r"\b(?:doi:\s*|https?://(?:dx\.)?doi\.org/)(" + _DOI_BODY + ")", re.I)
_PIECE_NUM = re.compile(r"^\d{1,6}$")
_PIECE_RANGE = re.compile(r"^(\d{1,6})\s*[-–—]\s*(\d{1,6})$")
_PIECE_PMID = re.compile(r"^(?:PMID|PubMed(?:\s*ID)?)\s*[:#]?\s*(\d{1,9})$", re.IGNORECASE)
_PIECE_PMCID = re.compile(r"^(?:PMCID\s*[:#]?\s*)?(PMC\d{1,9})$", re.IGNORECASE)
_PIECE_NCT = re.compile(r"^(NCT\d{8})$", re.IGNORECASE)
_PIECE_DOI = re.compile(r"^(?:doi\s*:?\s*|https?://(?:dx\.)?doi\.org/)?(" + _DOI_BODY + ")$", re.I)
_PIECE_AUTHOR_YEAR = re.compile(
    r"^(?:see\s+|e\.g\.,?\s+)?([A-Z][\w'’-]+)(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][\w'’-]+)?"
    r",?\s+((?:19|20)\d{2})[a-z]?$"
)
_SPLIT = re.compile(r"\s*[,;]\s*")
_UNIT_AFTER = re.compile(
    r"\s?(?:%|‰|°|(?:mg|g|kg|µg|μg|ug|mcg|ng|mL|ml|L|l|dL|µL|mmol|µmol|mol|nM|µM|mM|M|mm|cm|"
    r"m|km|mmHg|h|hr|hrs|hours?|min|minutes?|s|sec|seconds?|days?|d|weeks?|wk|months?|mo|"
    r"years?|yr|y|IU|U|bpm|kcal|cal|Hz|kDa|Da|bp|kb|x|times|fold|patients|participants|"
    r"subjects|cases)(?![\w]))"
)
_WORD_BEFORE = re.compile(r"(?:\b(?:range|ranges|interval|intervals|between|CI|IQR)|=)\s*$", re.I)
_CITATION_POSITION = re.compile(r"\s*(?:$|[.,;:!?]|\[|\()")
_SPAN_TRAILING = ".,;:!?)]}>\"'"


@dataclass(frozen=True)
class Citation:
    """One marker in the answer: its span in the original text and the ids it names."""

    start: int
    end: int
    text: str
    refs: tuple[str, ...]  # normalised: "3", "PMID:123", "NCT01234567", "DOI:10.1/x", ...
    style: str  # "numeric" | "pmid" | "pmcid" | "nct" | "doi" | "arxiv" | "url" | "author-year"


@dataclass(frozen=True)
class Claim:
    """A sentence (markers removed) and the citations attached to it."""

    index: int
    start: int
    end: int
    text: str
    citations: tuple[Citation, ...]


def author_year_key(surname: str, year: str) -> str:
    """The reference-list key of an author-year citation: ``"smith 2020"`` (first author's
    surname, lower case, and the year without its ``a``/``b`` suffix)."""
    return f"{surname.strip().lower()} {year.strip()[:4]}"


def identifier_ref(piece: str) -> tuple[str, str] | None:
    """(ref, style) for a piece that names its own identifier (PMID, PMCID, NCT, DOI): ``"PMID 12"``
    -> ``("PMID:12", "pmid")``; None for anything else (a bare number, a name)."""
    if m := _PIECE_PMID.match(piece):
        return f"PMID:{m.group(1)}", "pmid"
    if m := _PIECE_PMCID.match(piece):
        return m.group(1).upper(), "pmcid"
    if m := _PIECE_NCT.match(piece):
        return m.group(1).upper(), "nct"
    if m := _PIECE_DOI.match(piece):
        return f"DOI:{m.group(1)}", "doi"
    if piece[:1].isdigit():  # a bare number is never an identifier here (no guessing)
        return None
    ident = canonical(piece)  # links and arXiv ids, read by the corpus layer
    return None if ident is None else ref_of(ident, piece)


def ref_of(ident: Identifier, written: str = "") -> tuple[str, str]:
    """(ref, style) of a canonical identifier in this module's ref spelling: ``PMID:123``,
    ``PMC123``, ``NCT01234567``, ``DOI:10.x/y`` (as ``written`` when it spells a DOI, else
    canonical), ``arXiv:2101.00001`` or the URL."""
    if ident.scheme == "PMID":
        return f"PMID:{ident.value}", "pmid"
    if ident.scheme == "DOI":
        m = _PIECE_DOI.match(written.strip().rstrip(_SPAN_TRAILING))
        return f"DOI:{m.group(1) if m else ident.value}", "doi"
    if ident.scheme == "ARXIV":
        return ident.label, "arxiv"
    return ident.value, {"PMCID": "pmcid", "NCT": "nct"}.get(ident.scheme, "url")


def _parse_pieces(content: str, allow_numeric: bool) -> tuple[tuple[str, ...], str] | None:
    refs: list[str] = []
    styles: set[str] = set()
    pmid_context = False
    for raw in _SPLIT.split(content.strip()):
        piece = raw.strip()
        if not piece:
            return None
        if named := identifier_ref(piece):
            refs.append(named[0])
            styles.add(named[1])
            pmid_context = named[1] == "pmid"
        elif _PIECE_NUM.match(piece) and pmid_context:
            refs.append(f"PMID:{piece}")  # "(PMID: 123, 456)": later numbers are PMIDs too
        elif _PIECE_NUM.match(piece) and allow_numeric:
            refs.append(str(int(piece)))
            styles.add("numeric")
        elif (m := _PIECE_RANGE.match(piece)) and allow_numeric:
            a, b = int(m.group(1)), int(m.group(2))
            if b < a or b - a + 1 > MAX_RANGE:
                return None
            refs.extend(str(i) for i in range(a, b + 1))
            styles.add("numeric")
        else:
            return None
    if not refs:
        return None
    if styles == {"numeric"}:
        style = "numeric"
    else:
        order = ("pmid", "pmcid", "nct", "doi", "arxiv", "url", "numeric")
        style = next(s for s in order if s in styles)
    return tuple(dict.fromkeys(refs)), style


def _author_year(content: str, references: frozenset[str]) -> tuple[str, ...] | None:
    """Keys of ``(Smith et al., 2020; Lee 2019)`` when every piece is in the reference list."""
    keys = []
    for raw in re.split(r"\s*;\s*", content.strip()):
        m = _PIECE_AUTHOR_YEAR.match(raw.strip())
        if not m:
            return None
        keys.append(author_year_key(m.group(1), m.group(2)))
    if not keys or any(k not in references for k in keys):
        return None
    return tuple(dict.fromkeys(keys))


def _numeric_is_citation(
    text: str, start: int, end: int, refs: tuple[str, ...], references: frozenset[str] | None
) -> bool:
    """Rules 1-3 of the module doc for a numeric bracket at ``text[start:end]``."""
    if _UNIT_AFTER.match(text, end) or _WORD_BEFORE.search(text, max(0, start - 40), start):
        return False
    if references is None:
        return True
    if any(r in references for r in refs):
        return True
    numeric_list = any(r.isdigit() for r in references)
    return numeric_list and bool(_CITATION_POSITION.match(text, end))


def find_citations(text: str, references: Collection[str] | None = None) -> list[Citation]:
    """Every citation marker in ``text``, in order of position, non-overlapping.

    ``references``: the ids of the answer's reference list (passage ids, reference-section
    numbers, author-year keys); ``None`` when the run declares numeric markers and gives no
    list (module doc, rules 1-3)."""
    refset = None if references is None else frozenset(references)
    found: list[Citation] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    def add(a: int, b: int, refs: tuple[str, ...], style: str) -> None:
        found.append(Citation(a, b, text[a:b], refs, style))
        taken.append((a, b))

    for m in _BRACKET.finditer(text):
        parsed = _parse_pieces(m.group(1), allow_numeric=True)
        if not parsed:
            continue
        if parsed[1] != "numeric" or _numeric_is_citation(
            text, m.start(), m.end(), parsed[0], refset
        ):
            add(m.start(), m.end(), *parsed)
    for m in _PAREN.finditer(text):
        if not free(m.start(), m.end()):
            continue
        parsed = _parse_pieces(m.group(1), allow_numeric=False)  # "(3)" is not a citation
        if parsed:
            add(m.start(), m.end(), *parsed)
        elif refset and (keys := _author_year(m.group(1), refset)):
            add(m.start(), m.end(), keys, "author-year")
    for m in _BARE_DOI.finditer(text):  # a DOI as written ("doi:", doi.org), case kept
        if free(m.start(), m.end()):
            add(m.start(), m.end(), (f"DOI:{m.group(1)}",), "doi")
    for a, b, ident in find_identifiers(text):  # every other identifier, in prose too
        while b > a and text[b - 1] in _SPAN_TRAILING:  # "see https://.../123/." ends a sentence
            b -= 1
        if b > a and free(a, b):
            ref, style = ref_of(ident, text[a:b])
            add(a, b, (ref,), style)
    return sorted(found, key=lambda c: c.start)


def _strip_markers(text: str, offset: int, cites: list[Citation]) -> str:
    out = []
    pos = 0
    for c in cites:
        a, b = c.start - offset, c.end - offset
        if a < pos or a < 0 or b > len(text):
            continue
        out.append(text[pos:a])
        pos = b
    out.append(text[pos:])
    joined = " ".join("".join(out).replace("[]", "").split())
    return re.sub(r"\s+([.,;:!?])", r"\1", joined).strip()


def parse_answer(text: str, references: Collection[str] | None = None) -> list[Claim]:
    """Sentences of ``text`` with their citations; sentences without citations are included
    (``citations == ()``) so a report can count uncited claims. ``references`` as in
    :func:`find_citations`."""
    if not isinstance(text, str) or not text.strip():
        return []
    spans = sentence_spans(text)
    cites = find_citations(text, references)
    owner: list[list[Citation]] = [[] for _ in spans]
    for c in cites:
        idx = next((i for i, (a, b) in enumerate(spans) if a <= c.start < b), None)
        if idx is None:  # in whitespace between sentences: attach to the one before
            idx = max((i for i, (a, _) in enumerate(spans) if a <= c.start), default=0)
        # a marker opening a sentence ("Claim. [2] Next") cites the previous sentence
        if idx > 0 and _only_markers(text[spans[idx][0] : c.start], cites, spans[idx][0]):
            idx -= 1
        owner[idx].append(c)
    claims = []
    for i, ((a, b), cs) in enumerate(zip(spans, owner, strict=True)):
        inside = [c for c in cites if a <= c.start < b]
        body = _strip_markers(text[a:b], a, inside)
        if not body and not cs:
            continue  # a sentence that was only markers, all given to the previous sentence
        claims.append(Claim(i, a, b, body, tuple(cs)))
    return claims


def _only_markers(head: str, cites: list[Citation], offset: int) -> bool:
    """True when ``head`` (the text from ``offset``) is nothing but citation markers."""
    inside = [c for c in cites if offset <= c.start and c.end <= offset + len(head)]
    return not _strip_markers(head, offset, inside).strip(" .,;:")


def candidate_ids(ref: str) -> list[str]:
    """Passage ids a normalised ref may be stored under ("PMID:123" -> "PMID:123", "123";
    "DOI:10.1/x" -> "DOI:10.1/x", "10.1/x", "doi:10.1/x")."""
    if ref.startswith("PMID:"):
        return [ref, ref[5:], f"PMID {ref[5:]}"]
    if ref.startswith("DOI:"):
        return [ref, ref[4:], f"doi:{ref[4:]}"]
    return [ref]


def resolve(ref: str, passages: dict[str, str]) -> str | None:
    """The passage id ``ref`` points at, or None (an out-of-range index or unknown id)."""
    for cand in candidate_ids(ref):
        if cand in passages:
            return cand
    return None
