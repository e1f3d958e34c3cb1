"""Corpora a lab brings (issue 14): canonical identifiers, declared coverage, ingestion.

* :mod:`kit.corpus.identifiers` -- canonical PMID / PMCID / DOI / arXiv / NCT / URL (pure).
* :mod:`kit.corpus.coverage` -- declared coverage and the L1 decision over corpora (pure).
* :mod:`kit.corpus.document` -- one document as every ingester yields it.
* :mod:`kit.corpus.medline` -- MEDLINE / PubMed XML streamed with bounded memory.
* :mod:`kit.corpus.tabular` -- JSONL / parquet / CSV with a column mapping; text folders.
* :mod:`kit.corpus.build` -- parts per source (resumable), applied in order, swapped in.
* :mod:`kit.corpus.store` -- look-ups and texts of built and in-memory corpora; the chain.
* :mod:`kit.corpus.catalog` -- the corpora a user can name (built-in ``pubmedqa`` + built ones).
"""
