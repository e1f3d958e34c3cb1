"""Parse a cited answer into sentences, citation markers and claim-citation pairs (pure).

docs/architecture.md, "Citation guard": split an answer into sentences; each sentence with
citations yields claim-citation pairs. Recognised styles:

* numeric brackets ``[1]``, ``[1, 2]``, ``[1; 3]``, ranges ``[1-3]`` / ``[1–3]`` (at most
  :data:`MAX_RANGE` ids; a longer or reversed range is not read as a citation); full-width
  brackets ``【1】`` / ``（PMID: 1，2）`` as ASCII ones;
* PubMed ids ``[PMID:123]``, ``[PMID 123]``, ``(PMID 123)``, ``(PMID: 123, 456)``,
  ``(PubMed ID 123)``, ``(PMIDs: 1, 2 and 3)``; PubMed Central ids ``(PMCID: PMC123)``;
* DOIs ``(doi:10.1000/xyz)``, ``[https://doi.org/10.1000/xyz]`` and bare ``doi:10.1000/xyz``,
  with balanced parentheses (``doi:10.1016/S0140-6736(20)30183-5``); every DOI ref is the
  canonical lower-case DOI (``DOI:10.1000/abc`` for ``10.1000/ABC``: one paper);
* ClinicalTrials.gov ids ``NCT`` + 8 digits, bare or inside brackets/parentheses;
* every identifier :func:`kit.corpus.identifiers.find_identifiers` reads, wherever it stands
  (prose, brackets, parentheses; its module doc lists the spellings): PubMed, PMC, Europe PMC,
  doi.org and publisher DOI links, bare ``PMID 123`` / ``PMC123`` / ``10.x/y`` DOIs, arXiv ids
  and links, ClinicalTrials.gov links, and the other scholarly URLs (style ``url``); each
  becomes one ref in the canonical scheme of the corpus layer (a PubMed link is ``PMID:123``, a
  PMC link ``PMC123``), never a second reading; a labelled list ``PMIDs: 1, 2 and 3`` is one
  marker. A URL that is no cited paper (a society's web page, an image:
  :func:`kit.corpus.identifiers.is_cited_paper`) is no citation and stays in the claim's text
  (``find_citations(..., urls="all")`` reads every URL);
* markdown: emphasis, code and ``<...>`` around an identifier belong to its marker; a link
  ``[words](url)`` is one marker whose words stay in the claim (``[1]``, ``PubMed`` and other
  bare labels do not); an image ``![alt](url)`` is none;
* keys of a reference list (:mod:`kit.runs.keys`, whose module doc gives the rules), only with
  a list that holds the key, since a parenthesised name and year is ordinary prose otherwise:
  author-year, parenthetical ``(Smith et al., 2020; Lee 2019)``, ``(Smith & Lee, 2020a)``,
  ``(Smith and Lee 2019, 2021)`` and narrative ``Smith et al. (2020) showed`` (the marker is
  ``(2020)``: the names stay in the claim); PaperQA2 document keys ``(Qian2011Neural pages 1-2,
  Qian2011Neural pages 15-16)``, ``(Qian2011Neural)`` (style ``doc-key``); footnotes ``[^1]``
  (style ``footnote``, when the answer defines a footnote). ``Smith et al. [3]`` is the
  numeric marker ``[3]``.

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
[2] Next``) belongs to the previous sentence; a footnote marker right after a sentence's period
(``Claim.[^1] Next``) closes that sentence. Nothing here raises on odd text: unicode, empty
answers and very long answers parse (linear-time regexes).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Collection
from dataclasses import dataclass

from kit.corpus.identifiers import (
    Identifier,
    Spans,
    canonical,
    find_identifiers,
    is_cited_paper,
    plausible_bare_doi,
    unwrap,
)
from kit.runs.keys import (
    author_year_ref,
    author_year_refs,
    doc_key_refs,
    footnote_ref,
    has_author_year,
    has_contexts,
    has_footnotes,
    narrative_markers,
)
from kit.runs.sentences import sentence_spans

MAX_RANGE = 50
# [ ... ] and ( ... ), ASCII or full-width (CJK: 【...】 ［...］ （...）), one line, no nesting.
_BRACKET = re.compile(r"[\[【［]([^\[\]【】［］\n]{1,300})[\]】］]")
_PAREN = re.compile(r"[(（]([^()（）\n]{1,300})[)）]")
# A markdown link [text](url) (text may hold one level of brackets: [[1]](url)) or image ![..](..);
# the URL's parentheses balanced, as in kit.corpus.identifiers.
_LINK = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\]){0,300})\]"
    r"\((https?://(?:[^\s()<>]|\([^\s()<>]*\))+)\)",
    re.I,
)
# Link texts that only name where the paper is ("[PubMed](...)"): dropped with the link.
_LINK_LABELS = frozenset(
    {"pubmed", "pmc", "europe pmc", "doi", "arxiv", "biorxiv", "medrxiv", "pdf", "link",
     "source", "ref", "reference", "full text", "abstract", "clinicaltrials.gov"}
)  # fmt: skip
_PIECE_NUM = re.compile(r"^\d{1,6}$")
_PIECE_RANGE = re.compile(r"^(\d{1,6})\s*[-–—]\s*(\d{1,6})$")
# "PMID 1", "PMIDs: 1", "PubMed ID 1", "PMID- 1", "PMID=1", "PMID #1"
_PIECE_PMID = re.compile(
    r"^(?:PMIDs?|PubMed(?:[\s_-]*(?:IDs?|identifiers?))?)[\s*_]*[:#=-]?[\s*_]*(\d{1,9})$",
    re.IGNORECASE,
)
# "PMCID: PMC1", "pmcid pmc1", "PMC1"; a bare lower-case "pmc1" is no PMCID
_PIECE_PMCID = re.compile(r"^(?:(?i:PMCIDs?)\s*[:#=-]?\s*(?i:PMC)?|PMC)(\d{1,9})$")
_PIECE_NCT = re.compile(r"^(NCT\d{8})$", re.IGNORECASE)
# a list separator between two labelled numbers ("PMIDs: 1, 2 and 3" is one marker)
_LIST_GAP = re.compile(r"^[ \t]*(?:[,;]|(?:,[ \t]*)?(?:and|or|&))[ \t]*$")
_SPLIT = re.compile(r"\s*[,;，；]\s*")
_UNIT_AFTER = re.compile(
    r"\s?(?:%|‰|°|(?:mg|g|kg|µg|μg|ug|mcg|ng|mL|ml|L|l|dL|µL|mmol|µmol|mol|nM|µM|mM|M|mm|cm|"
    r"m|km|mmHg|h|hr|hrs|hours?|min|minutes?|s|sec|seconds?|days?|d|weeks?|wk|months?|mo|"
    r"years?|yr|y|IU|U|bpm|kcal|cal|Hz|kDa|Da|bp|kb|x|times|fold|patients|participants|"
    r"subjects|cases)(?![\w]))"
)
_WORD_BEFORE = re.compile(r"(?:\b(?:range|ranges|interval|intervals|between|CI|IQR)|=)\s*$", re.I)
_SPACES = re.compile(r"\s*")
_NEXT_SENTENCE = re.compile(r"\s+(?=[\"'(\[]?[A-Z0-9])")
_CITATION_POSITION = re.compile(r"\s*(?:$|[.,;:!?]|\[|\()")
_EMPHASIS = "*_~`"


@dataclass(frozen=True)
class Citation:
    """One marker in the answer: its span in the original text and the ids it names. ``keep``:
    the text that stays in the claim when the marker is removed (the words of a markdown link
    ``[a 2020 trial](https://pubmed...)``; empty for every other marker)."""

    start: int
    end: int
    text: str
    refs: tuple[str, ...]  # normalised: "3", "PMID:123", "NCT01234567", "DOI:10.1/x", ...
    # "numeric" | "pmid" | "pmcid" | "nct" | "doi" | "arxiv" | "url" | "author-year" | "doc-key"
    # | "footnote"
    style: str
    keep: str = ""


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
    surname, lower case, and the year without its ``a``/``b`` suffix;
    :func:`kit.runs.keys.base_key` of :func:`kit.runs.keys.author_year_ref`)."""
    return author_year_ref(surname, year.strip()[:4])


def identifier_ref(piece: str) -> tuple[str, str] | None:
    """(ref, style) for a piece that names its own identifier (PMID, PMCID, NCT, DOI, arXiv id,
    link): ``"PMID 12"`` -> ``("PMID:12", "pmid")``, ``"10.1000/ABC"`` -> ``("DOI:10.1000/abc",
    "doi")``; None for anything else (a bare number, a name). Formatting around the piece
    (markdown, quotes, CJK brackets) is dropped first; a bare DOI must be plausible
    (:func:`kit.corpus.identifiers.plausible_bare_doi`); any URL is read (an explicit claim may
    cite one; the marker parser keeps only cited papers)."""
    piece = unwrap(piece)
    if m := _PIECE_PMID.match(piece):
        return (f"PMID:{int(m.group(1))}", "pmid") if int(m.group(1)) > 0 else None
    if m := _PIECE_PMCID.match(piece):
        return f"PMC{int(m.group(1))}", "pmcid"
    if m := _PIECE_NCT.match(piece):
        return m.group(1).upper(), "nct"
    ident = canonical(piece)  # DOIs, links and arXiv ids, read by the corpus layer
    if ident is None or (ident.scheme == "PMCID" and "/" not in piece):
        return None  # a PMCID not written as _PIECE_PMCID ("pmc1") is none in free text
    # a bare number (or a bare arXiv number) is never an identifier here (no guessing); a bare
    # DOI is, when it is plausible ("10.1234/5" is a version, not a DOI)
    if piece[:1].isdigit() and not (piece.startswith("10.") and plausible_bare_doi(piece)):
        return None
    return ref_of(ident)


def ref_of(ident: Identifier) -> tuple[str, str]:
    """(ref, style) of a canonical identifier in this module's ref spelling: ``PMID:123``,
    ``PMC123``, ``NCT01234567``, ``DOI:10.x/y`` (the canonical lower-case DOI, so every case of
    one DOI is one ref), ``arXiv:2101.00001`` or the URL."""
    if ident.scheme == "PMID":
        return f"PMID:{ident.value}", "pmid"
    if ident.scheme == "DOI":
        return f"DOI:{ident.value}", "doi"
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
            if named[1] == "url" and not is_cited_paper(Identifier("URL", named[0])):
                return None  # a web page is no cited paper (kit.corpus.identifiers module doc)
            refs.append(named[0])
            styles.add(named[1])
            pmid_context = named[1] == "pmid"
        elif _PIECE_NUM.match(piece) and pmid_context and int(piece) > 0:
            refs.append(f"PMID:{int(piece)}")  # "(PMID: 123, 456)": later numbers are PMIDs too
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


def _widen(text: str, a: int, b: int) -> tuple[int, int]:
    """The span ``text[a:b]`` of an identifier with the formatting that wraps it: markdown
    emphasis or code on both sides (``**PMID:1**``, ``_10.1/x_``, backticks), an autolink
    ``<...>``, or an emphasised label (``**PMID:** 123``: the ``**`` before the label closes
    inside the span)."""
    lead = a
    while lead > 0 and a - lead < 3 and text[lead - 1] in _EMPHASIS:  # at most "***" / "```"
        lead -= 1
    if lead < a and text[lead:a] in text[a:b]:
        a = lead
    while (
        0 < a
        and b < len(text)
        and (
            (text[a - 1] == text[b] and text[b] in _EMPHASIS)
            or (text[a - 1], text[b]) == ("<", ">")
        )
    ):
        a, b = a - 1, b + 1
    return a, b


def _link_keep(label: str) -> str:
    """What of a markdown link's text stays in the claim: nothing when it only names the
    citation (``1``, ``[1]``, ``PMID 12``, a URL, ``PubMed``), else the words themselves."""
    words = label.strip()
    bare = words.strip("[]() ")
    if not bare or bare.lower() in _LINK_LABELS or canonical(bare) is not None:
        return ""
    return "" if _parse_pieces(bare, allow_numeric=True) else words


def find_citations(
    text: str, references: Collection[str] | None = None, urls: str = "scholarly"
) -> list[Citation]:
    """Every citation marker in ``text``, in order of position, non-overlapping.

    ``references``: the ids of the answer's reference list (passage ids, reference-section
    numbers, the keys of :mod:`kit.runs.keys`: author-year, document, footnote); ``None`` when the run declares numeric markers and gives no
    list (module doc, rules 1-3). ``urls``: which URLs in the text are citations (``"scholarly"``:
    cited papers only, :func:`kit.corpus.identifiers.is_cited_paper`; ``"all"``: every URL).
    A markdown link ``[text](url)`` whose URL is a citation is one marker (its words stay in the
    claim unless they only label it: :attr:`Citation.keep`); an image ``![alt](url)`` is none. A
    labelled list ``PMIDs: 1, 2 and 3`` is one marker. Formatting around an identifier
    (``**...**``, backticks, ``<...>``) belongs to its marker."""
    refset = None if references is None else frozenset(references)
    found: list[Citation] = []
    taken = Spans()
    free = taken.free

    def add(a: int, b: int, refs: tuple[str, ...], style: str, keep: str = "") -> None:
        found.append(Citation(a, b, text[a:b], refs, style, keep))
        taken.add(a, b)

    for m in _LINK.finditer(text):
        if m.group(1):  # an image: its address is no citation
            taken.add(m.start(), m.end())
            continue
        ident = canonical(m.group(3))
        if ident is not None and (urls == "all" or is_cited_paper(ident)):
            add(m.start(), m.end(), (ref_of(ident)[0],), ref_of(ident)[1], _link_keep(m.group(2)))
    footnotes = refset is not None and has_footnotes(refset)
    for m in _BRACKET.finditer(text):
        if not free(m.start(), m.end()):
            continue
        if note := footnote_ref(m.group(1), footnotes):
            add(m.start(), m.end(), (note,), "footnote")
            continue
        parsed = _parse_pieces(m.group(1), allow_numeric=True)
        if not parsed:
            continue
        if parsed[1] != "numeric" or _numeric_is_citation(
            text, m.start(), m.end(), parsed[0], refset
        ):
            add(m.start(), m.end(), *parsed)
    if refset and has_author_year(refset):  # "Smith et al. (2020)": the year is the marker
        for a, b, keys in narrative_markers(text, refset):
            if free(a, b):
                add(a, b, keys, "author-year")
    contexts = refset is not None and has_contexts(refset)
    for m in _PAREN.finditer(text):
        if not free(m.start(), m.end()):
            continue
        parsed = _parse_pieces(m.group(1), allow_numeric=False)  # "(3)" is not a citation
        if parsed:
            add(m.start(), m.end(), *parsed)
        elif refset and (keys := author_year_refs(m.group(1), refset)):
            add(m.start(), m.end(), keys, "author-year")
        elif refset and (keys := doc_key_refs(m.group(1), refset, contexts)):
            add(m.start(), m.end(), keys, "doc-key")
    groups: list[tuple[int, int, list[str], str]] = []
    for a, b, ident in find_identifiers(text, urls=urls):  # every other identifier, in prose too
        if not free(a, b):
            continue
        ref, style = ref_of(ident)
        last = groups[-1] if groups else None
        if (  # "PMIDs: 111, 222 and 333": the numbers of one list are one marker
            last is not None
            and style == last[3] == "pmid"
            and text[a:b].isdigit()
            and _LIST_GAP.match(text[last[1] : a])
        ):
            groups[-1] = (last[0], b, [*last[2], ref], style)
        else:
            groups.append((a, b, [ref], style))
    for a, b, refs, style in groups:
        wa, wb = _widen(text, a, b)
        add(*((wa, wb) if free(wa, wb) else (a, b)), tuple(dict.fromkeys(refs)), style)
    return sorted(found, key=lambda c: c.start)


def _strip_markers(text: str, offset: int, cites: list[Citation]) -> str:
    """``text`` (starting at ``offset`` of the answer) without the markers ``cites`` (a link's
    :attr:`Citation.keep` words stay), without brackets that removing them left empty
    (``see (https://...)`` -> ``see``), whitespace collapsed; a period after a marker that
    follows ``et al.`` is dropped (``Smith et al. (2020).`` -> ``Smith et al.``)."""
    mark = next(chr(c) for c in range(0xE000, 0xF900) if chr(c) not in text)  # a free char
    out = []
    pos = 0
    for c in cites:
        a, b = c.start - offset, c.end - offset
        if a < pos or a < 0 or b > len(text):
            continue
        out.append(text[pos:a])
        out.append(f"{mark} {c.keep} " if c.keep else mark)
        pos = b
    out.append(text[pos:])
    opened, closed = "([（【「［", ")]）】」］"
    emptied = re.compile(
        rf"[{re.escape(opened)}][\s,;，；{mark}]*{mark}[\s,;，；{mark}]*[{re.escape(closed)}]"
    )
    kept = emptied.sub("", "".join(out))
    # "Smith et al. (2020)." -> "Smith et al.": the abbreviation's period ends the sentence
    if "et al." in kept:
        kept = re.sub(rf"(\bet al\.)[\s{mark}]*{mark}[\s{mark}]*\.", r"\1", kept)
    joined = " ".join(kept.replace(mark, "").split())
    return re.sub(r"\s+([.,;:!?。，；：])", r"\1", joined).strip()


def parse_answer(text: str, references: Collection[str] | None = None) -> list[Claim]:
    """Sentences of ``text`` with their citations; sentences without citations are included
    (``citations == ()``) so a report can count uncited claims. ``references`` as in
    :func:`find_citations`."""
    if not isinstance(text, str) or not text.strip():
        return []
    cites = find_citations(text, references)  # sorted by start, non-overlapping
    spans = _split_after_footnotes(text, sentence_spans(text), cites)
    span_starts = [a for a, _ in spans]
    cite_starts = [c.start for c in cites]

    def within(lo: int, hi: int) -> list[Citation]:  # the markers starting in [lo, hi)
        return cites[bisect_left(cite_starts, lo) : bisect_left(cite_starts, hi)]

    owner: list[list[Citation]] = [[] for _ in spans]
    for c in cites:
        # the sentence holding the marker; in whitespace between sentences, the one before
        idx = max(bisect_right(span_starts, c.start) - 1, 0)
        # a marker opening a sentence ("Claim. [2] Next") cites the previous sentence
        head = spans[idx][0]
        if idx > 0 and _only_markers(text[head : c.start], within(head, c.start), head):
            idx -= 1
        owner[idx].append(c)
    claims = []
    for i, ((a, b), cs) in enumerate(zip(spans, owner, strict=True)):
        body = _strip_markers(text[a:b], a, within(a, b))
        if not body and not cs:
            continue  # a sentence that was only markers, all given to the previous sentence
        claims.append(Claim(i, a, b, body, tuple(cs)))
    return claims


def _split_after_footnotes(
    text: str, spans: list[tuple[int, int]], cites: list[Citation]
) -> list[tuple[int, int]]:
    """``spans`` also cut after footnote markers that close a sentence (``Claim one.[^1] Claim
    two.``: the sentence splitter sees no boundary where a marker follows the period): after
    the last of the adjacent markers following ``.``, ``!`` or ``?``, when whitespace and a
    sentence start follow. Other styles keep the splitter's sentences."""
    cuts: list[int] = []
    for i, c in enumerate(cites):
        if c.style != "footnote" or not _NEXT_SENTENCE.match(text, c.end):
            continue
        j = i
        while j > 0 and cites[j - 1].end == cites[j].start:
            j -= 1
        if cites[j].start > 0 and text[cites[j].start - 1] in ".!?":
            cuts.append(c.end)
    if not cuts:
        return spans
    out: list[tuple[int, int]] = []
    for a, b in spans:
        inner = cuts[bisect_right(cuts, a) : bisect_left(cuts, b)]
        for cut in inner:
            out.append((a, cut))
            a = _SPACES.match(text, cut).end()  # type: ignore[union-attr]
        out.append((a, b))
    return out


def _only_markers(head: str, cites: list[Citation], offset: int) -> bool:
    """True when ``head`` (the text from ``offset``) is nothing but the markers ``cites``."""
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
    """The passage id ``ref`` points at, or None (an out-of-range index or unknown id). A DOI ref
    also finds a passage stored under the same DOI in another case or spelling
    (``"DOI:10.1/x"`` -> ``"10.1/X"``, ``"https://doi.org/10.1/X"``): DOIs are case-insensitive."""
    for cand in candidate_ids(ref):
        if cand in passages:
            return cand
    if ref.startswith("DOI:"):
        doi = ref[4:].lower()
        for pid in passages:
            got = canonical(pid, default_scheme="DOI")
            if got is not None and got.scheme == "DOI" and got.value == doi:
                return pid
    return None
