"""Parse a cited answer into sentences, citation markers and claim-citation pairs (pure).

DESIGN.md section B "Claims and citations": split an answer into sentences; each sentence with
citations yields claim-citation pairs. Recognised styles:

* numeric brackets ``[1]``, ``[1, 2]``, ``[1; 3]``, ranges ``[1-3]`` / ``[1–3]`` (at most
  :data:`MAX_RANGE` ids; a longer or reversed range is not read as a citation);
* PubMed ids ``[PMID:123]``, ``[PMID 123]``, ``(PMID 123)``, ``(PMID: 123, 456)``;
* ClinicalTrials.gov ids ``NCT`` + 8 digits, bare or inside brackets/parentheses.

A bracket whose content is not entirely citation ids (``[see above]``, ``(n = 5)``) is left as
text. Nested brackets ``[[1]]`` read the inner marker. A marker opening a sentence (``Claim.
[2] Next``) belongs to the previous sentence. Nothing here raises on odd text: unicode, empty
answers and very long answers parse (linear-time regexes); out-of-range ids are kept and
resolved later (status ``missing_passage``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kit.guard.windows import sentence_spans

MAX_RANGE = 50
_BRACKET = re.compile(r"\[([^\[\]\n]{1,300})\]")
_PAREN = re.compile(r"\(([^()\n]{1,300})\)")
_NCT = re.compile(r"\bNCT\d{8}\b")
_PIECE_NUM = re.compile(r"^\d{1,6}$")
_PIECE_RANGE = re.compile(r"^(\d{1,6})\s*[-–—]\s*(\d{1,6})$")
_PIECE_PMID = re.compile(r"^(?:PMID|PubMed(?:\s*ID)?)\s*[:#]?\s*(\d{1,9})$", re.IGNORECASE)
_PIECE_NCT = re.compile(r"^(NCT\d{8})$", re.IGNORECASE)
_SPLIT = re.compile(r"\s*[,;]\s*")


@dataclass(frozen=True)
class Citation:
    """One marker in the answer: its span in the original text and the ids it names."""

    start: int
    end: int
    text: str
    refs: tuple[str, ...]  # normalised: "3", "PMID:123", "NCT01234567"
    style: str  # "numeric" | "pmid" | "nct"


@dataclass(frozen=True)
class Claim:
    """A sentence (markers removed) and the citations attached to it."""

    index: int
    start: int
    end: int
    text: str
    citations: tuple[Citation, ...]


def _parse_pieces(content: str, allow_numeric: bool) -> tuple[tuple[str, ...], str] | None:
    refs: list[str] = []
    styles: set[str] = set()
    pmid_context = False
    for raw in _SPLIT.split(content.strip()):
        piece = raw.strip()
        if not piece:
            return None
        if m := _PIECE_PMID.match(piece):
            refs.append(f"PMID:{m.group(1)}")
            styles.add("pmid")
            pmid_context = True
        elif m := _PIECE_NCT.match(piece):
            refs.append(m.group(1).upper())
            styles.add("nct")
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
    style = "numeric" if styles == {"numeric"} else ("pmid" if "pmid" in styles else "nct")
    return tuple(dict.fromkeys(refs)), style


def find_citations(text: str) -> list[Citation]:
    """Every citation marker in ``text``, in order of position, non-overlapping."""
    found: list[Citation] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    for m in _BRACKET.finditer(text):
        parsed = _parse_pieces(m.group(1), allow_numeric=True)
        if parsed:
            found.append(Citation(m.start(), m.end(), m.group(0), parsed[0], parsed[1]))
            taken.append((m.start(), m.end()))
    for m in _PAREN.finditer(text):
        parsed = _parse_pieces(m.group(1), allow_numeric=False)  # "(3)" is not a citation
        if parsed and free(m.start(), m.end()):
            found.append(Citation(m.start(), m.end(), m.group(0), parsed[0], parsed[1]))
            taken.append((m.start(), m.end()))
    for m in _NCT.finditer(text):
        if free(m.start(), m.end()):
            found.append(Citation(m.start(), m.end(), m.group(0), (m.group(0),), "nct"))
            taken.append((m.start(), m.end()))
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


def parse_answer(text: str) -> list[Claim]:
    """Sentences of ``text`` with their citations; sentences without citations are included
    (``citations == ()``) so a report can count uncited claims."""
    if not isinstance(text, str) or not text.strip():
        return []
    spans = sentence_spans(text)
    cites = find_citations(text)
    owner: list[list[Citation]] = [[] for _ in spans]
    for c in cites:
        idx = next((i for i, (a, b) in enumerate(spans) if a <= c.start < b), None)
        if idx is None:  # in whitespace between sentences: attach to the one before
            idx = max((i for i, (a, _) in enumerate(spans) if a <= c.start), default=0)
        # a marker opening a sentence ("Claim. [2] Next") cites the previous sentence
        if idx > 0 and _only_markers(text[spans[idx][0] : c.start]):
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


def _only_markers(head: str) -> bool:
    rest = _BRACKET.sub("", head)
    rest = _PAREN.sub("", rest)
    return not _NCT.sub("", rest).strip()


def candidate_ids(ref: str) -> list[str]:
    """Passage ids a normalised ref may be stored under ("PMID:123" -> "PMID:123", "123")."""
    if ref.startswith("PMID:"):
        return [ref, ref[5:], f"PMID {ref[5:]}"]
    return [ref]


def resolve(ref: str, passages: dict[str, str]) -> str | None:
    """The passage id ``ref`` points at, or None (an out-of-range index or unknown id)."""
    for cand in candidate_ids(ref):
        if cand in passages:
            return cand
    return None
