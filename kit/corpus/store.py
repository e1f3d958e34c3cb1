"""Reading corpora: look-ups of canonical identifiers and document texts (I/O edge).

Two kinds share one interface (:class:`CorpusLike`): a built corpus on disk
(:class:`DiskCorpus`, ``data/corpus/NAME/current/``) and a corpus held in memory
(:class:`MemoryCorpus`, e.g. the registry's PubMedQA abstracts). :class:`CorpusChain` resolves
identifiers over several corpora in a stated order with :func:`kit.corpus.coverage.decide`.

A look-up that fails inside DuckDB (a locked or unreadable file) is ``transient`` for every
identifier of the batch: an infrastructure failure is no evidence that an identifier was invented.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kit.core.errors import InputError, Location
from kit.corpus.coverage import Coverage, Resolution, decide
from kit.corpus.identifiers import Identifier

Key = tuple[str, str]


class CorpusLike(Protocol):
    """What resolution and passage reading need from a corpus."""

    name: str
    description: str
    coverage: tuple[Coverage, ...]

    def n_documents(self) -> int: ...

    def lookup(self, keys: Sequence[Key]) -> dict[Key, tuple[str, str]]:
        """(scheme, value) -> (outcome, doc_id); outcome found / absent / deleted / transient."""
        ...

    def texts(self, doc_ids: Sequence[str]) -> dict[str, str]: ...


def doc_text(title: str, text: str) -> str:
    return " ".join(t for t in (title.strip(), text.strip()) if t)


@dataclass(frozen=True)
class MemoryCorpus:
    """A corpus held in memory: aliases (scheme, value) -> doc_id, texts by doc_id, declared
    coverage; ``failed`` keys replay recorded look-up outages (``transient``)."""

    name: str
    description: str
    coverage: tuple[Coverage, ...]
    aliases: Mapping[Key, str] = field(hash=False)
    documents: Mapping[str, str] = field(hash=False)
    failed: frozenset[Key] = frozenset()

    def n_documents(self) -> int:
        return len(self.documents)

    def lookup(self, keys: Sequence[Key]) -> dict[Key, tuple[str, str]]:
        out: dict[Key, tuple[str, str]] = {}
        for k in keys:
            if k in self.failed:
                out[k] = ("transient", "")
            elif k in self.aliases:
                out[k] = ("found", self.aliases[k])
            else:
                out[k] = ("absent", "")
        return out

    def texts(self, doc_ids: Sequence[str]) -> dict[str, str]:
        return {d: self.documents[d] for d in doc_ids if d in self.documents}

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best documents for ``query`` with a positive score (BM25 index built in
        memory)."""
        from kit.corpus.bm25 import BM25Index

        return BM25Index.build(sorted(self.documents.items())).top(query, k, positive=True)


def read_manifest(home: Path) -> dict[str, Any]:
    """``home/current/manifest.json``, validated (InputError when missing or invalid)."""
    from kit.core.schema import validate_json

    path = home / "current" / "manifest.json"
    if not path.is_file():
        raise InputError(
            "no_corpus", "corpus not built (`kit corpus build`)", where=Location(str(path))
        )
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(
            "bad_manifest", f"not JSON: {exc.msg}", where=Location(str(path), exc.lineno)
        ) from None
    return validate_json(obj, "corpus_manifest", str(path))


def coverage_of(manifest: Mapping[str, Any]) -> tuple[Coverage, ...]:
    return tuple(
        Coverage(c["scheme"], c["kind"], c["statement"], c["lo"], c["hi"])
        for c in manifest["coverage"]
    )


