"""``medline``: PubMed's efetch ``rettype=medline`` text (pure).

Each field is a line ``TAG - value`` (the tag left-aligned in four columns: ``PMID- 123``,
``TI  - Title``, ``AB  - Abstract``) whose value continues on the following lines indented by
six spaces. Rule (:func:`medline_records`):

* **Detection** (:func:`is_medline`): the first non-blank line is ``PMID- n`` and another
  field line follows.
* **Records** start at each ``PMID- `` line.
* **Own identifiers**: ``PMID``, ``PMC`` (the PMC id), ``AID`` / ``LID`` values tagged
  ``[doi]`` (a ``[pii]`` is no identifier of a scheme the kit reads).
* **Passage**: the ``AB`` field (its continuation lines included); never ``TI``, ``AU``,
  ``AD``, ``SO`` or any other field. A record without ``AB`` has ``passage=False``.
"""

from __future__ import annotations

import re
from itertools import pairwise

from kit.audit.record_fields import count_words, value_ids
from kit.audit.record_formats.record import MIN_PASSAGE_WORDS, Key, Record

FORMAT = "medline"
_FIELD = re.compile(r"^([A-Z]{2,4}) {0,2}- (.*)$")
_START = re.compile(r"^PMID- ?\s*\d+\s*$")
_CONTINUATION = "      "


def _fields(lines: list[str]) -> list[tuple[str, str]]:
    """(tag, value) of each field, continuation lines joined to their field's value."""
    out: list[tuple[str, str]] = []
    for line in lines:
        m = _FIELD.match(line)
        if m and line[4:6] == "- ":
            out.append((m.group(1), m.group(2).strip()))
        elif out and line.startswith(_CONTINUATION) and line.strip():
            tag, value = out[-1]
            out[-1] = (tag, f"{value} {line.strip()}")
    return out


def is_medline(lines: list[str]) -> bool:
    """The response is in this format (module rule: detection)."""
    body = [ln for ln in lines if ln.strip()]
    return len(body) >= 2 and bool(_START.match(body[0])) and len(_fields(body[:2])) == 2


def _keys(fields: list[tuple[str, str]]) -> frozenset[Key]:
    out: set[Key] = set()
    for tag, value in fields:
        if tag == "PMID":
            out |= value_ids(value, "PMID")
        elif tag == "PMC":
            out |= value_ids(value, "PMCID")
        elif tag in ("AID", "LID") and value.endswith("[doi]"):
            out |= value_ids(value.removesuffix("[doi]").strip(), "DOI")
    return frozenset(out)


def _record(lines: list[str]) -> Record | None:
    text = "\n".join(lines).strip()
    if not text:
        return None
    fields = _fields(lines)
    words = count_words("\n".join(v for t, v in fields if t == "AB"))
    return Record(text, _keys(fields), words >= MIN_PASSAGE_WORDS, FORMAT)


def medline_records(lines: list[str]) -> list[Record]:
    """The records of a response in this format (module rule), in order."""
    starts = [i for i, ln in enumerate(lines) if _START.match(ln)]
    cuts = [*starts, len(lines)]
    recs = (_record(lines[a:b]) for a, b in pairwise(cuts))
    return [r for r in recs if r is not None]
