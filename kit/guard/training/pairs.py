"""Construction-labelled claim-passage pairs from PubMedQA (pure given items and a Generator).

docs/architecture.md, "Citation guard", "Construction labels from PubMedQA". These labels are
*construction labels*, not human judgements of support: a conclusion is assumed supported by its own
abstract and unsupported by any other abstract; the negated conclusion is assumed contradicted by
its own abstract. Pair types:

* ``positive``  -- (the item's conclusion LONG_ANSWER, its own abstract = joined CONTEXTS);
* ``random``    -- (conclusion, a uniformly random other abstract): easy negative;
* ``mesh``      -- (conclusion, the other abstract sharing the most MeSH terms, ties broken at
  random; skipped when no abstract shares a term): on topic, wrong paper;
* ``bm25``      -- (conclusion, the other abstract ranked first by BM25 with the conclusion as
  query): the lexically nearest wrong paper;
* ``negated``   -- (the conclusion negated by :func:`negate`, its own abstract): a
  contradiction that a similarity verifier cannot see.

Note the abstract (CONTEXTS) excludes the conclusion section, so positives are not trivial
copies. Assumption for AUC/coverage use: items are independent draws from PQA-L.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kit.core.errors import InputError, Location
from kit.corpus.lexical import tokenize
from kit.guard.reattribute import build_bm25
from kit.runs.sentences import split_sentences

NEG_TYPES = ("random", "mesh", "bm25", "negated")

NEGATION_RULE = (
    "in every sentence of the conclusion, the first auxiliary/copula is negated "
    "(is/are/was/were/can/could/may/might/should/would/will/does/do/did/has/have/had + 'not'; "
    "an existing 'not'/'no longer' is removed instead); a sentence with none gets the prefix "
    "'It is not true that'"
)
_AUX = re.compile(
    r"\b(is|are|was|were|can|could|may|might|should|would|will|does|do|did|has|have|had)"
    r"(\s+not\b|n't\b)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PubItem:
    pmid: str
    question: str
    abstract: str
    conclusion: str
    meshes: tuple[str, ...]
    decision: str


def items_from_pqal(obj: Any, source: str = "pubmedqa/ori_pqal.json") -> list[PubItem]:
    """PQA-L items (dict PMID -> fields) as :class:`PubItem`, sorted by PMID."""
    if not isinstance(obj, dict):
        raise InputError(
            "bad_pubmedqa", "expected a JSON object keyed by PMID", where=Location(source)
        )
    out = []
    for pmid in sorted(obj):
        v = obj[pmid]
        try:
            ctx = v["CONTEXTS"]
            out.append(
                PubItem(
                    pmid=str(pmid),
                    question=str(v["QUESTION"]),
                    abstract=" ".join(" ".join(str(c).split()) for c in ctx),
                    conclusion=" ".join(str(v["LONG_ANSWER"]).split()),
                    meshes=tuple(sorted({str(m) for m in v.get("MESHES", [])})),
                    decision=str(v["final_decision"]),
                )
            )
        except (KeyError, TypeError) as exc:
            raise InputError(
                "bad_pubmedqa",
                f"item is missing a field: {exc}",
                where=Location(source, column=str(pmid)),
            ) from None
    return out


def negate_sentence(sentence: str) -> str:
    m = _AUX.search(sentence)
    if m is None:
        return "It is not true that " + sentence[:1].lower() + sentence[1:]
    if m.group(2):  # already negative: remove the negation
        return sentence[: m.start()] + m.group(1) + sentence[m.end() :]
    return sentence[: m.end()] + " not" + sentence[m.end() :]


def negate(text: str) -> str:
    """The conclusion with every sentence negated (:data:`NEGATION_RULE`)."""
    return " ".join(negate_sentence(s) for s in split_sentences(text))


def bm25_neighbours(items: list[PubItem], queries: list[int]) -> dict[int, int]:
    """For each query item index, the index of the other item whose abstract ranks first by BM25
    (Lucene idf; ties by PMID order) with the conclusion as query."""
    bm = build_bm25([tokenize(it.abstract) for it in items])
    out = {}
    for qi in queries:
        scores = np.asarray(bm.get_scores(tokenize(items[qi].conclusion)), dtype=float)  # type: ignore[attr-defined]
        scores[qi] = -np.inf
        out[qi] = int(np.argmax(scores))  # argmax takes the first (lowest PMID) on ties
    return out


def build_pairs(
    items: list[PubItem], n: int, rng: np.random.Generator
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Sample ``n`` items (without replacement) and build every pair type for each.

    Returns the pair table (item_pmid, pair_type, label, claim, passage_pmid, passage,
    decision) sorted by (item_pmid, pair_type), and metadata stating the construction rule.
    """
    if not 1 <= n <= len(items):
        raise InputError("bad_parameter", f"n must be in [1, {len(items)}]; got {n}")
    chosen = sorted(int(i) for i in rng.choice(len(items), size=n, replace=False))
    mesh_sets = [set(it.meshes) for it in items]
    neighbours = bm25_neighbours(items, chosen)
    rows = []
    skipped_mesh = 0
    for i in chosen:
        it = items[i]

        def add(kind: str, claim: str, j: int, label: str, it: PubItem = it) -> None:
            rows.append(
                {
                    "item_pmid": it.pmid,
                    "pair_type": kind,
                    "label": label,
                    "claim": claim,
                    "passage_pmid": items[j].pmid,
                    "passage": items[j].abstract,
                    "decision": it.decision,
                }
            )

        add("positive", it.conclusion, i, "supported")
        j = int(rng.integers(0, len(items) - 1))
        add("random", it.conclusion, j + (j >= i), "unsupported")
        overlap = np.array(
            [len(mesh_sets[i] & s) if k != i else -1 for k, s in enumerate(mesh_sets)]
        )
        best = overlap.max()
        if best >= 1:
            ties = np.flatnonzero(overlap == best)
            add("mesh", it.conclusion, int(rng.choice(ties)), "unsupported")
        else:
            skipped_mesh += 1
        add("bm25", it.conclusion, neighbours[i], "unsupported")
        add("negated", negate(it.conclusion), i, "unsupported")
    frame = (
        pd.DataFrame(rows)
        .sort_values(["item_pmid", "pair_type"], kind="stable")
        .reset_index(drop=True)
    )
    meta = {
        "labels": "construction-labelled (not human gold)",
        "source": "PubMedQA PQA-L ori_pqal.json",
        "n_items_pool": len(items),
        "n_items_sampled": n,
        "skipped_mesh_no_shared_term": skipped_mesh,
        "rule": {
            "positive": "(LONG_ANSWER, own CONTEXTS joined)",
            "random": "(LONG_ANSWER, uniformly random other abstract)",
            "mesh": "(LONG_ANSWER, other abstract with most shared MeSH terms, random tie-break)",
            "bm25": "(LONG_ANSWER, other abstract ranked first by BM25 over all abstracts)",
            "negated": f"(negated LONG_ANSWER, own abstract); {NEGATION_RULE}",
        },
    }
    return frame, meta
