"""The input boundary: every byte a user hands the kit is decoded and parsed here, once.

What passes this module is UTF-8 text (a UTF-8 byte-order mark is dropped; UTF-16/UTF-32 and
invalid bytes are refused naming line and column), JSON without ``NaN``/``Infinity`` and nested
at most :data:`MAX_DEPTH` deep, YAML without duplicate keys, and Parquet that is Parquet. Every
library exception on the way (UnicodeDecodeError, RecursionError, JSONDecodeError, YAMLError,
ArrowInvalid, OSError) becomes an :class:`kit.errors.InputError` naming the file and, where the
library says, the line and column: never a traceback.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from kit.errors import InputError, Location

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


def decode(data: bytes, source: str) -> str:
    """UTF-8 text of ``data`` (BOM dropped); InputError naming line and column otherwise."""
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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (non-finite numbers are refused)")


def _check_depth(obj: Any, source: str, line: int | None) -> None:
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        cur, depth = stack.pop()
        if isinstance(cur, dict | list):
            if depth > MAX_DEPTH:
                raise InputError(
                    "too_deep",
                    f"JSON nested more than {MAX_DEPTH} levels deep",
                    where=_where(source, line),
                )
            children = cur.values() if isinstance(cur, dict) else cur
            stack.extend((c, depth + 1) for c in children)


def parse_json(text: str, source: str, line: int | None = None) -> Any:
    """Parse one JSON document; refuse NaN/Infinity, duplicate-free parsing is JSON's own.

    ``line`` is the file line of a JSON-lines record (for the message).
    """
    try:
        obj = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise InputError(
            "too_deep", f"JSON nested more than {MAX_DEPTH} levels deep", where=_where(source, line)
        ) from None
    except json.JSONDecodeError as exc:
        at = exc.lineno if line is None else line
        raise InputError(
            "bad_json", f"not valid JSON: {exc.msg}", where=_where(source, at, exc.colno)
        ) from None
    except ValueError as exc:
        raise InputError("bad_json", str(exc), where=_where(source, line)) from None
    _check_depth(obj, source, line)
    return obj


def read_json(path: str | os.PathLike[str]) -> Any:
    """A JSON file through the boundary (UTF-8, finite numbers, bounded depth)."""
    return parse_json(read_text(path), str(path))


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, record)`` for every non-blank line of a JSON-lines file."""
    text = read_text(path)
    for i, raw in enumerate(text.splitlines(), 1):
        if raw.strip():
            yield i, parse_json(raw, str(path), line=i)


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
    _check_depth(obj, source, None)
    return obj


def read_yaml(path: str | os.PathLike[str]) -> Any:
    """A YAML file through the boundary (UTF-8, unique keys, bounded depth)."""
    return parse_yaml(read_text(path), str(path))


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
