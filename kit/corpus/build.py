"""Build a corpus under ``data/corpus/NAME/`` (I/O shell): parts per source, then one swap.

Layout::

    data/corpus/NAME/parts/<key>.{documents,aliases,deleted}.parquet + <key>.json
    data/corpus/NAME/current/{documents,aliases,deleted}.parquet, corpus.duckdb, manifest.json

1. **Parts, resumable per file.** Each source (a MEDLINE file, a table, a text folder) is read
   once, streamed in batches of :data:`BATCH` documents, each batch validated by its pandera schema
   (``schemas/corpus_*.yaml``) and appended to the source's part files. A source's ``<key>.json``
   marker is written last; ``key`` hashes the source's bytes and how it is read, so a rerun skips
   every source already parsed and reparses a changed one.
2. **Apply in order.** Sources are applied in the given order (``seq`` 1, 2, ...; MEDLINE
   baseline then update files, sorted by name): the kept version of a document is its record in
   the latest source (the last one within a source); a ``DeleteCitation`` in source k removes a
   document whose kept version is from a source <= k (a later source may add it back). Done in
   DuckDB over the part files (out of core).
3. **Swap.** The final tables, ``corpus.duckdb`` (tables ``aliases`` and ``deleted``, view
   ``documents`` over ``documents.parquet``) and ``manifest.json`` are written into a staged
   folder swapped into ``current/`` (:func:`kit.core.atomic.staged_dir`): a failed build leaves the
   previous corpus as it was.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit import __version__
from kit.core import atomic
from kit.core.errors import ConfigError, InputError, Location
from kit.core.hashing import file_sha256
from kit.core.progress import Progress
from kit.core.schema import validate_frame, validate_json
from kit.corpus.coverage import Coverage
from kit.corpus.document import Document
from kit.corpus.identifiers import NUMERIC_SCHEMES, SCHEMES
from kit.registry.sources import REPO_ROOT

DEFAULT_ROOT = REPO_ROOT / "data" / "corpus"
BATCH = 20_000
KINDS = ("medline", "table", "text")
PART_TABLES = ("documents", "aliases", "deleted")


@dataclass(frozen=True)
class Source:
    """One input: ``kind`` medline (one .xml / .xml.gz file), table (JSONL / parquet / CSV with
    ``mapping``) or text (a folder of .txt files); ``id_scheme`` reads bare identifiers."""

    path: Path
    kind: str
    mapping: tuple[tuple[str, str], ...] = ()
    id_scheme: str | None = None

    @property
    def name(self) -> str:
        return self.path.name


@dataclass(frozen=True)
class BuildSpec:
    """Everything `kit corpus build` was asked to do."""

    name: str
    sources: tuple[Source, ...]
    licence: str
    description: str = ""
    coverage: tuple[Coverage, ...] = ()
    root: Path = DEFAULT_ROOT
    progress: bool = True
    index: bool = True  # the on-disk BM25 index for `kit corpus search`


@dataclass
class BuildResult:
    manifest: dict[str, Any]
    parsed: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # for stderr: sources that added nothing


def empty_source_message(src: Source, counts: dict[str, int]) -> str | None:
    """Why ``src`` added nothing to the corpus (no document and no deletion read), else None:
    for a MEDLINE file, that it holds no PubMed record and what its root element is."""
    if counts.get("records", 0) or counts.get("deletions", 0):
        return None
    skipped = counts.get("skipped", 0)
    if src.kind == "medline":
        from kit.corpus.medline import RECORD_TAGS, root_element

        root = root_element(src.path)
        what = f"root element <{root}>" if root else "no readable root element"
        books = f"; {skipped} book record(s) skipped" if skipped else ""
        return (
            f"{src.path}: no PubMed record found ({what}{books}; expected "
            f"<PubmedArticleSet> holding {' / '.join(f'<{t}>' for t in RECORD_TAGS)}): "
            "this file adds no document"
        )
    return f"{src.path}: no document read from this {src.kind} source: it adds nothing"


def medline_sources(paths: Iterable[Path]) -> list[Source]:
    """MEDLINE files given as files or folders, sorted by file name (baseline before updates:
    the NLM numbers them in release order)."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files += [f for f in p.iterdir() if f.name.endswith((".xml", ".xml.gz"))]
        elif p.is_file():
            files.append(p)
        else:
            raise InputError("missing_file", "file or folder not found", where=Location(str(p)))
    return [Source(f, "medline") for f in sorted(files, key=lambda f: (f.name, str(f)))]


