"""Documents from a table (JSONL / parquet / CSV, with a column mapping) or a folder of text files.

A column mapping names which input column feeds which document field::

    id=pmid,title=title,text=abstract,doi=doi,pmcid=pmc

``id`` is required (the primary identifier; ``--id-scheme`` says how to read a bare value, e.g.
``PMID`` for a column of digits); ``title``, ``text``, ``journal``, ``year`` are optional, and
``pmid``, ``pmcid``, ``doi``, ``arxiv``, ``nct``, ``url`` add aliases. Every identifier goes through
:func:`kit.corpus.identifiers.canonical`; one that does not parse is an InputError naming file,
row and column. Tables are read in chunks (bounded memory).

A text folder: every ``*.txt`` below it (sorted by path) is one document; its title is the first
non-empty line, its text the lines after it. With ``id_scheme`` the file name's stem is the identifier (``12345.txt`` with
``PMID``); without, the document is ``file:<relative path>`` (searchable, never citable).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from kit.core import boundary
from kit.core.errors import ConfigError, InputError, Location
from kit.corpus.document import Document
from kit.corpus.identifiers import SCHEMES, canonical

TEXT_FIELDS = ("title", "text", "journal", "year")
ALIAS_FIELDS = {s.lower(): s for s in SCHEMES}
CHUNK_ROWS = 50_000
TABLE_SUFFIXES = (".jsonl", ".parquet", ".csv")


def parse_mapping(spec: str) -> dict[str, str]:
    """``id=pmid,text=abstract`` -> {field: column}; ConfigError on unknown fields or no id."""
    out: dict[str, str] = {}
    for part in (p for p in spec.split(",") if p.strip()):
        field, sep, col = part.partition("=")
        field, col = field.strip().lower(), col.strip()
        if not sep or not col:
            raise ConfigError("bad_mapping", f"expected FIELD=COLUMN, got {part!r}")
        if field != "id" and field not in TEXT_FIELDS and field not in ALIAS_FIELDS:
            known = ", ".join(("id", *TEXT_FIELDS, *ALIAS_FIELDS))
            raise ConfigError("bad_mapping", f"unknown field {field!r} (known: {known})")
        out[field] = col
    if "id" not in out:
        raise ConfigError("bad_mapping", "the mapping needs id=COLUMN (the primary identifier)")
    return out


def _chunks(path: Path, columns: list[str]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """(first file row, rows as dicts of the mapped columns) per chunk; a table without a row is
    an InputError (it would add no document)."""
    rows_seen = 0
    for row, rows in _raw_chunks(path, columns):
        rows_seen += len(rows)
        yield row, rows
    if not rows_seen:
        raise InputError(
            "empty_table", "no rows: the table adds no document", where=Location(str(path))
        )


def _missing(path: Path, columns: list[str], have: Any) -> None:
    missing = [c for c in columns if c not in have]
    if missing:
        raise InputError("missing_column", f"no column {missing[0]!r}", where=Location(str(path)))


def _jsonl_chunks(path: Path, columns: list[str]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """JSON lines through the boundary (UTF-8, no NaN/Infinity, bounded depth), streamed."""
    seen: set[str] = set()
    rows: list[dict[str, Any]] = []
    first = None
    for line, rec in boundary.stream_jsonl(path):
        if not isinstance(rec, dict):
            raise InputError(
                "bad_record",
                f"expected a JSON object, got {type(rec).__name__}",
                where=Location(str(path), line),
            )
        seen.update(rec)
        first = line if first is None else first
        rows.append({c: rec.get(c) for c in columns})
        if len(rows) == CHUNK_ROWS:
            yield first, rows
            rows, first = [], None
    if rows or seen:
        _missing(path, columns, seen)
    if rows:
        yield first or 1, rows


def _raw_chunks(path: Path, columns: list[str]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    import pandas as pd

    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(path)
            _missing(path, columns, pf.schema_arrow.names)
            row = 1
            for batch in pf.iter_batches(batch_size=CHUNK_ROWS, columns=columns):
                rows = batch.to_pylist()
                yield row, rows
                row += len(rows)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(
                "not_parquet", f"not a readable Parquet file: {exc}", where=Location(str(path))
            ) from None
        return
    if suffix == ".jsonl":
        yield from _jsonl_chunks(path, columns)
        return
    if suffix != ".csv":
        raise ConfigError("bad_table", f"{path}: expected {', '.join(TABLE_SUFFIXES)}")
    try:
        with boundary.open_binary(path) as fh:  # UTF-16/32 refused as the boundary does
            boundary.check_encoding_head(fh.read(4), str(path))
        reader: Any = pd.read_csv(
            path, dtype=str, keep_default_na=False, chunksize=CHUNK_ROWS, encoding="utf-8-sig"
        )
        row = 2
        for chunk in reader:
            _missing(path, columns, chunk.columns)
            rows = chunk[columns].to_dict("records")
            yield row, rows
            row += len(rows)
    except pd.errors.EmptyDataError:
        raise InputError(
            "empty_table", "empty file: no header, no rows", where=Location(str(path))
        ) from None
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise InputError(
            "unreadable_table", f"not readable: {exc}", where=Location(str(path))
        ) from None


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return ""
    return str(v).strip()


def iter_table(path: Path, mapping: Mapping[str, str], id_scheme: str | None) -> Iterator[Document]:
    """Documents from a JSONL / parquet / CSV table under ``mapping`` (module doc)."""
    columns = sorted(set(mapping.values()))
    for first, rows in _chunks(path, columns):
        for k, r in enumerate(rows):
            where = first + k
            raw = _cell(r[mapping["id"]])
            ident = canonical(raw, id_scheme)
            if ident is None:
                raise InputError(
                    "bad_identifier",
                    f"not an identifier: {raw!r}"
                    + ("" if id_scheme else " (give --id-scheme for bare values)"),
                    where=Location(str(path), where, mapping["id"]),
                )
            aliases = [ident.key]
            for field, scheme in ALIAS_FIELDS.items():
                if field not in mapping:
                    continue
                val = _cell(r[mapping[field]])
                if not val:
                    continue
                alias = canonical(val, scheme)
                if alias is None or alias.scheme != scheme:
                    raise InputError(
                        "bad_identifier",
                        f"not a {scheme}: {val!r}",
                        where=Location(str(path), where, mapping[field]),
                    )
                if alias.key not in aliases:
                    aliases.append(alias.key)
            year_raw = _cell(r[mapping["year"]]) if "year" in mapping else ""
            try:
                year = int(float(year_raw)) if year_raw else None
            except ValueError:
                raise InputError(
                    "bad_field",
                    f"year {year_raw!r} is not a number",
                    where=Location(str(path), where, mapping["year"]),
                ) from None
            yield Document(
                doc_id=ident.label,
                title=_cell(r[mapping["title"]]) if "title" in mapping else "",
                text=_cell(r[mapping["text"]]) if "text" in mapping else "",
                journal=_cell(r[mapping["journal"]]) if "journal" in mapping else "",
                year=year,
                aliases=tuple(aliases),
            )


def text_files(folder: Path) -> list[Path]:
    """Every ``*.txt`` below ``folder``, sorted by relative path."""
    return sorted(folder.rglob("*.txt"), key=lambda p: p.relative_to(folder).as_posix())


def iter_text_folder(folder: Path, id_scheme: str | None) -> Iterator[Document]:
    """Documents from a folder of text files (module doc)."""
    for path in text_files(folder):
        rel = path.relative_to(folder).as_posix()
        try:
            body = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                "bad_text", f"not UTF-8: {exc.reason}", where=Location(str(path))
            ) from None
        lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
        aliases: tuple[tuple[str, str], ...] = ()
        doc_id = f"file:{rel}"
        if id_scheme is not None:
            ident = canonical(path.stem, id_scheme)
            if ident is None:
                raise InputError(
                    "bad_identifier",
                    f"file name {path.stem!r} is not a {id_scheme}",
                    where=Location(str(path)),
                )
            doc_id, aliases = ident.label, (ident.key,)
        yield Document(doc_id, lines[0] if lines else "", " ".join(lines[1:]), "", None, aliases)
