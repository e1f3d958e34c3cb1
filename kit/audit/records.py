"""A tool response cut into the records it lists, and what each record holds (pure).

Search and fetch tools answer with one or several *records* (one per paper), each carrying its
identifiers (PMID, PMCID, DOI, ...), a title, metadata and, when the tool gives it, a passage
(abstract, snippet, full text). The audit reads a cited identifier's evidence from the record
that names it, so every identifier of one record points at the same record text, wherever in
the record it stands (a DOI printed after the abstract belongs to that abstract).

**A record's own identifiers** (:attr:`Record.keys`) are those of its id fields (``PMID:``,
``DOI:``, ``IDs:``, MEDLINE ``PMID-`` / ``PMC -`` / ``AID -``, JSON ``pmid`` / ``uid`` /
``externalIds`` / ``articleids``: :mod:`kit.audit.record_fields`), of its header lines
(headings, numbered and bulleted entries, lines opening with an identifier) and of lines that
list identifiers (two schemes or more, few other words) -- not an identifier its prose mentions
("as reported earlier (PMID 123)"), unless the record has none of these at all.

Declared rule (:func:`split_records`), tried in this order; the first that applies decides:

1. **JSON.** A response that parses as JSON (or JSON lines) gives the record objects of
   :func:`kit.audit.records_json.record_objects`: a top object naming its own identifiers is
   one record (a single-paper fetch, whatever it lists); else the first list, breadth first,
   whose elements carry id fields (Europe PMC ``resultList.result``, Semantic Scholar
   ``data``), or the record objects among an object's values (esummary ``result``, records
   keyed by uid). A record's text is its fields written ``key: value``, one a line (a metadata
   field such as ``authors`` one line); the papers it lists (``references``) are records of
   their own. JSON without record objects is read as those lines by rules 2-4.
2. **One paper.** A response whose own identifiers (above) name one paper -- no two values of
   one scheme -- is one record: a full-text fetch with ``## Methods`` headings, an abstract
   with numbered lines, a page with ``---`` rules.
3. **Record starts**, in this order, each used only when the pieces it cuts name different
   papers and no piece names two values of one scheme; a piece naming no identifier (a
   section, a list item inside an abstract) or the same paper as the piece before it continues
   that piece:

   a. a **repeated id field** -- ``Key: value`` lines whose first field name occurring twice is
      an id field (``PMID:``, ``DOI:``, ``URL:``) start a record at each occurrence (each must
      open a paragraph or follow another field line; blank lines inside a record do not cut
      it; a piece without identifiers is a record of its own here);
   b. **markdown headings** (``## ...``, the top level occurring twice);
   c. **numbered entries** (``1. ``, ``2) ``, ``[3] ``) -- PubMed's abstract format
      (``1. Journal. 2020...; title; authors; Author information: ...``) included; a numbered
      line inside a text field's value (``Abstract: We asked:`` then ``1) ...``) is none;
   d. **bulleted entries** (``- [Title](https://pubmed.ncbi.nlm.nih.gov/123/)``,
      ``* Title - PMID 123``), not bulleted ``Key: value`` fields;
   e. **identifier-led lines** (``[PMID 123] Title ...``, ``PMID 123 - Title``) of the scheme
      of the first such line, at least two values;
   f. any other **repeated field** (``Title:``, ``Source:``), as in a.
4. **Paragraphs.** Blank-line paragraphs, separator lines (``---``, ``***``, ``===``) ending
   one; a paragraph naming no own identifier, or the same paper, continues the record before
   it; a paragraph naming several values of one scheme is cut where a mention of that scheme
   names a new value (the paper each mention heads). Known limit: one unbroken paragraph that
   prints each paper's identifiers after its text is cut one record late.

Text before the first record start is a record of its own (a header such as "3 results").

**Passage or title only** (:attr:`Record.passage`): a record has a passage when at least
:data:`MIN_PASSAGE_WORDS` words (:func:`kit.audit.record_fields.count_words`: no identifiers,
links, tokens with digits or hex runs, "abstract unavailable" notes) stand in its text fields
(abstract, text, body, snippet, summary, MEDLINE ``AB``, structured-abstract sections ...) or
in lines under no field; never in metadata or other fields (title, authors, ``journalTitle``,
``authorString``, ``fulljournalname``, MEDLINE ``TI`` and its wrapped lines), nor in an
author list's or address's lines, nor in the title of a record cut at a heading / numbered /
bulleted / identifier-led line (its first sentence, or the whole line when it is a citation:
journal, year;volume:pages). PubMed's abstract format opens with a citation line: that line,
the title paragraph after it and an author-list paragraph are no passage. A record with a title
and no passage gives the verifier nothing to check a claim against: the audit reports it as
``no_passage`` instead of scoring the claim against the title.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from kit.audit.record_fields import (
    LIST_FIELDS,
    count_words,
    id_field_scheme,
    is_id_field,
    is_text_field,
    name_words,
    value_ids,
)
from kit.audit.records_json import (
    element_ids,
    flatten,
    nested_records,
    one_paper,
    own_ids,
    parse_json,
    passage_words,
    record_objects,
)
from kit.corpus.identifiers import find_identifiers

Key = tuple[str, str]
MIN_PASSAGE_WORDS = 3
_TITLE_FIELDS = frozenset(("title", "article title", "ti"))
_MEDLINE_TAGS = frozenset(
    "PMID OWN STAT DCOM LR IS VI IP DP TI PG LID AB CI FAU AU AD LA GR PT DEP PL TA JT JID SB "
    "MH OT OTO EDAT MHDA CRDT PHST AID PST SO PMC MID COIS CN IR FIR RN OAB OABL CIN CON EIN "
    "ROF RIN SI GS AUID BTI CTI ED FED ISBN PB VTI TT".split()
)
_KEY_LINE = re.compile(
    r"^\s*(?:[-*•]\s+)?(?:\*\*|__)?([A-Za-z][A-Za-z0-9 _/()-]{0,30}?)(?:\*\*|__)?\s*:"
    r"(?:\*\*|__)?(?:\s+(.*)|\s*)$"
)
_MEDLINE = re.compile(r"^([A-Z]{2,4}) {0,2}- (.*)$")
_SEPARATOR = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,}|={3,})\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_NUMBERED = re.compile(r"^(?:\d{1,3}[.)]|\[\d{1,3}\])\s+\S")
_BULLET = re.compile(r"^(\s{0,3})[-*•+]\s+\S")
_MARKER = re.compile(r"^\s*(?:(?:#{1,6}|\d{1,3}[.)]|\[\d{1,3}\]|[-*•+])\s+)+")
_LEAD = re.compile(r"^\s*(?:[-*•]\s+)?[\[(]?\s*")
_CITATION = re.compile(
    r"\b(?:1[89]|20)\d{2}\b[^.\n]{0,30}?(?:[;:]\s*\(?\d|\.\s*(?:doi|epub)\b)"
    r"|\bonline ahead of print\b",
    re.I,
)
_AFFIX = re.compile(r"\(\d+(?:,\s*\d+)*\)")
_AUTHOR = re.compile(r"^[^\W\d_][\w'’.-]*(?:\s+[^\W\d_][\w'’.-]*){0,3}\s+[A-Z]{1,4}$")
_SENTENCE_END = re.compile(r"(?<=[\w)\]])[.?!]\s+(?=\S)")
_ID_LINE_WORDS = 8


@dataclass(frozen=True)
class Record:
    """One record of a tool response: its text, its own identifiers ((scheme, value) keys of
    :class:`kit.corpus.identifiers.Identifier`) and whether it holds a passage."""

    text: str
    keys: frozenset[Key]
    passage: bool


# ----------------------------------------------------------------------------- lines


def field(line: str) -> tuple[str, str] | None:
    """(name, value) of a ``Key: value`` line (name lower case, words split: ``abstractText``
    -> ``abstract text``) or of a MEDLINE ``TAG - value`` line (``ti``), else None. A name
    holding a digit (``PMID 123: ...``) is no field name."""
    m = _MEDLINE.match(line)
    if m and m.group(1) in _MEDLINE_TAGS and line[4:6] == "- ":
        return m.group(1).lower(), m.group(2)
    m = _KEY_LINE.match(line)
    if not m or "://" in line[: m.end(1) + 3] or any(c.isdigit() for c in m.group(1)):
        return None
    name = " ".join(name_words(m.group(1)))
    return (name, m.group(2) or "") if name else None


def field_name(line: str) -> str | None:
    """The field name of a ``Key: value`` / MEDLINE line (:func:`field`), else None."""
    f = field(line)
    return f[0] if f else None


def _line_keys(line: str) -> set[Key]:
    return {ident.key for _, _, ident in find_identifiers(line)}


def _all_keys(text: str) -> frozenset[Key]:
    return frozenset(_line_keys(text))


def _id_led(line: str) -> Key | None:
    """The identifier a line opens with (``[PMID 1] ...``, ``PMID 1 - ...``), unless the line is
    a ``Key: value`` field."""
    lead = _LEAD.match(line)
    start = lead.end() if lead else 0
    found = find_identifiers(line[start : start + 200])
    if not found or found[0][0] != 0 or field(line) is not None:
        return None
    return found[0][2].key


def _header_line(line: str) -> bool:
    """A heading, numbered or bulleted entry, or a line opening with an identifier."""
    if _HEADING.match(line) or _NUMBERED.match(line) or _BULLET.match(line):
        return True
    return _id_led(line) is not None


def _lists_ids(line: str, keys: set[Key]) -> bool:
    """A line listing identifiers: two schemes or more (URLs aside), few other words."""
    schemes = {s for s, _ in keys if s != "URL"}
    return len(schemes) >= 2 and count_words(line) <= _ID_LINE_WORDS


def explicit_keys(lines: Iterable[str]) -> frozenset[Key]:
    """The identifiers ``lines`` name in id fields, header lines and identifier lists (module
    doc), not in prose."""
    out: set[Key] = set()
    for line in lines:
        f = field(line)
        if f is not None:
            if is_id_field(f[0]):
                out |= value_ids(f[1], id_field_scheme(f[0]))
            continue
        keys = _line_keys(line) if line.strip() else set()
        if keys and (_header_line(line) or _lists_ids(line, keys)):
            out |= keys
    return frozenset(out)


def block_keys(lines: list[str]) -> frozenset[Key]:
    """A record's own identifiers: :func:`explicit_keys`, else every identifier it names."""
    return explicit_keys(lines) or _all_keys("\n".join(lines))


