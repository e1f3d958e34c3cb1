"""The PubMedQA PQA-L abstracts as a corpus (pure given the validated registry frames).

What an audit resolves PMIDs against and reads cited passages from, and where its default
construction-labelled calibration pairs come from: an item's conclusion against its own abstract
(supported) and against the abstract of its on-topic neighbour -- the other item sharing the most
*specific* MeSH terms (terms carried by at most ``specific_mesh_max_share`` of the corpus),
with at least ``min_shared_mesh`` of them; ties go to the smallest PMID.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kit.grade.text import content_tokens


@dataclass(frozen=True)
class PubMedQACorpus:
    """The PubMedQA corpus prepared once: abstracts, conclusions, on-topic MeSH neighbours."""

    pmids: tuple[str, ...]
    abstract: Mapping[str, str] = field(hash=False)
    conclusion: Mapping[str, str] = field(hash=False)
    question: Mapping[str, str] = field(hash=False)
    neighbour: Mapping[str, str] = field(hash=False)  # only items with an on-topic neighbour
    shared: Mapping[str, int] = field(hash=False)
    meshes: Mapping[str, tuple[str, ...]] = field(hash=False)
    mesh_df: Mapping[str, int] = field(hash=False)
    token_df: Mapping[str, int] = field(hash=False)

    @property
    def pool(self) -> tuple[str, ...]:
        return tuple(p for p in self.pmids if p in self.neighbour)


def build_corpus(
    items: pd.DataFrame,
    contexts: pd.DataFrame,
    meshes: pd.DataFrame,
    *,
    min_shared_mesh: int = 1,
    specific_mesh_max_share: float = 0.05,
) -> PubMedQACorpus:
    """Prepare texts and on-topic neighbours from the validated PubMedQA frames."""
    pmids = tuple(sorted(items["pmid"].astype(str), key=int))
    ctx = contexts.sort_values(["pmid", "section_index"])
    abstract = {str(k): " ".join(v) for k, v in ctx.groupby("pmid", sort=True)["text"]}
    conclusion = dict(zip(items["pmid"].astype(str), items["long_answer"], strict=True))
    question = dict(zip(items["pmid"].astype(str), items["question"], strict=True))
    mesh_df = meshes.groupby("mesh").size().to_dict()
    limit = specific_mesh_max_share * len(pmids)
    specific = meshes[meshes["mesh"].map(mesh_df) <= limit]
    index = {p: i for i, p in enumerate(pmids)}
    terms = sorted(specific["mesh"].unique())
    tindex = {t: j for j, t in enumerate(terms)}
    inc = np.zeros((len(pmids), len(terms)), dtype=np.float64)  # BLAS; counts are exact
    for p, t in zip(specific["pmid"].astype(str), specific["mesh"], strict=True):
        if p in index:
            inc[index[p], tindex[t]] = 1
    co = inc @ inc.T
    np.fill_diagonal(co, -1)
    best = co.argmax(axis=1)  # first maximum = smallest PMID (pmids sorted numerically)
    neighbour, shared = {}, {}
    for i, p in enumerate(pmids):
        s = int(co[i, best[i]])
        if s >= min_shared_mesh:
            neighbour[p] = pmids[int(best[i])]
            shared[p] = s
    by_item = {str(k): tuple(v) for k, v in meshes.groupby("pmid", sort=True)["mesh"]}
    token_df: dict[str, int] = {}
    for p in pmids:
        for t in set(content_tokens(abstract.get(p, "") + " " + conclusion[p])):
            token_df[t] = token_df.get(t, 0) + 1
    return PubMedQACorpus(
        pmids, abstract, conclusion, question, neighbour, shared, by_item, mesh_df, token_df
    )


def claim_text(corpus: PubMedQACorpus, pmid: str) -> str:
    """The claim an item supports: the item's conclusion without its final full stop (the citation
    marker goes there), exactly the span kit.grade.citation_audit.claim_for recovers."""
    text = corpus.conclusion[pmid].strip()
    return text[:-1].rstrip() if text.endswith(".") else text
