"""Text responses in no known format: the declared chain of record-start rules (pure).

Used for a text response that :mod:`kit.audit.record_formats.detect` finds in no strict format
(and for JSON without record objects, read as its ``key: value`` lines). Tried in this order;
the first that applies decides, and names the records' ``format``:

1. **Key-value blocks with a title or id lead** (``key-value``,
   :mod:`kit.audit.record_formats.key_value`): when the lead field is a title or an id field and
   its blocks name no two values of one scheme, each block is a record -- also a block naming
   no identifier, which is never joined to the one block that has ids.
2. **One paper** (``one-paper``): a response whose own identifiers
   (:mod:`kit.audit.record_formats.text_keys`) name one paper -- no two values of one scheme --
   is one record: a full-text fetch with ``## Methods`` headings, an abstract with numbered
   lines, a page with ``---`` rules.
3. **Record starts**, in this order, each used only when the pieces it cuts name different
   papers and no piece names two values of one scheme; a piece naming no identifier (a
   section, a list item inside an abstract) or the same paper as the piece before it continues
   that piece:

   a. a **repeated id field** (``key-value``): opening or closing each block
      (:mod:`~kit.audit.record_formats.key_value`; a piece without identifiers is a record of
      its own here);
   b. **markdown headings** (``markdown``; ``## ...``, the top level occurring twice);
   c. **numbered entries** (``numbered``; ``1. ``, ``2) ``, ``[3] ``); a numbered line inside
      a text field's value (``Abstract: We asked:`` then ``1) ...``) is none;
   d. **bulleted entries** (``markdown``; ``- [Title](https://pubmed.ncbi.nlm.nih.gov/123/)``,
      ``* Title - PMID 123``), not bulleted ``Key: value`` fields;
   e. **identifier-led lines** (``id-led``; ``[PMID 123] Title ...``, ``PMID 123 - Title``) of
      the scheme of the first such line, at least two values;
   f. any other **repeated field** (``key-value``; ``Source:``), as in a.
4. **Paragraphs** (``heuristic``): blank-line paragraphs, separator lines (``---``, ``***``,
   ``===``) ending one; a paragraph naming no own identifier, or the same paper, continues the
   record before it; a paragraph naming several values of one scheme is cut where a mention of
   that scheme names a new value (the paper each mention heads). Known limit: one unbroken
   paragraph that prints each paper's identifiers after its text is cut one record late.

Text before the first record start is a record of its own (a header such as "3 results").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from itertools import pairwise

from kit.audit.record_fields import is_id_field, is_text_field
from kit.audit.record_formats.key_value import FORMAT as KEY_VALUE
from kit.audit.record_formats.key_value import lead_field, repeated_field_starts
from kit.audit.record_formats.record import HEURISTIC, Key, Record
from kit.audit.record_formats.text_keys import (
    BULLET,
    HEADING,
    NUMBERED,
    SEPARATOR,
    all_keys,
    block_keys,
    explicit_keys,
    field,
    id_led,
)
from kit.audit.record_formats.text_passage import has_passage
from kit.audit.records_json import one_paper
from kit.corpus.identifiers import find_identifiers

ONE_PAPER = "one-paper"
_TITLE_LEADS = frozenset(("title", "article title"))


def _record(lines: list[str], fmt: str, title_line: bool = False) -> Record | None:
    kept = [ln for ln in lines if not SEPARATOR.match(ln)]
    text = "\n".join(kept).strip()
    if not text:
        return None
    return Record(text, block_keys(kept), has_passage(kept, title_line), fmt)


# ----------------------------------------------------------------------------- record starts

Block = tuple[list[str], bool]  # lines, opened at a record start


def _cut(lines: list[str], starts: Iterable[int]) -> list[Block]:
    """``lines`` cut before each index of ``starts`` and at separator lines; each block with
    whether it opens at one of ``starts`` (not the text before the first, nor after a
    separator)."""
    opening = set(starts)
    cuts = sorted(opening | {i for i, ln in enumerate(lines) if SEPARATOR.match(ln)})
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


def _heading_starts(lines: list[str]) -> list[int]:
    """Rule 3b: the top heading level that occurs at least twice."""
    levels = [len(ln) - len(ln.lstrip().lstrip("#")) if HEADING.match(ln) else 0 for ln in lines]
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
    return _entry_starts(lines, NUMBERED)


def _bullet_starts(lines: list[str]) -> list[int]:
    """Rule 3d: bulleted entries at the outermost indentation."""
    starts = _entry_starts(lines, BULLET)
    depth = [len(lines[i]) - len(lines[i].lstrip()) for i in starts]
    return [i for i, d in zip(starts, depth, strict=True) if d == min(depth)] if starts else []


def _id_led_starts(lines: list[str]) -> list[int]:
    """Rule 3e."""
    led = [(i, id_led(ln)) for i, ln in enumerate(lines)]
    mine = [(i, k) for i, k in led if k is not None]
    if not mine:
        return []
    scheme = mine[0][1][0]
    mine = [(i, k) for i, k in mine if k[0] == scheme]
    return [i for i, _ in mine] if len({k for _, k in mine}) >= 2 else []


# starts, title line, bare merge, format
Rule = tuple[Callable[[list[str]], list[int]], bool, bool, str]
_RULES: tuple[Rule, ...] = (
    (lambda ls: repeated_field_starts(ls, True), False, False, KEY_VALUE),
    (_heading_starts, True, True, "markdown"),
    (_numbered_starts, True, True, "numbered"),
    (_bullet_starts, True, True, "markdown"),
    (_id_led_starts, True, True, "id-led"),
    (lambda ls: repeated_field_starts(ls, False), False, False, KEY_VALUE),
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
        own = explicit_keys(p) if explicit else all_keys("\n".join(p))
        if out and (not own or (own & keys and one_paper(own | keys))):
            out[-1].extend(["", *p])
            keys = keys | own
            continue
        pieces = _by_lead_scheme(p, own)
        out.extend(pieces)
        keys = explicit_keys(pieces[-1]) if explicit else all_keys("\n".join(pieces[-1]))
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


def _key_value_blocks(lines: list[str]) -> list[Block] | None:
    """Rule 1: the key-value blocks of a title or id lead, each its own record, when no block
    names two values of one scheme and no two blocks the same paper; else None."""
    lead = lead_field(lines)
    if lead is None or not (lead in _TITLE_LEADS or is_id_field(lead)):
        return None
    starts = repeated_field_starts(lines, is_id_field(lead))
    if len(starts) < 2:
        return None
    blocks = _cut(lines, starts)
    keys = [explicit_keys(b) for b, _ in blocks]
    if not all(one_paper(k) for k in keys) or not any(keys):
        return None
    named = [k for k in keys if k]
    if len(named) >= 2 and one_paper(frozenset().union(*named), urls=True):
        return None  # every block names the same paper: one record (rule 2)
    return blocks


def text_records(lines: list[str]) -> list[Record]:
    """The records of a text response in no strict format (module rule), in order."""
    blocks = _key_value_blocks(lines)
    if blocks is not None:
        return [r for r in (_record(b, KEY_VALUE) for b, _ in blocks) if r is not None]
    if one_paper(block_keys(lines), urls=True):
        whole = _record(lines, ONE_PAPER)
        return [whole] if whole is not None else []
    for starts_of, title_line, bare, fmt in _RULES:
        starts = starts_of(lines)
        if len(starts) >= 2:
            merged = _merge(_cut(lines, starts), bare)
            if _valid(merged):
                recs = [_record(b, fmt, title_line and opened) for b, opened in merged]
                return [r for r in recs if r is not None]
    paras = [p for part, _ in _cut(lines, []) for p in _paragraphs(part)]
    return [r for r in (_record(p, HEURISTIC) for p in paras) if r is not None]
