"""What `kit corpus list / show / search` print (I/O edge: opens corpora, returns frames/dicts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from kit.core.errors import ConfigError, KitError
from kit.corpus.catalog import (
    BUILTIN,
    built_names,
    describe,
    open_built,
    open_chain,
    parse_names,
    pubmedqa_from_registry,
)
from kit.corpus.identifiers import canonical
from kit.corpus.store import MemoryCorpus

LIST_COLUMNS = ["name", "documents", "coverage", "description"]


def _coverage_text(desc: dict[str, Any]) -> str:
    return "; ".join(
        f"{c['scheme']} {c['kind']}" + (f" {c['lo']}..{c['hi']}" if c["kind"] == "complete" else "")
        for c in desc["coverage"]
    )


def _pubmedqa(raw: Path) -> MemoryCorpus | None:
    try:
        return pubmedqa_from_registry(raw)
    except KitError:
        return None


def list_corpora(root: Path, raw: Path) -> pd.DataFrame:
    """One row per corpus a user can name: the built-in ones, then those built under ``root``."""
    rows = []
    pq = _pubmedqa(raw)
    if pq is None:
        rows.append(
            {"name": "pubmedqa", "documents": None, "coverage": "PMID sample",
             "description": f"built in; registry not fetched at {raw} (kit registry fetch)"}
        )  # fmt: skip
    else:
        d = describe(pq)
        rows.append(
            {"name": d["name"], "documents": d["n_documents"], "coverage": _coverage_text(d),
             "description": d["description"]}
        )  # fmt: skip
    for name in built_names(root):
        d = describe(open_built(name, root))
        rows.append(
            {"name": name, "documents": d["n_documents"], "coverage": _coverage_text(d),
             "description": d["description"]}
        )  # fmt: skip
    frame = pd.DataFrame(rows, columns=LIST_COLUMNS)
    frame["documents"] = frame["documents"].astype("Int64")
    return frame


def _chain(names: str | None, root: Path, raw: Path) -> Any:
    wanted = parse_names(names) if names else [*BUILTIN, *built_names(root)]
    pq = _pubmedqa(raw) if "pubmedqa" in wanted else None
    if names is None and pq is None:
        wanted = [n for n in wanted if n != "pubmedqa"]
    return open_chain(wanted, root, pq)


def show(text: str, names: str | None, root: Path, raw: Path) -> dict[str, Any]:
    """A corpus's manifest summary (when ``text`` names one), else the L1 resolution of the
    identifier ``text`` over the corpora ``names`` (default: all) and its document."""
    if text in built_names(root):
        c = open_built(text, root)
        m = dict(c.manifest)
        return {"corpus": m["name"], "manifest": m}
    ident = canonical(text)
    if ident is None:
        raise ConfigError(
            "bad_identifier",
            f"{text!r} is neither a corpus name nor an identifier (PMID:123, PMC123, a DOI, "
            "arXiv:2101.00001, NCT01234567, a URL)",
        )
    chain = _chain(names, root, raw)
    r = chain.resolve([ident])[ident]
    out: dict[str, Any] = {
        "identifier": ident.label,
        "scheme": ident.scheme,
        "order": list(chain.order),
        "l1": r.status,
        "corpus": r.corpus,
        "doc_id": r.doc_id,
        "note": r.note,
    }
    if r.status == "found":
        corpus = next(c for c in chain.corpora if c.name == r.corpus)
        doc = corpus.document(r.doc_id) if hasattr(corpus, "document") else None
        if doc is None:
            doc = {"doc_id": r.doc_id, "text": corpus.texts([r.doc_id]).get(r.doc_id, "")}
        out["document"] = doc
    return out


def search(query: str, name: str, k: int, root: Path, raw: Path) -> pd.DataFrame:
    """The ``k`` best documents of corpus ``name`` for ``query`` by BM25 (rank, doc_id, score,
    title); ties broken by doc_id."""
    if k < 1:
        raise ConfigError("bad_parameter", f"--k must be >= 1, got {k}")
    corpus = _chain(name, root, raw).corpora[0]
    ranked = corpus.search(query, k)
    texts = corpus.texts([d for d, _ in ranked])
    return pd.DataFrame(
        [
            {"rank": i + 1, "doc_id": d, "score": s, "text": texts.get(d, "")[:100]}
            for i, (d, s) in enumerate(ranked)
        ],
        columns=["rank", "doc_id", "score", "text"],
    )
