"""A construction-labelled pair sample from PubMedQA PQA-L, disjoint from an earlier one (a verb).

``kit guard pairs`` is a thin shell over :func:`sample_pairs` (step 5 of docs/architecture.md):
it reads the registry's PQA-L file, leaves out the items (and abstracts) of an earlier pair
table, and builds every pair type for the sampled items
(:func:`kit.guard.training.pairs.build_pairs`); the command validates and writes the table and
its metadata.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core import boundary
from kit.core.errors import InputError, Location


@dataclass(frozen=True)
class PairSample:
    """The pair table (schema guard_pairs, not yet validated) and its construction metadata."""

    frame: pd.DataFrame
    meta: dict[str, Any]


def sample_pairs(raw: Path, n_items: int, seed: int, exclude: Path | None = None) -> PairSample:
    """``n_items`` PQA-L items sampled with ``seed`` (each: one positive, four negatives); the
    items of ``exclude`` (a table of this verb: its item_pmid and passage_pmid) left out."""
    from kit.guard.scoring.pairtable import read_pair_table
    from kit.guard.training.pairs import build_pairs, items_from_pqal
    from kit.registry.fetch import raw_path

    src = raw_path("pubmedqa/ori_pqal.json", raw)
    items = items_from_pqal(boundary.read_json(src), str(src))
    if exclude is not None:
        earlier = read_pair_table(exclude)
        if "item_pmid" not in earlier.columns:
            raise InputError(
                "missing_column",
                "--exclude needs a table written by `kit guard pairs` (column item_pmid)",
                where=Location(str(exclude), column="item_pmid"),
            )
        drop = set(earlier["item_pmid"].astype(str)) | set(
            earlier.get("passage_pmid", earlier["item_pmid"]).astype(str)
        )
        items = [it for it in items if it.pmid not in drop]
    frame, meta = build_pairs(items, n_items, np.random.default_rng(seed))
    meta["seed"] = seed
    if exclude is not None:
        meta["excluded_items_of"] = str(exclude)
    return PairSample(frame, meta)
