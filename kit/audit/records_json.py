"""The records of a JSON tool response (pure): which objects are papers, their own
identifiers, their text and their passage words.

* **A record object** carries identifiers in its own id fields (:mod:`kit.audit.record_fields`:
  ``pmid``, ``doi``, ``uid``, Semantic Scholar ``externalIds``, E-utilities ``articleids``
  entries ``{idtype, value}``, ``url`` ...), never in sub-objects of other fields: the URLs of
  Europe PMC's ``fullTextUrlList``, Semantic Scholar's ``openAccessPdf`` or the ids of a
  ``references`` list belong to other things than the record itself.
* **Which objects** (:func:`record_objects`): a top object that is a record is the one record
  (a single-paper fetch, whatever lists it holds); else, breadth first, the first list whose
  elements carry id fields (or wrap one record object each, Semantic Scholar's
  ``{"citingPaper": {...}}``) and none names two values of one scheme (URLs aside), or the
  record objects among an object's values (E-utilities esummary ``result``: records keyed by
  uid; Crossref's ``message``). A record is never descended into.
* **Nested records** (:func:`nested_records`): a record's ``references`` (its values that are
  records, or lists of them) are records of their own, after it, and out of its text.
* E-utilities ``uid`` is a PMID, unless the record's ``articleids`` give that number as its
  PMC id (``db=pmc``).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from kit.audit.record_fields import (
    compact,
    count_words,
    id_field_scheme,
    is_id_field,
    is_meta_field,
    is_text_field,
    value_ids,
)

Key = tuple[str, str]
MAX_JSON_CHARS = 5_000_000
_CONTAINERS = frozenset(("ids", "identifiers", "externalids", "articleids", "articleidlist"))
_MAX_NODES = 256


def parse_json(text: str) -> Any:
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


def _scalars(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _scalars(v)]
    if isinstance(value, list):
        return [s for v in value for s in _scalars(v)]
    return [] if value is None or value == "" or isinstance(value, bool) else [str(value)]


def _container_ids(value: Any) -> set[Key]:
    """Ids of an id container: ``{"PubMed": "1", "DOI": ...}`` or ``[{idtype, value}]``."""
    out: set[Key] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            for s in [] if isinstance(v, dict) else _scalars(v):
                out |= value_ids(s, id_field_scheme(str(k)))
    elif isinstance(value, list):
        for e in value:
            if isinstance(e, dict):
                kind = next((e[k] for k in ("idtype", "IdType", "type") if k in e), None)
                scheme = id_field_scheme(str(kind)) if kind is not None else None
                val = next((e[k] for k in ("value", "#text", "id") if k in e), None)
                if scheme is not None and val is not None:
                    out |= value_ids(str(val), scheme)
            elif not isinstance(e, list):
                out |= value_ids(str(e))
    return out


def own_ids(obj: dict[str, Any]) -> frozenset[Key]:
    """The identifiers ``obj`` names in its own id fields (module doc)."""
    out: set[Key] = set()
    uid: str | None = None
    for k, v in obj.items():
        name = compact(str(k))
        if name in _CONTAINERS:
            out |= _container_ids(v)
        elif name == "uid" and isinstance(v, str | int) and str(v).isdigit():
            uid = str(int(v))
        elif is_id_field(str(k)) and not isinstance(v, dict):
            scheme = id_field_scheme(str(k))
            for s in _scalars(v):
                out |= value_ids(s, scheme)
    if uid is not None and uid != "0" and ("PMCID", f"PMC{uid}") not in out:
        out.add(("PMID", uid))
    return frozenset(out)


def is_record(value: Any, urls: bool = False) -> bool:
    """True for an object naming an identifier in its own id fields (a URL counts only when
    ``urls``: a list element keyed by its link)."""
    if not isinstance(value, dict):
        return False
    return any(urls or scheme != "URL" for scheme, _ in own_ids(value))


def one_paper(keys: frozenset[Key] | set[Key], urls: bool = False) -> bool:
    """True when ``keys`` name no two values of one scheme (URLs aside, unless ``urls``: a
    record's several links are one paper, a list keyed by links is several)."""
    schemes = [s for s, _ in keys if urls or s != "URL"]
    return len(schemes) == len(set(schemes))


def element_ids(obj: dict[str, Any]) -> frozenset[Key]:
    """A list element's own ids, else those of the one record object it wraps."""
    own = own_ids(obj)
    if own:
        return own
    inner = [v for v in obj.values() if is_record(v)]
    return own_ids(inner[0]) if len(inner) == 1 else frozenset()


def _record_list(items: list[Any]) -> bool:
    if not items or not all(isinstance(x, dict) for x in items):
        return False
    keys = [element_ids(x) for x in items]
    return any(keys) and all(one_paper(k) for k in keys)


def record_objects(obj: Any) -> list[dict[str, Any]] | None:
    """The record objects of a decoded response, in order (module doc), else None."""
    if is_record(obj):
        return [obj]
    queue: deque[Any] = deque([obj])
    for _ in range(_MAX_NODES):
        if not queue:
            break
        cur = queue.popleft()
        values = list(cur.values()) if isinstance(cur, dict) else list(cur)
        if isinstance(cur, list) and _record_list(cur):
            return cur
        if isinstance(cur, dict):
            found = [v for v in values if is_record(v)]
            if found:
                return found
        queue.extend(v for v in values if isinstance(v, dict | list) and not is_record(v))
    return None


def nested_records(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The records a record lists (its references, ...): values that are records, or lists
    holding records -- one level, never deeper."""
    out: list[dict[str, Any]] = []
    for k, v in record.items():
        if is_id_field(str(k)) or compact(str(k)) in _CONTAINERS:
            continue
        if is_record(v):
            out.append(v)
        elif isinstance(v, list):
            out.extend(e for e in v if is_record(e))
    return out


def flatten(value: Any, key: str = "", skip_records: bool = False) -> list[str]:
    """``key: value`` lines of a JSON value; a metadata field (authors, ...) stays one line;
    with ``skip_records``, nested record objects are left out (they are records of their
    own)."""
    if isinstance(value, dict | list) and key and is_meta_field(key):
        return [f"{key}: " + "; ".join(_scalars(value))]
    if isinstance(value, dict):
        return [
            ln
            for k, v in value.items()
            if not (skip_records and is_record(v))
            for ln in flatten(v, str(k), skip_records)
        ]
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            joined = "; ".join(str(v) for v in value if v is not None)
            return [f"{key}: {joined}"] if key and joined else [joined] if joined else []
        kept = [v for v in value if not (skip_records and is_record(v))]
        return [ln for v in kept for ln in flatten(v, key, skip_records)]
    if value is None or value == "":
        return []
    return [f"{key}: {value}" if key else str(value)]


def passage_words(value: Any, skip_records: bool = True, under_text: bool = False) -> int:
    """Words (:func:`kit.audit.record_fields.count_words`) under text fields of a JSON value;
    nested records left out with ``skip_records``."""
    if isinstance(value, dict):
        return sum(
            passage_words(v, skip_records, under_text or is_text_field(str(k), sections=False))
            for k, v in value.items()
            if not (skip_records and is_record(v))
        )
    if isinstance(value, list):
        kept = [v for v in value if not (skip_records and is_record(v))]
        return sum(passage_words(v, skip_records, under_text) for v in kept)
    if not under_text or value is None or isinstance(value, bool):
        return 0
    return count_words(str(value))