@dataclass(frozen=True)
class DiskCorpus:
    """A built corpus: DuckDB ``corpus.duckdb`` (aliases, deleted) + ``documents.parquet``."""

    home: Path
    manifest: Mapping[str, Any] = field(hash=False)

    @classmethod
    def open(cls, home: Path) -> DiskCorpus:
        return cls(Path(home), read_manifest(Path(home)))

    @property
    def name(self) -> str:
        return str(self.manifest["name"])

    @property
    def description(self) -> str:
        return str(self.manifest["description"]) or f"built corpus {self.name}"

    @property
    def coverage(self) -> tuple[Coverage, ...]:
        return coverage_of(self.manifest)

    def n_documents(self) -> int:
        return int(self.manifest["counts"]["documents"])

    def connect(self) -> Any:
        import duckdb

        cur = self.home / "current"
        con = duckdb.connect(str(cur / "corpus.duckdb"), read_only=True)
        con.execute("SET file_search_path = ?", [str(cur)])
        return con

    def lookup(self, keys: Sequence[Key]) -> dict[Key, tuple[str, str]]:
        import duckdb

        keys = list(dict.fromkeys(keys))
        if not keys:
            return {}
        try:
            con = self.connect()
            try:
                schemes = [k[0] for k in keys]
                values = [k[1] for k in keys]
                q = "SELECT unnest(?::VARCHAR[]) AS scheme, unnest(?::VARCHAR[]) AS value"
                found = con.execute(
                    f"SELECT a.scheme, a.value, min(a.doc_id) FROM aliases a JOIN ({q}) q "
                    "USING (scheme, value) GROUP BY a.scheme, a.value",
                    [schemes, values],
                ).fetchall()
                labels = [f"{s}:{v}" for s, v in keys if s == "PMID"]
                deleted = {
                    r[0]
                    for r in con.execute(
                        "SELECT doc_id FROM deleted WHERE doc_id IN (SELECT unnest(?::VARCHAR[]))",
                        [labels],
                    ).fetchall()
                }
            finally:
                con.close()
        except duckdb.Error:
            return {k: ("transient", "") for k in keys}
        hit = {(s, v): d for s, v, d in found}
        out: dict[Key, tuple[str, str]] = {}
        for k in keys:
            if k in hit:
                out[k] = ("found", hit[k])
            elif k[0] == "PMID" and f"PMID:{k[1]}" in deleted:
                out[k] = ("deleted", "")
            else:
                out[k] = ("absent", "")
        return out

    def texts(self, doc_ids: Sequence[str]) -> dict[str, str]:
        if not doc_ids:
            return {}
        con = self.connect()
        try:
            rows = con.execute(
                "SELECT doc_id, title, text FROM documents WHERE doc_id IN (SELECT unnest(?::VARCHAR[]))",
                [list(doc_ids)],
            ).fetchall()
        finally:
            con.close()
        return {d: doc_text(t, x) for d, t, x in rows}

    def document(self, doc_id: str) -> dict[str, Any] | None:
        """One document row with its aliases, or None."""
        con = self.connect()
        try:
            cur = con.execute("SELECT * FROM documents WHERE doc_id = ?", [doc_id])
            row = cur.fetchone()
            if row is None:
                return None
            out = dict(zip([c[0] for c in cur.description], row, strict=True))
            out["aliases"] = [
                f"{s}:{v}"
                for s, v in con.execute(
                    "SELECT scheme, value FROM aliases WHERE doc_id = ? ORDER BY scheme, value",
                    [doc_id],
                ).fetchall()
            ]
        finally:
            con.close()
        return out

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best documents for ``query`` with a positive score, from the on-disk BM25
        index."""
        from kit.corpus.bm25 import BM25Index

        return BM25Index.open(self.home / "current" / "bm25").top(query, k, positive=True)

    def all_texts(self) -> dict[str, str]:
        """Every document's title + text (for an in-memory index over a small corpus)."""
        con = self.connect()
        try:
            rows = con.execute("SELECT doc_id, title, text FROM documents").fetchall()
        finally:
            con.close()
        return {d: doc_text(t, x) for d, t, x in rows}


@dataclass(frozen=True)
class CorpusChain:
    """Corpora in a stated resolution order (first that holds an identifier resolves it)."""

    corpora: tuple[Any, ...]
    memo: dict[Key, Resolution] = field(default_factory=dict, hash=False, compare=False)
    texts_memo: dict[Key, str] = field(default_factory=dict, hash=False, compare=False)

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.corpora)

    def resolve(self, idents: Sequence[Identifier]) -> dict[Identifier, Resolution]:
        """L1 for each identifier: :func:`kit.corpus.coverage.decide` over the chain (each
        identifier looked up once per chain; later calls answer from the memo)."""
        keys = sorted({i.key for i in idents} - set(self.memo))
        if keys:
            per = {c.name: c.lookup(keys) for c in self.corpora}
            cov = {c.name: c.coverage for c in self.corpora}
            for k in keys:
                ident = Identifier(*k)
                self.memo[k] = decide(ident, self.order, {n: per[n][k] for n in self.order}, cov)
        return {i: self.memo[i.key] for i in idents}

    def passages(self, idents: Sequence[Identifier]) -> dict[Key, str]:
        """The text of every found identifier's document (from the corpus that resolved it)."""
        todo = [i for i in idents if i.key not in self.texts_memo]
        got = self.text_of({i.key: r for i, r in self.resolve(todo).items()})
        self.texts_memo.update(got)
        return {i.key: self.texts_memo[i.key] for i in idents if i.key in self.texts_memo}

    def passage(self, scheme: str, value: str) -> str | None:
        """One identifier's passage (None when not found or without text)."""
        return self.passages([Identifier(scheme, value)]).get((scheme, value)) or None

    def text_of(self, resolutions: Mapping[Any, Resolution]) -> dict[Any, str]:
        """The text of each found resolution's document, from the corpus that resolved it."""
        by_corpus: dict[str, list[str]] = {}
        for r in resolutions.values():
            if r.status == "found":
                by_corpus.setdefault(r.corpus, []).append(r.doc_id)
        got = {
            (c.name, d): t
            for c in self.corpora
            for d, t in c.texts(sorted(set(by_corpus.get(c.name, [])))).items()
        }
        return {
            k: got[(r.corpus, r.doc_id)]
            for k, r in resolutions.items()
            if r.status == "found" and (r.corpus, r.doc_id) in got
        }

    def resolver(self, scheme: str) -> ChainResolver:
        return ChainResolver(self, scheme)


@dataclass(frozen=True)
class ChainResolver:
    """The chain as an L1 resolver of one identifier type (``kit.grade.citation_audit``)."""

    chain: CorpusChain
    scheme: str

    def resolve(self, values: Sequence[str]) -> dict[str, Resolution]:
        idents = {v: Identifier(self.scheme, v) for v in values}
        got = self.chain.resolve(list(idents.values()))
        return {v: got[i] for v, i in idents.items()}