# ----------------------------------------------------------------------------- passage


def _paragraph_end(lines: list[str], i: int) -> int:
    """The index after the paragraph that starts at or after ``i`` (blank lines skipped)."""
    while i < len(lines) and not lines[i].strip():
        i += 1
    while i < len(lines) and lines[i].strip():
        i += 1
    return i


def _author_list(lines: list[str]) -> bool:
    """A paragraph listing authors (``Lord CE(1), Wertman JN, Lane S.``)."""
    text = _AFFIX.sub("", " ".join(ln.strip() for ln in lines)).rstrip(".")
    items = [t.strip() for t in text.split(",")]
    return bool(text) and all(_AUTHOR.match(t) for t in items)


def _after_citation(lines: list[str], head: int) -> list[str]:
    """PubMed's abstract format: the lines after its citation line ``head``, its title
    paragraph and an author-list paragraph (when the citation line stands alone)."""
    i = head + 1
    if i < len(lines) and lines[i].strip():
        return lines[i:]
    i = _paragraph_end(lines, i)  # the title
    j = _paragraph_end(lines, i)
    authors = [ln for ln in lines[i:j] if ln.strip()]
    return lines[j:] if authors and _author_list(authors) else lines[i:]


def _drop_title(lines: list[str], title_line: bool) -> list[str]:
    """``lines`` without their title (module doc): the first sentence of an opening header
    line, the whole line when it is a citation, PubMed's citation + title + authors."""
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        return []
    head = lines[first]
    if _NUMBERED.match(head) and _CITATION.search(head):
        return _after_citation(lines, first)
    fields = [field(ln) for ln in lines]
    titled = any(f is not None and f[0] in _TITLE_FIELDS for f in fields)
    if not title_line or titled or fields[first] is not None:
        return lines
    if _CITATION.search(head):
        return lines[first + 1 :]
    rest = _SENTENCE_END.split(_MARKER.sub("", head), maxsplit=1)
    return [*lines[:first], *rest[1:], *lines[first + 1 :]]


