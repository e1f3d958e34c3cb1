"""SYNTHETIC MEDLINE-format files, for tests and the corpus benchmark (RNG passed in).

Nothing here is real: titles start with ``SYNTHETIC``, journals are ``Synthetic Journal N``,
abstracts are words drawn from a fixed vocabulary with Zipf-like frequencies (so that BM25 has
rare and common terms to weigh). The XML follows the PubMed DTD's element names for the fields
:mod:`kit.corpus.medline` reads, written streamed (constant memory for any record count).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from xml.sax.saxutils import escape

import numpy as np

SYLLABLES = ("ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "ze", "bro", "cle", "dri")


@dataclass(frozen=True)
class SynthRecord:
    """One synthetic record (empty doi / pmcid = none)."""

    pmid: int
    title: str
    abstract: Sequence[tuple[str, str]]  # (label or '', text) sections
    journal: str = "Synthetic Journal 1"
    year: int = 2020
    doi: str = ""
    pmcid: str = ""


def vocabulary(n: int = 5000) -> list[str]:
    """``n`` distinct pseudo-words built from :data:`SYLLABLES` (deterministic)."""
    words: list[str] = []
    k = len(SYLLABLES)
    i = 0
    while len(words) < n:
        j, w = i, ""
        for _ in range(3):
            w += SYLLABLES[j % k]
            j //= k
        words.append(w + str(i // (k**3)) if i >= k**3 else w)
        i += 1
    return words


def synthetic_records(
    start: int, n: int, rng: np.random.Generator, words: int = 60, vocab: int = 5000
) -> Iterator[SynthRecord]:
    """``n`` records with PMIDs ``start``, ``start + 1``, ...; every record has a DOI, every
    other one a PMCID. Abstract words ~ Zipf(1.1) over the vocabulary."""
    vocab_words = vocabulary(vocab)
    ranks = np.arange(1, vocab + 1, dtype=float)
    p = ranks**-1.1
    p /= p.sum()
    batch = 10_000
    for b in range(0, n, batch):
        m = min(batch, n - b)
        draws = rng.choice(vocab, size=(m, words + 6), p=p)
        for i in range(m):
            pmid = start + b + i
            w = [vocab_words[x] for x in draws[i]]
            yield SynthRecord(
                pmid=pmid,
                title="SYNTHETIC " + " ".join(w[:6]),
                abstract=(("", " ".join(w[6:])),),
                journal=f"Synthetic Journal {pmid % 50}",
                year=1990 + pmid % 35,
                doi=f"10.5555/Synth.{pmid}",
                pmcid=f"PMC{pmid + 1000}" if pmid % 2 == 0 else "",
            )


def _article(r: SynthRecord) -> str:
    sections = "".join(
        f'<AbstractText Label="{escape(lab)}">{escape(t)}</AbstractText>'
        if lab
        else f"<AbstractText>{escape(t)}</AbstractText>"
        for lab, t in r.abstract
    )
    ids = f'<ArticleId IdType="pubmed">{r.pmid}</ArticleId>'
    if r.doi:
        ids += f'<ArticleId IdType="doi">{escape(r.doi)}</ArticleId>'
    if r.pmcid:
        ids += f'<ArticleId IdType="pmc">{escape(r.pmcid)}</ArticleId>'
    return (
        '<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">'
        f'<PMID Version="1">{r.pmid}</PMID><Article PubModel="Print">'
        f"<Journal><JournalIssue><PubDate><Year>{r.year}</Year></PubDate></JournalIssue>"
        f"<Title>{escape(r.journal)}</Title></Journal>"
        f"<ArticleTitle>{escape(r.title)}</ArticleTitle>"
        f"<Abstract>{sections}</Abstract></Article></MedlineCitation>"
        f"<PubmedData><ArticleIdList>{ids}</ArticleIdList></PubmedData></PubmedArticle>\n"
    )


def write_medline(
    path: Path, records: Iterable[SynthRecord], deletions: Sequence[int] = ()
) -> Path:
    """Write a PubmedArticleSet (gzip when ``path`` ends in .gz), deletions at the end."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fh: IO[bytes] = (
        gzip.open(path, "wb", compresslevel=1) if path.name.endswith(".gz") else path.open("wb")
    )
    with fh:
        fh.write(b'<?xml version="1.0" encoding="utf-8"?>\n<PubmedArticleSet>\n')
        buf: list[str] = []
        for r in records:
            buf.append(_article(r))
            if len(buf) >= 2000:
                fh.write("".join(buf).encode("utf-8"))
                buf = []
        fh.write("".join(buf).encode("utf-8"))
        if deletions:
            pm = "".join(f'<PMID Version="1">{d}</PMID>' for d in deletions)
            fh.write(f"<DeleteCitation>{pm}</DeleteCitation>\n".encode())
        fh.write(b"</PubmedArticleSet>\n")
    return path
