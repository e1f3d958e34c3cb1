"""The input boundary: every byte a user hands the kit is decoded and parsed here, once.

What passes this module is UTF-8 text (a UTF-8 byte-order mark is dropped; UTF-16/UTF-32 and
invalid bytes are refused naming line and column), JSON without ``NaN``/``Infinity`` and nested
at most :data:`MAX_DEPTH` deep, YAML without duplicate keys, and Parquet that is Parquet. Every
library exception on the way (UnicodeDecodeError, RecursionError, JSONDecodeError, YAMLError,
ArrowInvalid, OSError) becomes an :class:`kit.core.errors.InputError` naming the file and, where the
library says, the line and column: never a traceback.
"""

from __future__ import annotations

import codecs
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from kit.core.errors import InputError, Location

# Deeper than any artifact or input the kit defines (receipts and manifests nest 4 levels).
MAX_DEPTH = 64

_UTF16_32 = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def _where(source: str, line: int | None = None, column: int | None = None) -> Location:
    """A Location whose row is a 1-based line and whose column is a 1-based character."""
    return Location(source, line, None if column is None else str(column))


def _drop_bom(data: bytes, source: str) -> bytes:
    """``data`` without a UTF-8 byte-order mark; InputError for UTF-16/UTF-32 text."""
    for bom, name in _UTF16_32:
        if data.startswith(bom):
            raise InputError(
                "bad_encoding",
                f"the file is {name} text; the kit reads UTF-8 (re-save it as UTF-8)",
                where=Location(source),
            )
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    elif len(data) >= 4 and (data[1:4:2] == b"\0\0" or data[0:3:2] == b"\0\0"):
        raise InputError(
            "bad_encoding",
            "the file looks like UTF-16 text (NUL bytes between characters); the kit reads "
            "UTF-8 (re-save it as UTF-8)",
            where=Location(source),
        )
    return data


def decode(data: bytes, source: str) -> str:
    """UTF-8 text of ``data`` (BOM dropped); InputError naming line and column otherwise."""
    data = _drop_bom(data, source)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            "bad_encoding",
            f"byte 0x{data[exc.start]:02x} is not UTF-8 (the kit reads UTF-8 text)",
            where=_where(source, line, column),
        ) from None


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file; InputError when it is missing, a folder, or unreadable."""
    p = Path(path)
    if not p.is_file():
        what = "is a folder, expected a file" if p.is_dir() else "file not found"
        raise InputError("missing_file", what, where=Location(str(p)))
    try:
        return p.read_bytes()
    except OSError as exc:
        raise InputError(
            "unreadable_file", exc.strerror or str(exc), where=Location(str(p))
        ) from None


def read_text(path: str | os.PathLike[str]) -> str:
    """A file's UTF-8 text (see :func:`decode`)."""
    return decode(read_bytes(path), str(path))