def _passage_lines(lines: list[str]) -> list[str]:
    """The text-field values and the lines under no metadata field (module doc)."""
    out: list[str] = []
    current: str | None = None
    listing = False
    for line in lines:
        if not line.strip():
            current, listing = None, False
            continue
        f = field(line)
        if f is not None:
            current, listing = f[0], f[0] in LIST_FIELDS
            if is_text_field(f[0]):
                out.append(f[1])
            continue
        wrapped = current is not None and line[:1].isspace() and not is_text_field(current)
        if not listing and not wrapped:
            out.append(line)
    return out


def has_passage(lines: list[str], title_line: bool = False) -> bool:
    """True when the record ``lines`` hold at least :data:`MIN_PASSAGE_WORDS` words of passage
    (module doc). ``title_line``: the record was cut at a heading / numbered / bulleted /
    identifier-led line, whose first sentence is its title."""
    kept = [ln for ln in lines if not _SEPARATOR.match(ln)]
    body = _passage_lines(_drop_title(kept, title_line))
    return count_words("\n".join(body)) >= MIN_PASSAGE_WORDS


def _record(lines: list[str], title_line: bool = False) -> Record | None:
    kept = [ln for ln in lines if not _SEPARATOR.match(ln)]
    text = "\n".join(kept).strip()
    if not text:
        return None
    return Record(text, block_keys(kept), has_passage(kept, title_line))


