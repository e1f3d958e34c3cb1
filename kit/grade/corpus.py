"""Registry corpora for the L1 existence check, resolved through the DuckDB catalog (I/O edge).

Which identifier type resolves against which catalog table is a declaration (:data:`CORPORA`),
so a new corpus (a trial registry for NCT ids) is one entry, not new code. Today only PMIDs have
a corpus: ``pubmedqa_items.pmid`` (PubMedQA PQA-L, 1,000 abstracts), declared a *sample* of
PubMed (:data:`kit.corpus.catalog.PUBMEDQA_SAMPLE`): a PMID absent from it is ``unchecked``, not
fabricated (:func:`kit.corpus.coverage.decide`). Other identifier types have no registry corpus
and are reported ``unchecked`` (never fabrication). Built corpora: ``kit audit --corpus``.

A lookup that fails inside DuckDB (locked or unreadable file) is ``transient`` for every value in
the batch -- an infrastructure failure is not evidence that an identifier was invented.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.core.errors import InputError, Location
from kit.corpus.catalog import PUBMEDQA_SAMPLE
from kit.corpus.coverage import Coverage, Resolution, decide
from kit.corpus.identifiers import Identifier
from kit.runs.model import Citation


@dataclass(frozen=True)
class CorpusSpec:
    """An identifier type's corpus: the catalog table and column it resolves against, and the
    SQL listing every paper's text as rows (id, text) for L2."""

    id_type: str
    table: str
    id_column: str
    texts_sql: str
    description: str
    corpus: str
    coverage: tuple[Coverage, ...]


CORPORA: dict[str, CorpusSpec] = {
    "PMID": CorpusSpec(
        id_type="PMID",
        table="pubmedqa_items",
        id_column="pmid",
        texts_sql=(
            "SELECT pmid, string_agg(text, ' ' ORDER BY section_index) "
            "FROM pubmedqa_contexts GROUP BY pmid"
        ),
        description="PubMedQA PQA-L abstracts (pubmedqa_items / pubmedqa_contexts), 1,000 PMIDs",
        corpus="pubmedqa",
        coverage=(PUBMEDQA_SAMPLE,),
    ),
}


def _connect(db_path: Path) -> Any:
    import duckdb

    if not Path(db_path).is_file():
        raise InputError(
            "no_catalog",
            "catalog not built; run `kit db build` (after `kit registry fetch`)",
            where=Location(str(db_path)),
        )
    return duckdb.connect(str(db_path), read_only=True)


@dataclass(frozen=True)
class CatalogResolver:
    """Resolve identifiers of one type against the catalog table of its :class:`CorpusSpec`."""

    db_path: Path
    spec: CorpusSpec

    def resolve(self, values: Sequence[str]) -> dict[str, Resolution]:
        import duckdb

        name = self.spec.corpus
        try:
            con = _connect(self.db_path)
        except duckdb.Error:
            return {v: Resolution("transient", name) for v in values}
        try:
            rows = con.execute(
                f'SELECT "{self.spec.id_column}" FROM "{self.spec.table}" '
                f'WHERE "{self.spec.id_column}" IN (SELECT unnest(?::VARCHAR[]))',
                [list(values)],
            ).fetchall()
        except duckdb.Error:
            return {v: Resolution("transient", name) for v in values}
        finally:
            con.close()
        known = {str(r[0]) for r in rows}
        t = self.spec.id_type
        return {
            v: decide(
                Identifier(t, v),
                (name,),
                {name: ("found", f"{t}:{v}") if v in known else ("absent", "")},
                {name: self.spec.coverage},
            )
            for v in values
        }


@dataclass(frozen=True)
class CatalogPassages:
    """Paper text for L2, read from the catalog with each spec's ``texts_sql``."""

    db_path: Path

    def all_texts(self, id_type: str) -> dict[str, str]:
        spec = CORPORA.get(id_type)
        if spec is None:
            return {}
        con = _connect(self.db_path)
        try:
            rows = con.execute(spec.texts_sql).fetchall()
        finally:
            con.close()
        return {str(k): str(v) for k, v in rows}


def catalog_resolvers(db_path: Path) -> dict[str, CatalogResolver]:
    return {t: CatalogResolver(Path(db_path), spec) for t, spec in sorted(CORPORA.items())}


def pmid_lookup(texts: dict[str, str]) -> Callable[[Citation], str | None]:
    """Citation -> abstract text (PMIDs only; other identifier types have no corpus)."""

    def lookup(c: Citation) -> str | None:
        return texts.get(c.value) if c.id_type == "PMID" else None

    return lookup