def _field(path: tuple[Any, ...]) -> str | None:
    """``a.b[2].c`` for a key path, None at the top level."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or None


def _check_tree(
    obj: Any, source: str, line: int | None, what: str, allow_non_finite: bool = False
) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` and non-finite numbers, naming the field."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(obj, ())]
    while stack:
        cur, path = stack.pop()
        if isinstance(cur, float) and not allow_non_finite and not math.isfinite(cur):
            raise InputError(
                "non_finite",
                f"non-finite number {cur!r} (NaN and infinities are refused; give a finite number)",
                where=Location(source, line, _field(path)),
            )
        if isinstance(cur, dict | list):
            if len(path) >= MAX_DEPTH:
                raise InputError(
                    "too_deep",
                    f"{what} nested more than {MAX_DEPTH} levels deep",
                    where=Location(source, line, _field(path)),
                )
            items = cur.items() if isinstance(cur, dict) else enumerate(cur)
            stack.extend((c, (*path, k)) for k, c in items)


def parse_json(
    text: str, source: str, line: int | None = None, allow_non_finite: bool = False
) -> Any:
    """Parse one JSON document; refuse NaN/Infinity (also ``1e400``) naming the field, and
    nesting deeper than :data:`MAX_DEPTH`.

    ``line`` is the file line of a JSON-lines record (for the message). ``allow_non_finite``
    is for artifacts the kit itself writes with NaN for an undefined statistic (a model card's
    recall of a class without examples); never for user input.
    """
    try:
        obj = json.loads(text)
    except RecursionError:
        raise InputError(
            "too_deep", f"JSON nested more than {MAX_DEPTH} levels deep", where=_where(source, line)
        ) from None
    except json.JSONDecodeError as exc:
        at = exc.lineno if line is None else line
        raise InputError(
            "bad_json", f"not valid JSON: {exc.msg}", where=_where(source, at, exc.colno)
        ) from None
    _check_tree(obj, source, line, "JSON", allow_non_finite)
    return obj


def read_json(path: str | os.PathLike[str], allow_non_finite: bool = False) -> Any:
    """A JSON file through the boundary (UTF-8, finite numbers, bounded depth)."""
    return parse_json(read_text(path), str(path), allow_non_finite=allow_non_finite)


def file_lines(path: str | os.PathLike[str]) -> list[bytes]:
    """The raw lines of a JSON-lines file, split on ``\\n`` and decoded later one by one (so a
    reader may skip a bad line); the whole file is first checked for UTF-16/UTF-32 text and a
    UTF-8 byte-order mark is dropped."""
    return _drop_bom(read_bytes(path), str(path)).split(b"\n")


def parse_json_line(raw: bytes, source: str, line: int) -> Any:
    """One JSON-lines record: UTF-8 (a bad byte named by line and column) then :func:`parse_json`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            "bad_encoding",
            f"byte 0x{raw[exc.start]:02x} is not UTF-8 (the kit reads UTF-8 text)",
            where=_where(source, line, exc.start + 1),
        ) from None
    return parse_json(text, source, line=line)


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, record)`` for every non-blank line of a JSON-lines file."""
    for i, raw in enumerate(file_lines(path), 1):
        if raw.strip():
            yield i, parse_json_line(raw, str(path), i)


def check_encoding_head(head: bytes, source: str) -> None:
    """InputError when the first bytes of a file say UTF-16/UTF-32 (for streamed readers)."""
    _drop_bom(head, source)


def open_binary(path: str | os.PathLike[str]) -> Any:
    """An open binary handle of a regular file; InputError when missing, a folder, unreadable."""
    p = Path(path)
    if not p.is_file():
        what = "is a folder, expected a file" if p.is_dir() else "file not found"
        raise InputError("missing_file", what, where=Location(str(p)))
    try:
        return p.open("rb")
    except OSError as exc:
        raise InputError(
            "unreadable_file", exc.strerror or str(exc), where=Location(str(p))
        ) from None


def stream_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """:func:`read_jsonl` one line at a time, for files too big to hold (corpus tables)."""
    p = Path(path)
    with open_binary(p) as fh:
        for i, raw in enumerate(fh, 1):
            if i == 1:
                raw = _drop_bom(raw, str(p))
            if raw.strip():
                yield i, parse_json_line(raw.rstrip(b"\r\n"), str(p), i)


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that names the same key twice."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            continue  # PyYAML itself reports an unhashable key
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r} (first on line {seen[key]}); "
                "a repeated key would silently override the first",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line + 1
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,  # type: ignore[arg-type]
)


def parse_yaml(text: str, source: str) -> Any:
    """Parse YAML safely: duplicate keys refused, errors name line and column."""
    try:
        obj = yaml.load(text, Loader=_UniqueKeyLoader)
    except RecursionError:
        raise InputError(
            "too_deep", f"YAML nested more than {MAX_DEPTH} levels deep", where=Location(source)
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        problem = exc.problem or str(exc)
        raise InputError(
            "unreadable_yaml", f"not valid YAML: {problem}", where=_where(source, line, col)
        ) from None
    except yaml.YAMLError as exc:
        raise InputError(
            "unreadable_yaml", f"not valid YAML: {exc}", where=Location(source)
        ) from None
    _check_tree(obj, source, None, "YAML")
    return obj


def read_yaml(path: str | os.PathLike[str]) -> Any:
    """A YAML file through the boundary (UTF-8, unique keys, bounded depth)."""
    return parse_yaml(read_text(path), str(path))


def read_csv(path: str | os.PathLike[str], **options: Any) -> Any:
    """A CSV file as a DataFrame, decoded by :func:`read_text` (pandas ``options`` pass through);
    a file pandas cannot split into rows is an InputError naming the file (and line, if known)."""
    import io
    import re

    import pandas as pd

    text = read_text(path)
    try:
        return pd.read_csv(io.StringIO(text), **options)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise InputError(
            "unreadable_csv",
            f"not a readable CSV: {str(exc).strip()}",
            where=_where(str(path), int(m.group(1)) if m else None),
        ) from None


def read_parquet(path: str | os.PathLike[str]) -> Any:
    """A Parquet file as a DataFrame; anything that is not Parquet is an InputError."""
    import pandas as pd

    data = read_bytes(path)
    if not (data.startswith(b"PAR1") and data.endswith(b"PAR1")):
        raise InputError(
            "not_parquet",
            "not a Parquet file (no PAR1 magic bytes); write it with pandas.to_parquet or "
            "give a .csv",
            where=Location(str(path)),
        )
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid/OSError family
        raise InputError(
            "not_parquet",
            f"not a readable Parquet file: {str(exc).splitlines()[0]}",
            where=Location(str(path)),
        ) from None