# ----------------------------------------------------------------------------- record starts

Block = tuple[list[str], bool]  # lines, opened at a record start


def _cut(lines: list[str], starts: Iterable[int]) -> list[Block]:
    """``lines`` cut before each index of ``starts`` and at separator lines; each block with
    whether it opens at one of ``starts`` (not the text before the first, nor after a
    separator)."""
    opening = set(starts)
    cuts = sorted(opening | {i for i, ln in enumerate(lines) if _SEPARATOR.match(ln)})
    out, prev = [], 0
    for c in [*cuts, len(lines)]:
        if c > prev:
            block = lines[prev:c]
            if any(ln.strip() for ln in block):
                out.append((block, prev in opening))
        prev = c
    return out


def _merge(blocks: list[Block], bare: bool) -> list[Block]:
    """A block opened at a record start continues the block before it when it names the same
    paper (shares an own identifier, no conflict) or, with ``bare``, no own identifier."""
    out: list[Block] = []
    keys: list[frozenset[Key]] = []
    for block, opened in blocks:
        own = explicit_keys(block)
        if out and opened:
            same = bool(own & keys[-1]) and one_paper(own | keys[-1])
            if same or (bare and not own):
                out[-1] = ([*out[-1][0], *block], out[-1][1])
                keys[-1] = keys[-1] | own
                continue
        out.append((block, opened))
        keys.append(own)
    return out


def _valid(blocks: list[Block]) -> bool:
    """The cut names different papers, and no block two values of one scheme."""
    if not all(one_paper(explicit_keys(b)) for b, _ in blocks):
        return False
    keys = [k for k in (block_keys(b) for b, _ in blocks) if k]
    return len(keys) >= 2 and not one_paper(frozenset().union(*keys), urls=True)