def sources_from_options(
    medline: Sequence[Path],
    tables: Sequence[Path],
    mapping: str | None,
    text_folders: Sequence[Path],
    id_scheme: str | None,
) -> tuple[Source, ...]:
    """The sources of `kit corpus build`, in apply order: MEDLINE files (by file name), then
    tables, then text folders, each in the order given."""
    from kit.corpus.tabular import TABLE_SUFFIXES, parse_mapping

    scheme = id_scheme.upper() if id_scheme else None
    if tables and mapping is None:
        raise ConfigError("bad_mapping", "--table needs --map id=COLUMN[,title=COLUMN,...]")
    if mapping is not None and not tables:
        raise ConfigError("bad_mapping", "--map applies to --table sources; none given")
    out = medline_sources(medline)
    for t in tables:
        if not t.name.lower().endswith(TABLE_SUFFIXES):
            raise ConfigError("bad_table", f"{t}: expected {', '.join(TABLE_SUFFIXES)}")
        out.append(Source(t, "table", tuple(sorted(parse_mapping(mapping or "").items())), scheme))
    out += [Source(f, "text", (), scheme) for f in text_folders]
    return tuple(out)


# ----------------------------------------------------------------------------- reading


def _documents(src: Source) -> Iterator[Document | tuple[str, ...]]:
    if src.kind == "medline":
        from kit.corpus.medline import iter_medline

        yield from iter_medline(src.path)
    elif src.kind == "table":
        from kit.corpus.tabular import iter_table

        yield from iter_table(src.path, dict(src.mapping), src.id_scheme)
    else:
        from kit.corpus.tabular import iter_text_folder

        yield from iter_text_folder(src.path, src.id_scheme)


def source_digest(src: Source) -> tuple[str, int]:
    """(sha256 of the source's bytes, size): a folder hashes its sorted (path, sha256) list."""
    if src.kind == "text":
        from kit.corpus.tabular import text_files

        if not src.path.is_dir():
            raise InputError("missing_file", "folder not found", where=Location(str(src.path)))
        h, size = hashlib.sha256(), 0
        for f in text_files(src.path):
            h.update(f"{f.relative_to(src.path).as_posix()}\t{file_sha256(f)}\n".encode())
            size += f.stat().st_size
        return h.hexdigest(), size
    if not src.path.is_file():
        raise InputError("missing_file", "file not found", where=Location(str(src.path)))
    return file_sha256(src.path), src.path.stat().st_size


def part_key(src: Source, sha: str) -> str:
    """The part files' key: the source's bytes and how they are read."""
    how = json.dumps([src.kind, list(src.mapping), src.id_scheme, sha, src.name])
    return hashlib.sha256(how.encode()).hexdigest()[:24]


_ARROW: dict[str, Any] = {}


def _arrow_schema(table: str) -> Any:
    import pyarrow as pa

    if not _ARROW:
        s, i = pa.string(), pa.int64()
        _ARROW["documents"] = pa.schema(
            [("doc_id", s), ("title", s), ("text", s), ("journal", s), ("year", i),
             ("source", s), ("ord", i)]
        )  # fmt: skip
        _ARROW["aliases"] = pa.schema(
            [("scheme", s), ("value", s), ("doc_id", s), ("source", s), ("ord", i)]
        )
        _ARROW["deleted"] = pa.schema([("doc_id", s), ("source", s), ("ord", i)])
    return _ARROW[table]


class _PartWriter:
    """Appends validated batches to one source's three part files (staged, renamed on close)."""

    def __init__(self, parts: Path, key: str, source: str) -> None:
        import pyarrow.parquet as pq

        self.source = source
        self.final = {t: parts / f"{key}.{t}.parquet" for t in PART_TABLES}
        self.tmp = {t: parts / f".{key}.{t}.parquet.tmp" for t in PART_TABLES}
        self.writers = {t: pq.ParquetWriter(self.tmp[t], _arrow_schema(t)) for t in PART_TABLES}
        self.rows: dict[str, list[dict[str, Any]]] = {t: [] for t in PART_TABLES}
        self.counts = {"records": 0, "deletions": 0, "skipped": 0}

    def add(self, item: Document | tuple[str, ...], ord_: int) -> None:
        if isinstance(item, Document):
            self.counts["records"] += 1
            d = item
            self.rows["documents"].append(
                {"doc_id": d.doc_id, "title": d.title, "text": d.text, "journal": d.journal,
                 "year": d.year, "source": self.source, "ord": ord_}
            )  # fmt: skip
            for scheme, value in d.aliases:
                self.rows["aliases"].append(
                    {"scheme": scheme, "value": value, "doc_id": d.doc_id,
                     "source": self.source, "ord": ord_}
                )  # fmt: skip
        elif item:
            for label in item:
                self.counts["deletions"] += 1
                self.rows["deleted"].append({"doc_id": label, "source": self.source, "ord": ord_})
        else:
            self.counts["skipped"] += 1
        if len(self.rows["documents"]) >= BATCH or len(self.rows["deleted"]) >= BATCH:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        for t in PART_TABLES:
            if not self.rows[t]:
                continue
            frame = pd.DataFrame(self.rows[t], columns=_arrow_schema(t).names)
            if t == "documents":
                frame["year"] = frame["year"].astype("Int64")
            frame = validate_frame(frame, f"corpus_{t}", f"{self.source} ({t})", row_base=1)
            self.writers[t].write_table(
                pa.Table.from_pandas(frame, schema=_arrow_schema(t), preserve_index=False)
            )
            self.rows[t] = []

    def close(self, ok: bool) -> None:
        import os

        if ok:
            self.flush()
        for t in PART_TABLES:
            self.writers[t].close()
            if ok:
                os.replace(self.tmp[t], self.final[t])
            else:
                self.tmp[t].unlink(missing_ok=True)


