"""A tool response cut into the records it lists, and what each record holds (pure).

Search and fetch tools answer with one or several *records* (one per paper), each carrying its
identifiers (PMID, PMCID, DOI, ...), a title, metadata and, when the tool gives it, a passage
(abstract, snippet, full text). The audit reads a cited identifier's evidence from the record
that names it, so every identifier of one record points at the same record text, wherever in
the record it stands (a DOI printed after the abstract belongs to that abstract).

Declared rule (:func:`split_records`), tried in this order; the first that applies decides:

1. **JSON.** A response that parses as JSON (or JSON lines): the first container found breadth
   first whose elements are objects about one paper each (some name an identifier, none names
   two values of one scheme) -- a list of objects such as ``results``, or an object holding at
   least two objects (records keyed by id) -- gives one record per element. A record's text is
   its fields written ``key: value``, one a line (a metadata field such as ``authors`` one
   line). JSON without such a container is read as those ``key: value`` lines by rules 2-5.
2. **Repeated field.** Text written as ``Key: value`` lines: the first field name that occurs
   at least twice (``PMID:``, ``Title:``, ``Source:`` -- whatever the tool puts first) starts
   a new record at each occurrence; blank lines inside a record do not cut it.
3. **Headings / numbered entries.** Markdown headings (``## ...``), numbered entries at the
   start of a line (``1. ``, ``2) ``, ``[3] ``), when there are at least two: each starts one.
4. **Identifier-led lines.** Lines that open with an identifier (``[PMID 123] Title ...``,
   ``PMID 123 - Title``) of the scheme of the first such line, at least two with different
   values: each starts one.
5. **Blank lines.** Paragraphs; a paragraph naming no identifier continues the record before
   it (an abstract's second paragraph); a paragraph naming several values of one scheme is cut
   where a mention of that scheme names a new value (the paper each mention heads). Known
   limit: one unbroken paragraph that prints each paper's identifiers after its text is cut
   one record late.

Separator lines (``---``, ``***``, ``===``) always end a record. Text before the first record
start is a record of its own (a header such as "3 results"), holding no identifier in practice.

**Passage or title only** (:attr:`Record.passage`): a record has a passage when, after removing
its identifiers, links, field names, its title (a ``Title:`` field, or the heading / numbered /
identifier-led line that opens it) and metadata fields (:data:`META_FIELDS`: authors, journal,
year, ...) and "no abstract available" notes, at least :data:`MIN_PASSAGE_WORDS` words remain.
A record with a title and no passage gives the verifier nothing to check a claim against: the
audit reports it as ``no_passage`` instead of scoring the claim against the title.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from kit.corpus.identifiers import find_identifiers

MIN_PASSAGE_WORDS = 3
MAX_JSON_CHARS = 5_000_000
META_FIELDS = frozenset(
    (
        "title", "article title", "authors", "author", "author list", "first author",
        "last author", "journal", "journal title", "source", "venue", "publication",
        "publisher", "year", "date", "pub date", "pubdate", "publication date", "published",
        "volume", "issue", "pages", "url", "link", "links", "pmid", "pmcid", "doi", "nct",
        "nct id", "arxiv", "arxiv id", "id", "ids", "identifier", "identifiers", "uid", "type",
        "publication type", "publication types", "article type", "language", "keywords", "mesh",
        "mesh terms", "affiliation", "affiliations", "citation", "score", "rank", "relevance",
        "status", "license",
    )
)  # fmt: skip
_LIST_FIELDS = frozenset({"authors", "author list", "affiliation", "affiliations", "keywords"})

_KEY_LINE = re.compile(
    r"^\s*(?:[-*•]\s+)?(?:\*\*|__)?([A-Za-z][A-Za-z0-9 _/()-]{0,30}?)(?:\*\*|__)?\s*:"
    r"(?:\*\*|__)?(?:\s+(.*)|\s*)$"
)
_SEPARATOR = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,}|={3,})\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_NUMBERED = re.compile(r"^(?:\d{1,3}[.)]|\[\d{1,3}\])\s+\S")
_LEAD = re.compile(r"^\s*(?:[-*•]\s+)?[\[(]?\s*")
_NO_TEXT = re.compile(
    r"\b(?:no abstract(?: is)? available|abstract not available|no abstract|not available|"
    r"n/a|none)\b",
    re.I,
)
_WORD = re.compile(r"[^\W\d_]{2,}")
_SENTENCE_END = re.compile(r"(?<=[\w)\]])[.?!]\s+(?=\S)")
_URL = re.compile(r"https?://\S+", re.I)


@dataclass(frozen=True)
class Record:
    """One record of a tool response: its text, the identifiers it names ((scheme, value) keys
    of :class:`kit.corpus.identifiers.Identifier`) and whether it holds a passage."""

    text: str
    keys: frozenset[tuple[str, str]]
    passage: bool


def field_name(line: str) -> str | None:
    """The field name of a ``Key: value`` line (lower case, ``_`` as space), else None."""
    m = _KEY_LINE.match(line)
    if not m or "://" in line[: m.end(1) + 3]:
        return None
    return " ".join(m.group(1).replace("_", " ").lower().split())


def _keys(text: str) -> frozenset[tuple[str, str]]:
    return frozenset(ident.key for _, _, ident in find_identifiers(text))


def _strip_ids(text: str) -> str:
    found = find_identifiers(text)
    out, pos = [], 0
    for a, b, _ in found:
        out.append(text[pos:a])
        pos = b
    out.append(text[pos:])
    return _URL.sub(" ", "".join(out))


def has_passage(lines: list[str], title_line: bool = False) -> bool:
    """True when the record ``lines`` hold at least :data:`MIN_PASSAGE_WORDS` words beyond their
    title, metadata fields and identifiers (module doc). ``title_line``: the record was cut at a
    heading / numbered / identifier-led line, whose first sentence is its title."""
    names = [field_name(ln) for ln in lines]
    titled = "title" in names or "article title" in names
    content: list[str] = []
    current: str | None = None
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    for i, (line, name) in enumerate(zip(lines, names, strict=True)):
        if not line.strip() or _SEPARATOR.match(line):
            continue
        if name is not None:
            current = name
            if name in META_FIELDS:
                continue
            m = _KEY_LINE.match(line)
            content.append((m.group(2) if m else "") or "")
            continue
        if current in _LIST_FIELDS:
            continue  # a wrapped author list
        if i == first and title_line and not titled:
            # "## Title", "1. Title. Text", "[PMID 1] Title. Text": the first sentence is a title
            head = re.sub(r"^\s*(?:#{1,6}|\d{1,3}[.)]|\[\d{1,3}\])\s+", "", line)
            rest = _SENTENCE_END.split(head, maxsplit=1)
            if len(rest) == 2:
                content.append(rest[1])
            continue
        content.append(line)
    text = _NO_TEXT.sub(" ", _strip_ids("\n".join(content)))
    return len(_WORD.findall(text)) >= MIN_PASSAGE_WORDS


def _id_led(line: str) -> tuple[str, str] | None:
    """The identifier a line opens with (``[PMID 1] ...``, ``PMID 1 - ...``), unless the line is
    a ``Key: value`` field."""
    lead = _LEAD.match(line)
    start = lead.end() if lead else 0
    found = find_identifiers(line[start : start + 200])
    if not found or found[0][0] != 0 or field_name(line) is not None:
        return None
    return found[0][2].key


def _record(lines: list[str], title_line: bool = False) -> Record | None:
    kept = [ln for ln in lines if not _SEPARATOR.match(ln)]
    text = "\n".join(kept).strip()
    if not text:
        return None
    return Record(text, _keys(text), has_passage(kept, title_line))


def _cut(lines: list[str], starts: Iterable[int]) -> list[tuple[list[str], bool]]:
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


def _repeated_field_starts(lines: list[str]) -> list[int]:
    """Rule 2: each line of the first field name that occurs twice -- when every such line
    opens a paragraph or follows another field line (else the field sits inside records that
    another structure delimits, e.g. ``PMID:`` printed under a numbered title)."""
    names = [field_name(ln) for ln in lines]
    counts: dict[str, int] = {}
    for n in names:
        if n is not None:
            counts[n] = counts.get(n, 0) + 1
    lead = next((n for n in names if n is not None and counts[n] >= 2), None)
    starts = [i for i, n in enumerate(names) if lead is not None and n == lead]
    for i in starts:
        before = next((j for j in range(i - 1, -1, -1) if lines[j].strip()), None)
        opens = before is None or before < i - 1 or _SEPARATOR.match(lines[before])
        if not opens and names[before] is None:
            return []
    return starts


def _heading_starts(lines: list[str]) -> list[int]:
    """Rule 3 for headings: the top heading level that occurs at least twice."""
    levels = [len(ln) - len(ln.lstrip().lstrip("#")) if _HEADING.match(ln) else 0 for ln in lines]
    for level in sorted({v for v in levels if v}):
        starts = [i for i, v in enumerate(levels) if v == level]
        if len(starts) >= 2:
            return starts
    return []


def _id_led_starts(lines: list[str]) -> list[int]:
    led = [(i, _id_led(ln)) for i, ln in enumerate(lines)]
    led = [(i, k) for i, k in led if k is not None]
    if not led:
        return []
    scheme = led[0][1][0]
    mine = [(i, k) for i, k in led if k[0] == scheme]
    return [i for i, _ in mine] if len({k for _, k in mine}) >= 2 else []


def _paragraphs(lines: list[str]) -> list[list[str]]:
    """Rule 5: blank-line paragraphs, identifier-less ones joined to the record before them, a
    paragraph naming several values of one scheme cut at each mention of that scheme."""
    paras: list[list[str]] = [[]]
    for ln in lines:
        if ln.strip():
            paras[-1].append(ln)
        elif paras[-1]:
            paras.append([])
    out: list[list[str]] = []
    for p in (p for p in paras if p):
        if out and not _keys("\n".join(p)):
            out[-1].extend(["", *p])
        else:
            out.extend(_by_lead_scheme(p))
    return out


def _by_lead_scheme(lines: list[str]) -> list[list[str]]:
    text = "\n".join(lines)
    found = find_identifiers(text)
    if not found:
        return [lines]
    scheme = found[0][2].scheme
    lead = [(a, ident.key) for a, _, ident in found if ident.scheme == scheme]
    if len({k for _, k in lead}) < 2:
        return [lines]
    # a new record where the lead scheme's value changes (a repeated mention stays in its record)
    starts = [a for i, (a, k) in enumerate(lead) if i == 0 or k != lead[i - 1][1]]
    cuts = [0, *starts[1:], len(text)] if starts[0] > 0 else [*starts, len(text)]
    pieces = [text[a:b] for a, b in pairwise(cuts)]
    return [p.strip().splitlines() for p in pieces if p.strip()]


def _parse_json(text: str) -> Any:
    """The decoded JSON response (JSON lines as a list of objects), else None."""
    t = text.strip()
    if not t or t[0] not in "[{" or len(t) > MAX_JSON_CHARS:
        return None
    try:
        return json.loads(t)
    except ValueError:
        rows = []
        for line in t.splitlines():
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                return None
            if not isinstance(row, dict):
                return None
            rows.append(row)
        return rows or None


def _one_paper_each(elements: list[dict[str, Any]]) -> bool:
    """True when some element names an identifier and none names two values of one scheme."""
    named = False
    for e in elements:
        found = find_identifiers("\n".join(_flatten(e)))
        keys = {ident.key for _, _, ident in found}
        if len(keys) != len({k[0] for k in keys}):
            return False
        named = named or bool(keys)
    return named


def _record_objects(obj: Any) -> list[dict[str, Any]] | None:
    """Rule 1: the first container, breadth first, whose elements are objects about one paper
    each -- a list of objects, or an object of at least two objects (records keyed by id)."""
    queue: list[Any] = [obj]
    for _ in range(256):
        if not queue:
            break
        cur = queue.pop(0)
        if isinstance(cur, list):
            elements = cur if cur and all(isinstance(x, dict) for x in cur) else []
            queue.extend(v for v in cur if isinstance(v, list | dict))
        else:
            elements = [v for v in cur.values() if isinstance(v, dict)]
            elements = elements if len(elements) >= 2 else []
            queue.extend(v for v in cur.values() if isinstance(v, list | dict))
        if elements and _one_paper_each(elements):
            return elements
    return None


def _flatten(value: Any, key: str = "") -> list[str]:
    """``key: value`` lines of a JSON value; a metadata field (authors, ...) stays one line."""
    name = " ".join(key.replace("_", " ").lower().split())
    if isinstance(value, dict | list) and name in META_FIELDS:
        return [f"{key}: " + "; ".join(_scalars(value))]
    if isinstance(value, dict):
        return [ln for k, v in value.items() for ln in _flatten(v, str(k))]
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            joined = "; ".join(str(v) for v in value if v is not None)
            return [f"{key}: {joined}"] if key else [joined]
        return [ln for v in value for ln in _flatten(v, key)]
    if value is None or value == "":
        return []
    return [f"{key}: {value}" if key else str(value)]


def _scalars(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _scalars(v)]
    if isinstance(value, list):
        return [s for v in value for s in _scalars(v)]
    return [] if value is None or value == "" else [str(value)]


def split_records(text: str) -> list[Record]:
    """The records of one tool response, in order (module rule)."""
    obj = _parse_json(text)
    if obj is not None:
        rows = _record_objects(obj) if isinstance(obj, list | dict) else None
        if rows is not None:
            recs = (_record(_flatten(row)) for row in rows)
            return [r for r in recs if r is not None]
        lines = _flatten(obj)  # no list of records: its fields, read as text (rules 2-5)
    else:
        lines = text.splitlines()
    rules = (
        (_repeated_field_starts, False),
        (_heading_starts, True),
        (lambda ls: [i for i, ln in enumerate(ls) if _NUMBERED.match(ln)], True),
        (_id_led_starts, True),
    )
    for starts_of, title_line in rules:
        starts = starts_of(lines)
        if len(starts) >= 2:
            recs = [_record(b, title_line and opens) for b, opens in _cut(lines, starts)]
            return [r for r in recs if r is not None]
    blocks = [p for part, _ in _cut(lines, []) for p in _paragraphs(part)]
    return [r for r in (_record(b) for b in blocks) if r is not None]
