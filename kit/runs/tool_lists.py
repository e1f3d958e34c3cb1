"""Numeric markers resolved against the numbered list of documents a tool returned (pure).

OpenScholar- and STORM-style agents cite ``[1]`` (OpenScholar: ``[0]``, 0-based) meaning the
n-th document their retrieval tool returned, and write no reference list of their own. When an
answer has no reference list and its run no ``citations``, :func:`tool_list_index` reads the
numbered list of a tool response and gives marker ``n`` the identifier of entry ``n``.

A response is a list of documents (:func:`read_list`) when it is

* a JSON array of records, or a JSON object with exactly one field holding an array of records
  (entries numbered by position);
* lines opening entries in one form, ``Document [1](Title: ...) text`` (STORM), ``[1] Title ...
  PMID: 123``, ``1. ...`` or ``1) ...``, numbered consecutively from 0 or 1, each entry running to
  the next; a response where two forms give a list is none (which would be meant?);

and at least one entry names an identifier. An entry's identifier is, of those
:func:`kit.corpus.identifiers.find_identifiers` reads in it, the first of the first scheme in
PMID, PMCID, DOI, NCT, arXiv (a record prints several ids of its one paper: the citation is the
most often resolvable, wherever it stands; a URL only when it names no other); an entry naming
none resolves to nothing (its marker is unresolved).

Only an unambiguous reading links: one response with a list, or several whose lists agree
(every number two lists share names the same identifier). Printed numbers are the markers'
numbers; a JSON list is numbered from 1, or from 0 when some marker of the answer is ``[0]``. A
``[0]`` marker against a list printed from 1, or lists that disagree, link nothing: the
markers are kept on their claims as unresolved, never guessed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kit.core.boundary import parse_json
from kit.core.errors import InputError
from kit.corpus.identifiers import find_identifiers
from kit.runs.citations import find_citations
from kit.runs.extract import Index
from kit.runs.model import Citation

MAX_ENTRIES = 1000
_FORMS = (
    re.compile(r"^[ \t]*Document[ \t]*\[(\d{1,4})\]", re.M),
    re.compile(r"^[ \t]*\[(\d{1,4})\][ \t]*\S", re.M),
    re.compile(r"^[ \t]*(\d{1,4})\.[ \t]+\S", re.M),
    re.compile(r"^[ \t]*(\d{1,4})\)[ \t]+\S", re.M),
)


@dataclass(frozen=True)
class ToolList:
    """A numbered list of documents: ``first`` the number printed on its first entry (None: a
    JSON list, numbered by position), ``citations`` each entry's identifier (None: none)."""

    first: int | None
    citations: tuple[Citation | None, ...]


_PREFERENCE = ("PMID", "PMCID", "DOI", "NCT", "ARXIV")


def _citation(text: str) -> Citation | None:
    """The entry's identifier: a tool's record prints several of one paper (a DOI in the
    citation line, then ``DOI:``, ``PMCID:``, ``PMID:`` lines), so the one in the first scheme of
    PMID, PMCID, DOI, NCT, arXiv it names (the most often resolvable, wherever it stands), a URL
    only when it names no other; taken as the corpus layer read it."""
    found = [ident for _, _, ident in find_identifiers(text)]
    rank = {s: i for i, s in enumerate(_PREFERENCE)}
    named = sorted(found, key=lambda i: rank.get(i.scheme, len(rank)))  # stable: first of a scheme
    return Citation(named[0].scheme, named[0].value, named[0].version) if named else None


def _json_records(text: str) -> list[Any] | None:
    """The records of a JSON array, or of an object's one array-of-records field; else None."""
    try:
        obj = parse_json(text, "<tool response>")
    except InputError:
        return None
    if isinstance(obj, dict):
        arrays = [v for v in obj.values() if isinstance(v, list) and v]
        arrays = [v for v in arrays if all(isinstance(r, dict) for r in v)]
        obj = arrays[0] if len(arrays) == 1 else None
    if not isinstance(obj, list) or not obj or len(obj) > MAX_ENTRIES:
        return None
    return obj


def _text_list(text: str, form: re.Pattern[str]) -> ToolList | None:
    heads = list(form.finditer(text))
    numbers = [int(m.group(1)) for m in heads]
    if not numbers or numbers[0] not in (0, 1) or len(numbers) > MAX_ENTRIES:
        return None
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        return None
    ends = [m.start() for m in heads[1:]] + [len(text)]
    cits = tuple(_citation(text[m.start() : end]) for m, end in zip(heads, ends, strict=True))
    return ToolList(numbers[0], cits) if any(c is not None for c in cits) else None


def read_list(text: str) -> ToolList | None:
    """The numbered list of documents in one tool response (module doc), or None."""
    head = text.lstrip()[:1]
    if head in ("[", "{") and (records := _json_records(text)) is not None:
        cits = tuple(
            _citation(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False))
            for r in records
        )
        if any(c is not None for c in cits):
            return ToolList(None, cits)
    found = [got for form in _FORMS if (got := _text_list(text, form)) is not None]
    return found[0] if len(found) == 1 else None


def list_index(lists: Sequence[ToolList], zero_based: bool) -> Index:
    """Marker number -> the entry's citation over ``lists`` (module doc). When the lists
    disagree or a ``[0]`` marker (``zero_based``) meets a list printed from 1, every number
    names nothing (``()``): the markers are read as citations of the tools' lists and stay
    unresolved."""
    merged: dict[int, Citation | None] = {}
    clear = False
    for got in lists:
        if got.first is None:
            base = 0 if zero_based else 1
        else:
            base = got.first
            clear = clear or (zero_based and got.first != 0)
        for k, cit in enumerate(got.citations):
            if merged.setdefault(base + k, cit) != cit:
                clear = True
    return {str(n): (() if clear else (cit,)) for n, cit in merged.items()}


def tool_list_index(answer: str, responses: Sequence[str]) -> Index:
    """The index of an answer's numeric markers over the lists of documents its run's tools
    returned (``responses``: their texts); empty when no response holds a list; every number
    naming nothing when the reading is ambiguous (module doc)."""
    lists = [got for text in responses if (got := read_list(text)) is not None]
    if not lists:
        return {}
    zero = any(c.style == "numeric" and "0" in c.refs for c in find_citations(answer, None))
    return list_index(lists, zero)