def ingest_source(
    src: Source, parts: Path, key: str, bar: Progress | None = None
) -> dict[str, int]:
    """Parse one source into its part files; the marker ``<key>.json`` is written last."""
    parts.mkdir(parents=True, exist_ok=True)
    writer = _PartWriter(parts, key, src.name)
    ok = False
    try:
        for i, item in enumerate(_documents(src), start=1):
            writer.add(item, i)
        ok = True
    finally:
        writer.close(ok)
    return writer.counts


# ----------------------------------------------------------------------------- applying


def _sql_list(paths: Sequence[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


MEMORY_LIMIT = "512MB"  # DuckDB spills to disk beyond this


def apply_parts(parts: Path, keyed: Sequence[tuple[str, str]], out: Path) -> None:
    """Write ``out``/{documents,aliases,deleted}.parquet from the parts of ``keyed`` =
    [(key, source name)] in apply order (module doc, step 2). Runs in a scratch DuckDB file
    under ``parts`` with a memory limit and a spill folder (out of core); only keys are held in
    tables; documents and aliases stream part by part, in apply order, through a filter on the
    kept versions (no sort of texts: memory stays bounded, the output is deterministic)."""
    import shutil

    import duckdb

    scratch = parts / ".apply.duckdb"
    spill = parts / ".apply.tmp"
    scratch.unlink(missing_ok=True)
    con = duckdb.connect(str(scratch))
    try:
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
        con.execute("SET temp_directory = ?", [str(spill)])
        con.execute("CREATE TABLE seqs(source VARCHAR, seq INTEGER)")
        con.executemany(
            "INSERT INTO seqs VALUES (?, ?)", [[s, i + 1] for i, (_, s) in enumerate(keyed)]
        )
        files = {t: _sql_list([parts / f"{k}.{t}.parquet" for k, _ in keyed]) for t in PART_TABLES}
        con.execute(
            f"""CREATE TABLE latest AS
            SELECT d.doc_id, d.source, d.ord, s.seq
            FROM read_parquet({files["documents"]}) d JOIN seqs s USING (source)
            QUALIFY row_number() OVER (PARTITION BY d.doc_id ORDER BY s.seq DESC, d.ord DESC) = 1"""
        )
        con.execute(
            f"""CREATE TABLE dels AS
            SELECT x.doc_id, arg_max(x.source, s.seq * 1e9 + x.ord) AS source,
                   arg_max(x.ord, s.seq * 1e9 + x.ord) AS ord, max(s.seq) AS dseq
            FROM read_parquet({files["deleted"]}) x JOIN seqs s USING (source)
            GROUP BY x.doc_id"""
        )
        con.execute(
            """CREATE TABLE kept AS
            SELECT l.doc_id, l.source, l.ord FROM latest l LEFT JOIN dels d USING (doc_id)
            WHERE d.dseq IS NULL OR d.dseq < l.seq"""
        )

        def copy(sql: str, name: str) -> None:
            target = str(out / f"{name}.parquet").replace("'", "''")
            con.execute(f"COPY ({sql}) TO '{target}' (FORMAT parquet, ROW_GROUP_SIZE 20000)")

        for table in ("documents", "aliases"):
            _keep_rows(con, parts, keyed, table, out / f"{table}.parquet")
        copy(
            """SELECT d.doc_id, d.source, d.ord FROM dels d ANTI JOIN kept k USING (doc_id)
            ORDER BY d.doc_id""",
            "deleted",
        )
    finally:
        con.close()
        scratch.unlink(missing_ok=True)
        shutil.rmtree(spill, ignore_errors=True)


def _keep_rows(
    con: Any, parts: Path, keyed: Sequence[tuple[str, str]], table: str, target: Path
) -> None:
    """Copy the rows of the kept document versions (table ``kept``: source, ord) from each
    source's part file, in apply order, batch by batch."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _arrow_schema(table)
    with pq.ParquetWriter(target, schema) as writer:
        for key, source in keyed:
            ords = np.asarray(
                [
                    r[0]
                    for r in con.execute(
                        "SELECT ord FROM kept WHERE source = ?", [source]
                    ).fetchall()
                ],
                dtype=np.int64,
            )
            pf = pq.ParquetFile(parts / f"{key}.{table}.parquet")
            for batch in pf.iter_batches(batch_size=BATCH):
                mask = np.isin(batch.column("ord").to_numpy(), ords)
                if mask.any():
                    writer.write_table(pa.Table.from_batches([batch], schema).filter(mask))


def _counts(con: Any, out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    docs = str(out / "documents.parquet").replace("'", "''")
    al = str(out / "aliases.parquet").replace("'", "''")
    de = str(out / "deleted.parquet").replace("'", "''")
    n_docs = con.execute(f"SELECT count(*), count(DISTINCT doc_id) FROM '{docs}'").fetchone()
    if n_docs[0] != n_docs[1]:
        raise InputError("duplicate_document", "documents.parquet has repeated doc_id (a kit bug)")
    by_scheme = dict(
        con.execute(
            f"SELECT scheme, count(*) FROM '{al}' GROUP BY scheme ORDER BY scheme"
        ).fetchall()
    )
    observed: dict[str, Any] = {}
    for scheme in NUMERIC_SCHEMES:
        skip = 0 if scheme == "PMID" else 3
        lo, hi = con.execute(
            f"SELECT min(CAST(value[{skip + 1}:] AS BIGINT)), max(CAST(value[{skip + 1}:] AS BIGINT)) "
            f"FROM '{al}' WHERE scheme = ?",
            [scheme],
        ).fetchone()
        if lo is not None:
            observed[scheme] = {"min": int(lo), "max": int(hi)}
    n_del = con.execute(f"SELECT count(*) FROM '{de}'").fetchone()[0]
    counts = {
        "documents": int(n_docs[0]),
        "deleted": int(n_del),
        "aliases": {k: int(v) for k, v in by_scheme.items()},
    }
    return counts, observed


def _texts(con: Any) -> Iterator[tuple[str, str]]:
    """(doc_id, title + text) of every document in table order, fetched in batches."""
    from kit.corpus.store import doc_text

    cur = con.execute("SELECT doc_id, title, text FROM documents")
    while rows := cur.fetchmany(BATCH):
        for d, t, x in rows:
            yield d, doc_text(t, x)


def declared_coverage(spec: BuildSpec, present: Iterable[str]) -> list[Coverage]:
    """The declarations of ``spec`` plus ``sample`` for every present, undeclared scheme."""
    seen: dict[str, Coverage] = {}
    for c in spec.coverage:
        if c.scheme in seen:
            raise ConfigError("bad_coverage", f"{c.scheme} coverage declared twice")
        seen[c.scheme] = c
    for scheme in sorted(present):
        if scheme not in seen:
            seen[scheme] = Coverage(
                scheme, "sample", "not declared: a sample (absence proves nothing)"
            )
    return [seen[s] for s in SCHEMES if s in seen]


def build_command(spec: BuildSpec) -> str:
    """The command line that rebuilds this corpus (recorded in the manifest)."""
    args = ["kit", "corpus", "build", spec.name, "--licence", spec.licence]
    if spec.description:
        args += ["--description", spec.description]
    for s in spec.sources:
        if s.kind == "medline":
            args += ["--medline", str(s.path)]
        elif s.kind == "table":
            args += ["--table", str(s.path), "--map", ",".join(f"{k}={v}" for k, v in s.mapping)]
        else:
            args += ["--text-folder", str(s.path)]
        if s.id_scheme:
            args += ["--id-scheme", s.id_scheme]
    for c in spec.coverage:
        rng = f":{c.lo}-{c.hi}" if c.kind == "complete" else ""
        args += ["--coverage", f"{c.scheme}={c.kind}{rng};{c.statement}"]
    return shlex.join(args)


def build_corpus(spec: BuildSpec) -> BuildResult:
    """Ingest every source (resuming), apply them in order, and swap the corpus into place.

    A refused or failed build leaves no folder it created empty behind: the parts of sources
    parsed before the failure stay (the next run resumes from them), nothing else.
    """
    home = spec.root / spec.name
    created = [d for d in (spec.root, home, home / "parts") if not d.exists()]
    try:
        return _build_corpus(spec)
    except BaseException:
        for d in reversed(created):
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        raise


def _build_corpus(spec: BuildSpec) -> BuildResult:
    import duckdb

    from kit.corpus.catalog import check_name

    check_name(spec.name)
    if not spec.sources:
        raise ConfigError("no_sources", "give at least one --medline, --table or --text-folder")
    names = [s.name for s in spec.sources]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError("duplicate_source", f"two sources share the file name {dup[0]!r}")
    if not spec.licence.strip():
        raise ConfigError("no_licence", "state the sources' licence (--licence)")
    home = spec.root / spec.name
    parts = home / "parts"
    result = BuildResult({})
    keyed: list[tuple[str, str]] = []
    rows: list[dict[str, Any]] = []
    with Progress(len(spec.sources), spec.progress, f"corpus {spec.name}", "sources") as bar:
        for seq, src in enumerate(spec.sources, start=1):
            sha, size = source_digest(src)
            key = part_key(src, sha)
            marker = parts / f"{key}.json"
            if marker.is_file():
                counts = json.loads(marker.read_text(encoding="utf-8"))["counts"]
                result.reused.append(src.name)
            else:
                counts = ingest_source(src, parts, key, bar)
                atomic.write_text(
                    marker,
                    json.dumps(
                        {"source": src.name, "sha256": sha, "counts": counts}, sort_keys=True
                    )
                    + "\n",
                )
                result.parsed.append(src.name)
            keyed.append((key, src.name))
            row: dict[str, Any] = {
                "seq": seq,
                "name": src.name,
                "kind": src.kind,
                "sha256": sha,
                "bytes": size,
                **counts,
            }
            if src.mapping:
                row["mapping"] = dict(src.mapping)
            rows.append(row)
            bar.advance(1)
    empty = [
        msg
        for src, row in zip(spec.sources, rows, strict=True)
        if (msg := empty_source_message(src, row)) is not None
    ]
    if len(empty) == len(spec.sources):
        # A corpus of 0 documents resolves nothing, and with declared complete coverage it
        # would turn every cited identifier into a "fabrication": refuse, build nothing.
        raise InputError(
            "no_documents",
            f"none of the {len(spec.sources)} source(s) holds a document; corpus "
            f"{spec.name!r} not built (the previous version, if any, is kept)",
            where=Location(str(spec.sources[0].path)),
            details=empty,
        )
    result.warnings.extend(empty)
    used = {k for k, _ in keyed}
    for f in sorted(parts.iterdir()):
        if f.name.split(".")[0] not in used and not f.name.startswith("."):
            f.unlink()
    with atomic.staged_dir(home / "current") as tmp:
        apply_parts(parts, keyed, tmp)
        con = duckdb.connect(str(tmp / "corpus.duckdb"))
        try:
            con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
            counts, observed = _counts(con, tmp)
            con.execute("SET file_search_path = ?", [str(tmp)])
            con.execute(
                "CREATE TABLE aliases AS SELECT scheme, value, doc_id FROM 'aliases.parquet'"
            )
            con.execute("CREATE TABLE deleted AS SELECT doc_id FROM 'deleted.parquet'")
            con.execute("CREATE INDEX aliases_key ON aliases (scheme, value)")
            con.execute("CREATE VIEW documents AS SELECT * FROM read_parquet('documents.parquet')")
            if spec.index and counts["documents"]:
                from kit.corpus.bm25 import BM25Index

                BM25Index.build(_texts(con)).save(tmp / "bm25")
        finally:
            con.close()
        coverage = declared_coverage(spec, counts["aliases"])
        manifest = {
            "format": "litaudit-kit-corpus/1",
            "name": spec.name,
            "kit_version": __version__,
            "description": spec.description,
            "licence": spec.licence,
            "build_command": build_command(spec),
            "sources": rows,
            "counts": counts,
            "observed": observed,
            "coverage": [c.to_dict() for c in coverage],
            "files": {f"{t}.parquet": file_sha256(tmp / f"{t}.parquet") for t in PART_TABLES},
        }
        if (tmp / "bm25").is_dir():
            manifest["index"] = {"kind": "bm25s", "folder": "bm25", "k1": 1.5, "b": 0.75}
        validate_json(manifest, "corpus_manifest", str(home / "current" / "manifest.json"))
        (tmp / "manifest.json").write_text(
            json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        tmp.chmod(0o755)
    result.manifest = manifest
    return result
