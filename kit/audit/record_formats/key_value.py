"""``key-value``: blocks of ``Key: value`` lines, one block per paper (pure).

Rule (:func:`repeated_field_starts`): the *lead* is the first field name that occurs twice
(``PMID:``, ``Title:``, ...); every line of the lead must open a paragraph or follow another
field line (else the field sits inside records another structure delimits, e.g. ``PMID:``
printed under a numbered title). A lead that is an id field (``PMID:``, ``DOI:``, ``URL:``)
may **open** each block (``PMID: 1`` / ``Title:`` / ``Abstract:``) or **close** it
(``Title:`` / ``Abstract:`` / ``DOI:`` / ``PMID: 1``, PubMed's abstract format). Each run of
id-field lines holding a lead line votes: it closes a paragraph (text above it in the same
paragraph, a blank line or the end below) or opens one (a blank line or the start above,
text below); a run standing alone as a paragraph votes "closes" when the response ends in
an id-field line. The lead closes its blocks when "closes" has more votes, else it opens them. An opening lead starts
a record at each of its lines; a closing lead ends one after the run of id-field lines
holding each of its lines -- so a paper's ids are never joined to the next paper's abstract.
A lead that is no id field always opens.
"""

from __future__ import annotations

from kit.audit.record_fields import is_id_field
from kit.audit.record_formats.text_keys import SEPARATOR, field_name

FORMAT = "key-value"


def _lead(names: list[str | None]) -> str | None:
    counts: dict[str, int] = {}
    for n in names:
        if n is not None:
            counts[n] = counts.get(n, 0) + 1
    return next((n for n in names if n is not None and counts[n] >= 2), None)


def _id_run(names: list[str | None], i: int) -> range:
    """The run of consecutive id-field lines holding line ``i``."""
    a = i
    while a > 0 and names[a - 1] is not None and is_id_field(names[a - 1] or ""):
        a -= 1
    b = i + 1
    while b < len(names) and names[b] is not None and is_id_field(names[b] or ""):
        b += 1
    return range(a, b)


def _closes(lines: list[str], names: list[str | None], starts: list[int]) -> bool:
    """The id lead closes its blocks (module rule): more of its id runs close a paragraph
    (text above them, a blank line or the end below) than open one (a blank line or the start
    above, text below); a run standing alone counts as closing when the response ends in an id-field line."""
    body = [i for i, ln in enumerate(lines) if ln.strip()]
    last = names[body[-1]]
    ends_in_ids = last is not None and is_id_field(last)
    votes = 0
    for i in starts:
        run = _id_run(names, i)
        above = run.start > 0 and bool(lines[run.start - 1].strip())
        below = run.stop < len(lines) and bool(lines[run.stop].strip())
        if above != below:
            votes += 1 if above else -1
        elif not above and ends_in_ids:
            votes += 1
    return votes > 0


def repeated_field_starts(lines: list[str], id_lead: bool) -> list[int]:
    """The indices where records start (module rule), when the lead is (``id_lead``) or is
    not an id field; [] when the rule does not apply."""
    names = [field_name(ln) for ln in lines]
    lead = _lead(names)
    if lead is None or is_id_field(lead) != id_lead:
        return []
    starts = [i for i, n in enumerate(names) if n == lead]
    for i in starts:
        before = next((j for j in range(i - 1, -1, -1) if lines[j].strip()), None)
        opens = before is None or before < i - 1 or SEPARATOR.match(lines[before])
        if not opens and names[before] is None:
            return []
    if id_lead and _closes(lines, names, starts):
        ends = sorted({_id_run(names, i).stop for i in starts})
        first = next(i for i, ln in enumerate(lines) if ln.strip())
        return [first, *(e for e in ends if any(ln.strip() for ln in lines[e:]))]
    return starts


def lead_field(lines: list[str]) -> str | None:
    """The lead field name of ``lines`` (module rule), else None."""
    return _lead([field_name(ln) for ln in lines])
