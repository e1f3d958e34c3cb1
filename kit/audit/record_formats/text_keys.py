"""What one line of a text record is, and a text record's own identifiers (pure).

* **Field lines** (:func:`field`): ``Key: value`` (bulleted or bold ``**Key:**`` too; a name
  holding a digit, ``PMID 123: ...``, is none) and MEDLINE ``TAG - value`` lines.
* **Header lines** (:func:`header_line`): markdown headings, numbered (``1. ``, ``2) ``,
  ``[3] ``) and bulleted entries, lines opening with an identifier (``[PMID 1] ...``).
* **A record's own identifiers** (:func:`explicit_keys`): those of its id fields (``PMID:``,
  ``DOI:``, MEDLINE ``PMID-`` / ``PMC -`` / ``AID -``: :mod:`kit.audit.record_fields`), of its
  header lines and of lines that list identifiers (two schemes or more, few other words) --
  not an identifier its prose mentions ("as reported earlier (PMID 123)"), unless the record
  has none of these at all (:func:`block_keys`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kit.audit.record_fields import count_words, id_field_scheme, is_id_field, name_words, value_ids
from kit.audit.record_formats.record import Key
from kit.corpus.identifiers import find_identifiers

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
SEPARATOR = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,}|={3,})\s*$")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
NUMBERED = re.compile(r"^(?:\d{1,3}[.)]|\[\d{1,3}\])\s+\S")
BULLET = re.compile(r"^(\s{0,3})[-*•+]\s+\S")
_LEAD = re.compile(r"^\s*(?:[-*•]\s+)?[\[(]?\s*")
_ID_LINE_WORDS = 8


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


def line_keys(line: str) -> set[Key]:
    return {ident.key for _, _, ident in find_identifiers(line)}


def all_keys(text: str) -> frozenset[Key]:
    return frozenset(line_keys(text))


def id_led(line: str) -> Key | None:
    """The identifier a line opens with (``[PMID 1] ...``, ``PMID 1 - ...``), unless the line is
    a ``Key: value`` field."""
    lead = _LEAD.match(line)
    start = lead.end() if lead else 0
    found = find_identifiers(line[start : start + 200])
    if not found or found[0][0] != 0 or field(line) is not None:
        return None
    return found[0][2].key


def header_line(line: str) -> bool:
    """A heading, numbered or bulleted entry, or a line opening with an identifier."""
    if HEADING.match(line) or NUMBERED.match(line) or BULLET.match(line):
        return True
    return id_led(line) is not None


def lists_ids(line: str, keys: set[Key]) -> bool:
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
        keys = line_keys(line) if line.strip() else set()
        if keys and (header_line(line) or lists_ids(line, keys)):
            out |= keys
    return frozenset(out)


def block_keys(lines: list[str]) -> frozenset[Key]:
    """A record's own identifiers: :func:`explicit_keys`, else every identifier it names."""
    return explicit_keys(lines) or all_keys("\n".join(lines))
