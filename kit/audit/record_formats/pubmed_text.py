"""``pubmed-abstract``: PubMed's efetch ``rettype=abstract`` text (pure).

The layout NCBI prints, records apart by blank lines::

    1. J Clin Med. 2020 Mar 5;9(3):700. doi: 10.3390/jcm9030700.   <- citation line

    Title of the paper, possibly wrapped.

    Smith J(1), Lee K(2).                                          <- authors

    Author information:
    (1)Department of ...

    BACKGROUND: The abstract ...                                   <- the passage

    Copyright (c) 2020 The Authors.

    DOI: 10.3390/jcm9030700
    PMCID: PMC7141190
    PMID: 32150987  [Indexed for MEDLINE]                          <- the record ends here

Rule (:func:`pubmed_abstract_records`):

* **Detection** (:func:`is_pubmed_abstract`): the first non-blank line is a citation line
  (:func:`citation_line`: ``N. Journal. ... year ...``, naming no PMID or PMC id) and a line
  ``PMID: n`` (with or without ``[Indexed for MEDLINE]``) follows.
* **Records**: the identifiers come at the END of each record, so a record ends after its
  ``PMID: n`` line and the next record starts at the first citation line after it; a citation
  line numbered one more than the record's own that opens a paragraph starts a record too
  (a record printed without its PMID line stays apart from the next, never joined to it). A
  numbered line inside an abstract (``1) ...``, ``2. Smith et al. 2019 (PMID 1)``) starts no
  record: it comes before the record's ``PMID:`` line, and a line naming a PMID / PMC id is no
  citation line.
* **Own identifiers**: the ``DOI:`` / ``PMCID:`` / ``PMID:`` lines and the citation line's
  ``doi:``; never an identifier the abstract mentions.
* **Passage**: the abstract paragraphs only -- not the citation paragraph, the title, the
  authors paragraph (``No authors listed.`` included), ``[Article in ...]``, ``Author
  information:``, ``Copyright``, ``Comment in`` / ``Erratum in`` / ``Update of`` ... notes,
  ``Conflict of interest statement:``, ``Keywords:``, the id lines. A record with fewer than
  :data:`~kit.audit.record_formats.record.MIN_PASSAGE_WORDS` abstract words (a news item, a
  letter) has ``passage=False``.
"""

from __future__ import annotations

import re
from itertools import pairwise

from kit.audit.record_fields import count_words, value_ids
from kit.audit.record_formats.record import MIN_PASSAGE_WORDS, Key, Record
from kit.audit.record_formats.text_passage import author_list
from kit.corpus.identifiers import find_identifiers

FORMAT = "pubmed-abstract"
_ENTRY = re.compile(r"^(\d{1,5})\.\s+\S")
_YEAR = re.compile(r"\b(?:1[89]|20)\d{2}\b")
_PMID_LINE = re.compile(r"^PMID:\s*(\d{1,9})(?:\s+\[[^\]]*\])?\s*$")
_ID_LINE = re.compile(r"^(DOI|PMCID|PMID):\s*(\S.*)$")
_DOI_IN_CITATION = re.compile(r"\bdoi:\s*(10\.\S+?)\.?(?:\s|$)", re.I)
_NOTE = re.compile(
    r"^(?:author information|copyright|©|\(c\)|comment in|comment on|erratum in|erratum for|"
    r"update of|update in|retraction in|retraction of|retracted|republished|corrected and "
    r"republished|expression of concern|conflict of interest|declaration of competing|"
    r"collaborators|investigators|keywords|summary for patients|original report|"
    r"\[article in|no authors listed)",
    re.I,
)
_AUTHOR_ITEM_WORDS = 6


def citation_line(line: str) -> int | None:
    """The entry number of a citation line (``1. J Clin Med. 2020 Mar 5;9(3):700.``): a
    numbered line naming a year and no PMID / PMC id; else None."""
    m = _ENTRY.match(line)
    if not m or not _YEAR.search(line):
        return None
    if any(i.key[0] in ("PMID", "PMCID") for _, _, i in find_identifiers(line)):
        return None
    return int(m.group(1))


def is_pubmed_abstract(lines: list[str]) -> bool:
    """The response is in this format (module rule: detection)."""
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None or citation_line(lines[first]) is None:
        return False
    return any(_PMID_LINE.match(ln.strip()) for ln in lines[first + 1 :])


def _starts(lines: list[str]) -> list[int]:
    """The first line of each record (module rule: records)."""
    starts: list[int] = []
    number: int | None = None
    closed = True  # the record before has printed its PMID line
    for i, line in enumerate(lines):
        if _PMID_LINE.match(line.strip()):
            closed = True
            continue
        opens = i == 0 or not lines[i - 1].strip()
        n = citation_line(line) if opens else None
        if n is not None and (closed or (number is not None and n == number + 1)):
            starts.append(i)
            number, closed = n, False
    return starts


def _paragraphs(lines: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for ln in lines:
        if ln.strip():
            out[-1].append(ln.strip())
        elif out[-1]:
            out.append([])
    return [p for p in out if p]


def _is_authors(para: list[str]) -> bool:
    """An author-list paragraph: names (``Lord CE(1), Wertman JN.``), group names."""
    if author_list(para):
        return True
    text = re.sub(r"\(\d+(?:,\s*\d+)*\)", "", " ".join(para)).strip()
    items = [t.strip() for t in text.rstrip(".").split(",")]
    return text.endswith(".") and all(0 < len(t.split()) <= _AUTHOR_ITEM_WORDS for t in items)


def _abstract(paras: list[list[str]]) -> list[list[str]]:
    """The abstract paragraphs of a record's paragraphs (module rule: passage): after the
    citation paragraph, the title, ``[Article in ...]`` and the authors paragraph, without the
    notes and id paragraphs."""
    rest = paras[2:]
    i = 0
    while i < len(rest) and rest[i][0].lower().startswith("[article in"):
        i += 1
    if i < len(rest) and (_is_authors(rest[i]) or _NOTE.match(rest[i][0])):
        i += 1
    return [p for p in rest[i:] if not _NOTE.match(p[0]) and not all(_ID_LINE.match(x) for x in p)]


def _keys(paras: list[list[str]]) -> frozenset[Key]:
    out: set[Key] = set()
    for line in (x for p in paras for x in p):
        m = _ID_LINE.match(line)
        if m:
            out |= value_ids(m.group(2), m.group(1))
    if paras:
        for m in _DOI_IN_CITATION.finditer(" ".join(paras[0])):
            out |= value_ids(m.group(1), "DOI")
    return frozenset(out)


def _record(lines: list[str]) -> Record | None:
    text = "\n".join(lines).strip()
    if not text:
        return None
    paras = _paragraphs(lines)
    if citation_line(paras[0][0]) is None:  # text before the first record: a header
        return Record(text, frozenset(), count_words(text) >= MIN_PASSAGE_WORDS, FORMAT)
    words = count_words("\n".join(x for p in _abstract(paras) for x in p))
    return Record(text, _keys(paras), words >= MIN_PASSAGE_WORDS, FORMAT)


def pubmed_abstract_records(lines: list[str]) -> list[Record]:
    """The records of a response in this format (module rule), in order."""
    starts = _starts(lines)
    cuts = sorted({0, *starts, len(lines)})
    recs = (_record(lines[a:b]) for a, b in pairwise(cuts))
    return [r for r in recs if r is not None]