def _repeated_field_starts(lines: list[str], id_lead: bool) -> list[int]:
    """Rules 3a / 3f: each line of the first field name that occurs twice, when it is (3a) or
    is not (3f) an id field -- and every such line opens a paragraph or follows another field
    line (else the field sits inside records that another structure delimits, e.g. ``PMID:``
    printed under a numbered title)."""
    names = [field_name(ln) for ln in lines]
    counts: dict[str, int] = {}
    for n in names:
        if n is not None:
            counts[n] = counts.get(n, 0) + 1
    lead = next((n for n in names if n is not None and counts[n] >= 2), None)
    if lead is None or is_id_field(lead) != id_lead:
        return []
    starts = [i for i, n in enumerate(names) if n == lead]
    for i in starts:
        before = next((j for j in range(i - 1, -1, -1) if lines[j].strip()), None)
        opens = before is None or before < i - 1 or _SEPARATOR.match(lines[before])
        if not opens and names[before] is None:
            return []
    return starts


def _heading_starts(lines: list[str]) -> list[int]:
    """Rule 3b: the top heading level that occurs at least twice."""
    levels = [len(ln) - len(ln.lstrip().lstrip("#")) if _HEADING.match(ln) else 0 for ln in lines]
    for level in sorted({v for v in levels if v}):
        starts = [i for i, v in enumerate(levels) if v == level]
        if len(starts) >= 2:
            return starts
    return []


def _entry_starts(lines: list[str], pattern: re.Pattern[str]) -> list[int]:
    """Lines matching ``pattern`` that are no field and stand in no text field's value (a
    list inside ``Abstract: ...``: up to the next blank line)."""
    starts: list[int] = []
    in_value = False
    for i, line in enumerate(lines):
        if not line.strip():
            in_value = False
            continue
        f = field(line)
        if f is not None:
            in_value = bool(f[1].strip()) and is_text_field(f[0]) and not line[:1].isspace()
        elif pattern.match(line) and not in_value:
            starts.append(i)
    return starts


def _numbered_starts(lines: list[str]) -> list[int]:
    """Rule 3c."""
    return _entry_starts(lines, _NUMBERED)


def _bullet_starts(lines: list[str]) -> list[int]:
    """Rule 3d: bulleted entries at the outermost indentation."""
    starts = _entry_starts(lines, _BULLET)
    depth = [len(lines[i]) - len(lines[i].lstrip()) for i in starts]
    return [i for i, d in zip(starts, depth, strict=True) if d == min(depth)] if starts else []


def _id_led_starts(lines: list[str]) -> list[int]:
    """Rule 3e."""
    led = [(i, _id_led(ln)) for i, ln in enumerate(lines)]
    mine = [(i, k) for i, k in led if k is not None]
    if not mine:
        return []
    scheme = mine[0][1][0]
    mine = [(i, k) for i, k in mine if k[0] == scheme]
    return [i for i, _ in mine] if len({k for _, k in mine}) >= 2 else []


Rule = tuple[Callable[[list[str]], list[int]], bool, bool]  # starts, title line, bare merge
_RULES: tuple[Rule, ...] = (
    (lambda ls: _repeated_field_starts(ls, True), False, False),
    (_heading_starts, True, True),
    (_numbered_starts, True, True),
    (_bullet_starts, True, True),
    (_id_led_starts, True, True),
    (lambda ls: _repeated_field_starts(ls, False), False, False),
)


# ----------------------------------------------------------------------------- paragraphs


