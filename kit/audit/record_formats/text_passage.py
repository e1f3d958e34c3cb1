"""Whether a text record holds a passage, or only a title and metadata (pure).

A record has a passage when at least :data:`~kit.audit.record_formats.record.MIN_PASSAGE_WORDS`
words (:func:`kit.audit.record_fields.count_words`: no identifiers, links, tokens with digits
or hex runs, "abstract unavailable" notes) stand in its text fields (abstract, text, body,
snippet, summary, MEDLINE ``AB``, structured-abstract sections ...) or in lines under no field;
never in metadata or other fields (title, authors, ``journalTitle``, MEDLINE ``TI`` and its
wrapped lines), nor in an author list's or address's lines, nor in the title of a record cut
at a heading / numbered / bulleted / identifier-led line (its first sentence, or the whole
line when it is a citation: journal, year;volume:pages), nor in such a record's byline: a line
wholly in emphasis but for identifiers, their labels and links (``*Smith J, Lee K. J Med, 2011.* PMID: [1](...)``,
the authors and journal of a markdown result list). PubMed's abstract format opens with a
citation line: that line, the title paragraph after it and an author-list paragraph are no
passage (:mod:`kit.audit.record_formats.pubmed_text` reads that format whole).
"""

from __future__ import annotations

import re

from kit.audit.record_fields import LIST_FIELDS, count_words, is_text_field
from kit.audit.record_formats.record import MIN_PASSAGE_WORDS
from kit.audit.record_formats.text_keys import NUMBERED, SEPARATOR, field

_TITLE_FIELDS = frozenset(("title", "article title", "ti"))
_MARKER = re.compile(r"^\s*(?:(?:#{1,6}|\d{1,3}[.)]|\[\d{1,3}\]|[-*•+])\s+)+")
CITATION = re.compile(
    r"\b(?:1[89]|20)\d{2}\b[^.\n]{0,30}?(?:[;:]\s*\(?\d|\.\s*(?:doi|epub)\b)"
    r"|\bonline ahead of print\b",
    re.I,
)
_AFFIX = re.compile(r"\(\d+(?:,\s*\d+)*\)")
_AUTHOR = re.compile(r"^[^\W\d_][\w'’.-]*(?:\s+[^\W\d_][\w'’.-]*){0,3}\s+[A-Z]{1,4}$")
_BYLINE = re.compile(r"^\s*(\*{1,2}|_{1,2})(?=\S)[^*_\n]+?(?<=\S)\1(?!\w)(.*)$")
# an identifier's label word ("PMID:", "DOI"), not the same letters inside a link
# ("pubmed.ncbi...", "doi.org/..."): count_words drops the links and identifiers themselves
_ID_LABEL = re.compile(
    r"(?<![\w./])(?:PMIDs?|PMCIDs?|DOIs?|PubMed|PMC|arXiv|NCT|URL|Link)(?![\w./]):?", re.I
)
_SENTENCE_END = re.compile(r"(?<=[\w)\]])[.?!]\s+(?=\S)")


def paragraph_end(lines: list[str], i: int) -> int:
    """The index after the paragraph that starts at or after ``i`` (blank lines skipped)."""
    while i < len(lines) and not lines[i].strip():
        i += 1
    while i < len(lines) and lines[i].strip():
        i += 1
    return i


def author_list(lines: list[str]) -> bool:
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
    i = paragraph_end(lines, i)  # the title
    j = paragraph_end(lines, i)
    authors = [ln for ln in lines[i:j] if ln.strip()]
    return lines[j:] if authors and author_list(authors) else lines[i:]


def _drop_title(lines: list[str], title_line: bool) -> list[str]:
    """``lines`` without their title (module doc): the first sentence of an opening header
    line, the whole line when it is a citation, PubMed's citation + title + authors."""
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        return []
    head = lines[first]
    if NUMBERED.match(head) and CITATION.search(head):
        return _after_citation(lines, first)
    fields = [field(ln) for ln in lines]
    titled = any(f is not None and f[0] in _TITLE_FIELDS for f in fields)
    if not title_line or titled or fields[first] is not None:
        return lines
    if CITATION.search(head):
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


def _byline(line: str) -> bool:
    """A line wholly in emphasis but for identifiers and links (module doc)."""
    m = _BYLINE.match(line)
    return m is not None and count_words(_ID_LABEL.sub(" ", m.group(2))) == 0


def has_passage(lines: list[str], title_line: bool = False) -> bool:
    """True when the record ``lines`` hold at least :data:`MIN_PASSAGE_WORDS` words of passage
    (module doc). ``title_line``: the record was cut at a heading / numbered / bulleted /
    identifier-led line, whose first sentence is its title."""
    kept = [ln for ln in lines if not SEPARATOR.match(ln)]
    if title_line:
        kept = [ln for ln in kept if not _byline(ln)]
    body = _passage_lines(_drop_title(kept, title_line))
    return count_words("\n".join(body)) >= MIN_PASSAGE_WORDS
