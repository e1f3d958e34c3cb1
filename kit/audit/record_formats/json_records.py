"""JSON responses: their record objects (:mod:`kit.audit.records_json`) as records, named by
the service that writes them (pure).

A record's text is its fields written ``key: value``, one a line (a metadata field such as
``authors`` one line); the papers it lists (``references``) are records of their own. The
flavour (:func:`json_flavour`), first that applies:

* ``europepmc-json``: Europe PMC REST (``resultList.result``, or a result with
  ``authorString`` / ``pubYear`` / ``source`` + ``pmid``);
* ``esummary-json``: E-utilities esummary (``result.uids``, ``header.type`` esummary, records
  with ``articleids``);
* ``semantic-scholar-json``: Semantic Scholar Graph API (records with ``paperId`` or
  ``externalIds``);
* ``openalex-json``: OpenAlex works (records with ``abstract_inverted_index`` or an ``id`` at
  ``https://openalex.org/``). OpenAlex prints no abstract text, only
  ``abstract_inverted_index`` (word -> its 0-based positions): the abstract is rebuilt in word
  order (:func:`inverted_abstract`) and read as the record's ``abstract`` field, so it counts
  as a passage; ``doi`` is a doi.org URL and ``ids.pmid`` a PubMed URL, read as DOI and PMID;
* ``json``: any other record JSON.
"""

from __future__ import annotations

from typing import Any

from kit.audit.record_formats.record import MIN_PASSAGE_WORDS, Record
from kit.audit.records_json import (
    element_ids,
    flatten,
    nested_records,
    own_ids,
    passage_words,
    record_objects,
)
from kit.corpus.identifiers import find_identifiers

_INVERTED = "abstract_inverted_index"
_MAX_POSITION = 100_000


def inverted_abstract(index: Any) -> str | None:
    """The text of an OpenAlex ``abstract_inverted_index`` (``{"Mitochondria": [0], "move":
    [1]}`` -> ``Mitochondria move``): each word at each of its positions, in position order;
    None when ``index`` is no such mapping (or empty)."""
    if not isinstance(index, dict) or not index:
        return None
    at: dict[int, str] = {}
    for word, positions in index.items():
        if not isinstance(positions, list):
            return None
        for p in positions:
            if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < _MAX_POSITION:
                return None
            at[p] = str(word)
    return " ".join(at[p] for p in sorted(at))


def _openalex(obj: dict[str, Any]) -> dict[str, Any]:
    """An OpenAlex work with its inverted index replaced by the rebuilt ``abstract``."""
    if _INVERTED not in obj:
        return obj
    text = inverted_abstract(obj[_INVERTED])
    out = {k: v for k, v in obj.items() if k != _INVERTED}
    if text and not out.get("abstract"):
        out["abstract"] = text
    return out


def _rebuild(value: Any) -> Any:
    """``value`` with every OpenAlex work in it read by :func:`_openalex`."""
    if isinstance(value, dict):
        return {k: _rebuild(v) for k, v in _openalex(value).items()}
    if isinstance(value, list):
        return [_rebuild(v) for v in value]
    return value


def _any_key(objs: list[dict[str, Any]], names: tuple[str, ...]) -> bool:
    return any(n in o for o in objs for n in names)


def json_flavour(obj: Any, records: list[dict[str, Any]]) -> str:
    """The flavour of a decoded response and its record objects (module doc)."""
    top = obj if isinstance(obj, dict) else {}
    if "resultList" in top or _any_key(records, ("authorString", "pubYear", "journalInfo")):
        return "europepmc-json"
    header = top.get("header")
    result = top.get("result")
    if (isinstance(header, dict) and header.get("type") == "esummary") or (
        isinstance(result, dict) and "uids" in result
    ):
        return "esummary-json"
    if _any_key(records, ("paperId", "externalIds")):
        return "semantic-scholar-json"
    ids = [str(o.get("id", "")) for o in records]
    if _any_key(records, (_INVERTED,)) or any(i.startswith("https://openalex.org/") for i in ids):
        return "openalex-json"
    if _any_key(records, ("articleids",)):
        return "esummary-json"
    return "json"


def _json_record(obj: dict[str, Any], fmt: str) -> Record | None:
    """One record object: its text (nested records left out, except the one a wrapper holds),
    its own identifiers and its passage."""
    wrapper = not own_ids(obj)
    text = "\n".join(flatten(obj, skip_records=not wrapper)).strip()
    if not text:
        return None
    keys = element_ids(obj) or frozenset(i.key for _, _, i in find_identifiers(text))
    words = passage_words(obj, skip_records=not wrapper)
    return Record(text, keys, words >= MIN_PASSAGE_WORDS, fmt)


def json_records(obj: Any) -> list[Record] | None:
    """The records of a decoded JSON response (module doc), else None (no record objects)."""
    rows = record_objects(obj)
    if rows is None:
        return None
    fmt = json_flavour(obj, rows)
    objs = [o for row in rows for o in (row, *(nested_records(row) if own_ids(row) else []))]
    recs = (_json_record(_openalex(o), fmt) for o in objs)
    return [r for r in recs if r is not None]


def whole_json(obj: Any) -> Record:
    """A decoded response as one record: its ``key: value`` lines, words under text fields
    anywhere (an OpenAlex inverted index read as its abstract)."""
    rows = record_objects(obj) or []
    fmt = json_flavour(obj, rows) if rows else "json"
    obj = _rebuild(obj)
    flat = "\n".join(flatten(obj)).strip()
    words = passage_words(obj, skip_records=False)
    keys = frozenset(i.key for _, _, i in find_identifiers(flat))
    return Record(flat, keys, words >= MIN_PASSAGE_WORDS, fmt)