def _paragraphs(lines: list[str]) -> list[list[str]]:
    """Rule 4: blank-line paragraphs; one naming no own identifier (explicit ones when the
    response has any, else any) or the same paper continues the record before it; one naming
    several values of one scheme is cut at each mention of that scheme."""
    explicit = bool(explicit_keys(lines))
    paras: list[list[str]] = [[]]
    for ln in lines:
        if ln.strip():
            paras[-1].append(ln)
        elif paras[-1]:
            paras.append([])
    out: list[list[str]] = []
    keys: frozenset[Key] = frozenset()
    for p in (p for p in paras if p):
        own = explicit_keys(p) if explicit else _all_keys("\n".join(p))
        if out and (not own or (own & keys and one_paper(own | keys))):
            out[-1].extend(["", *p])
            keys = keys | own
            continue
        pieces = _by_lead_scheme(p, own)
        out.extend(pieces)
        keys = explicit_keys(pieces[-1]) if explicit else _all_keys("\n".join(pieces[-1]))
    return out


def _by_lead_scheme(lines: list[str], own: frozenset[Key]) -> list[list[str]]:
    """A paragraph cut where a mention of the lead scheme (of its first own identifier) names a
    new value (a repeated mention stays in its record)."""
    text = "\n".join(lines)
    found = [(a, ident.key) for a, _, ident in find_identifiers(text) if ident.key in own]
    if not found:
        return [lines]
    scheme = found[0][1][0]
    lead = [(a, k) for a, k in found if k[0] == scheme]
    if len({k for _, k in lead}) < 2:
        return [lines]
    starts = [a for i, (a, k) in enumerate(lead) if i == 0 or k != lead[i - 1][1]]
    cuts = [0, *starts[1:], len(text)] if starts[0] > 0 else [*starts, len(text)]
    pieces = [text[a:b] for a, b in pairwise(cuts)]
    return [p.strip().splitlines() for p in pieces if p.strip()]


# ----------------------------------------------------------------------------- responses


def _json_record(obj: dict[str, Any]) -> Record | None:
    """One record object: its text (nested records left out, except the one a wrapper holds),
    its own identifiers and its passage."""
    wrapper = not own_ids(obj)
    text = "\n".join(flatten(obj, skip_records=not wrapper)).strip()
    if not text:
        return None
    keys = element_ids(obj) or _all_keys(text)
    words = passage_words(obj, skip_records=not wrapper)
    return Record(text, keys, words >= MIN_PASSAGE_WORDS)


def _json_records(obj: Any) -> list[Record] | None:
    rows = record_objects(obj)
    if rows is None:
        return None
    objs = [o for row in rows for o in (row, *(nested_records(row) if own_ids(row) else []))]
    return [r for r in map(_json_record, objs) if r is not None]


def _text_records(lines: list[str]) -> list[Record]:
    if one_paper(block_keys(lines), urls=True):
        whole = _record(lines)
        return [whole] if whole is not None else []
    for starts_of, title_line, bare in _RULES:
        starts = starts_of(lines)
        if len(starts) >= 2:
            blocks = _merge(_cut(lines, starts), bare)
            if _valid(blocks):
                recs = [_record(b, title_line and opened) for b, opened in blocks]
                return [r for r in recs if r is not None]
    blocks = [p for part, _ in _cut(lines, []) for p in _paragraphs(part)]
    return [r for r in map(_record, blocks) if r is not None]


def split_records(text: str) -> list[Record]:
    """The records of one tool response, in order (module rule)."""
    obj = parse_json(text)
    if isinstance(obj, list | dict):
        recs = _json_records(obj)
        if recs is not None:
            return recs
        return _text_records(flatten(obj))  # no record objects: its fields, read as text
    return _text_records(text.splitlines())


def whole_record(text: str) -> Record:
    """The whole response as one record (a fetch of the one paper the call asked for): JSON
    as its ``key: value`` lines, words under text fields anywhere; text as it stands."""
    obj = parse_json(text)
    if isinstance(obj, list | dict):
        flat = "\n".join(flatten(obj)).strip()
        words = passage_words(obj, skip_records=False)
        return Record(flat, _all_keys(flat), words >= MIN_PASSAGE_WORDS)
    lines = text.splitlines()
    return Record(text.strip(), block_keys(lines), has_passage(lines))
