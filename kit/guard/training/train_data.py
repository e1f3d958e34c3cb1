"""The verifier's training and validation pairs, drawn from the registry (pure given the files).

Every pair is (claim, passage, label, source, split) with label one of
entailment / neutral / contradiction; the cross-encoder reads it as the pair (claim, passage),
the same order the verifier uses at run time.

Sources (``../shared/registry/nli/README.md`` says how each was labelled):

* the six NLI / claim-verification files of the registry, with their upstream splits; the one
  with no split (Climate-FEVER) is split here by claim id (sha256 bucket), so no claim has pairs
  on both sides;
* construction-labelled PubMedQA pairs (:mod:`kit.guard.training.pairs`; labels by construction, not
  human judgement): (conclusion, own abstract) -> entailment, (negated conclusion, own abstract)
  -> contradiction, (conclusion, random / MeSH-neighbour / BM25-nearest other abstract) ->
  neutral. Items are split by a sha256 bucket of the PMID, so validation items, their
  conclusions and their abstracts are never seen in training.
* construction-labelled hard NEI pairs (:mod:`kit.guard.training.hard_negatives`): for a third of
  each claim-verification source's sampled training pairs, the claim with the passage of
  another claim of that source sharing the most content words -> neutral (topically close, not
  its evidence). Built from training pairs only; never a (claim, passage) the source pairs in
  any split.

A PubMedQA abstract is longer than the verifier's window; its training passage is the tail of
the abstract (``TAIL_WORDS`` words, where the results sit), the size of one window.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core import boundary
from kit.core.errors import InputError, Location
from kit.guard.evaluation.evaluate import CLASSES as LABELS
from kit.guard.training.hard_negatives import hard_nei_pairs

NLI_FILES = {
    "scifact": "nli/scifact.jsonl",
    "covidfact": "nli/covidfact.jsonl",
    "check_covid": "nli/check_covid.jsonl",
    "climate_fever": "nli/climate_fever.jsonl",
    "sick": "nli/sick.jsonl",
    "snli": "nli/snli_dev_test.jsonl",
}
BIOMEDICAL = ("scifact", "covidfact", "check_covid", "pubmedqa")
TAIL_WORDS = 80
PUBMEDQA_TYPE_LABEL = {
    "positive": "entailment",
    "negated": "contradiction",
    "random": "neutral",
    "mesh": "neutral",
    "bm25": "neutral",
}


def bucket(key: str, n: int = 5) -> int:
    """A stable bucket in [0, n) from sha256(key): the held-out rule for ids without a split."""
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % n


def read_nli(raw: Path, name: str) -> pd.DataFrame:
    """One registry NLI file as (pair_id, claim, passage, label, split, source)."""
    path = Path(raw) / NLI_FILES[name]
    if not path.is_file():
        raise InputError(
            "missing_file",
            "registry file not fetched (run `kit registry fetch`)",
            where=Location(str(path)),
        )
    rows = []
    for i, obj in boundary.read_jsonl(path):
        try:
            rows.append(
                (obj["pair_id"], obj["hypothesis"], obj["premise"], obj["label"], obj["split"])
            )
        except (KeyError, TypeError) as exc:
            raise InputError(
                "bad_row", f"not a registry NLI row ({exc})", where=Location(str(path), row=i)
            ) from None
    frame = pd.DataFrame(rows, columns=["pair_id", "claim", "passage", "label", "split"])
    frame["source"] = name
    if name == "climate_fever":  # one released split: hold out 20% of claims by id
        claim_id = frame["pair_id"].str.rsplit("-", n=1).str[0]
        frame["split"] = np.where(claim_id.map(bucket) == 0, "test", "train")
    if name == "snli":  # dev trains, test validates
        frame["split"] = frame["split"].replace({"dev": "train"})
    bad = ~frame["label"].isin(LABELS)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            "bad_label",
            f"label {frame['label'].iloc[i]!r} is not one of {', '.join(LABELS)}",
            where=Location(str(path), row=i + 1, column="label"),
        )
    return frame


def tail(text: str, words: int = TAIL_WORDS) -> str:
    w = text.split()
    return " ".join(w[-words:])


def pubmedqa_pairs(raw: Path, seed: int) -> pd.DataFrame:
    """Construction-labelled PubMedQA pairs; split 'train' / 'test' by a PMID bucket."""
    from kit.guard.training.pairs import build_pairs, items_from_pqal

    path = Path(raw) / "pubmedqa/ori_pqal.json"
    items = items_from_pqal(boundary.read_json(path), str(path))
    out = []
    for split, keep in (("train", lambda b: b != 0), ("test", lambda b: b == 0)):
        part = [it for it in items if keep(bucket(it.pmid))]
        frame, _ = build_pairs(part, len(part), np.random.default_rng(seed))
        frame = frame.assign(
            pair_id="pubmedqa-" + frame["item_pmid"] + "-" + frame["pair_type"],
            label=frame["pair_type"].map(PUBMEDQA_TYPE_LABEL),
            split=split,
            source="pubmedqa",
            passage_full=frame["passage"],
            passage=frame["passage"].map(tail),
        )
        out.append(frame)
    return pd.concat(out, ignore_index=True)


@dataclass(frozen=True)
class Recipe:
    """What the default verifier is trained on and how (printed on its card)."""

    sources: tuple[str, ...] = (
        "scifact",
        "covidfact",
        "check_covid",
        "pubmedqa",
        "climate_fever",
        "sick",
        "snli",
    )
    cap_per_source: int = 1500  # at most this many training pairs a source per epoch
    epochs: int = 2
    batch_size: int = 16
    lr: float = 3e-5
    warmup: float = 0.06
    weight_decay: float = 0.01
    max_length: int = 256
    seed: int = 0
    # construction-labelled hard NEI pairs (kit.guard.training.hard_negatives): this fraction of each
    # claim-verification source's sampled pairs, its claim paired with another claim's passage
    hard_nei_fraction: float = 0.33
    hard_nei_sources: tuple[str, ...] = ("scifact", "covidfact", "check_covid", "climate_fever")


def training_pairs(
    all_pairs: pd.DataFrame, recipe: Recipe, leave_out: str | None = None
) -> pd.DataFrame:
    """The training split of ``recipe.sources`` (minus ``leave_out``), each source capped at
    ``cap_per_source`` pairs drawn with the recipe's seed, in a deterministic order, followed
    by the construction-labelled hard NEI pairs (:func:`kit.guard.training.hard_negatives.hard_nei_pairs`,
    seed + 1) built from the sampled pairs of ``hard_nei_sources``; no such pair repeats a
    (claim, passage) the source holds in any split."""
    rng = np.random.default_rng(recipe.seed)
    parts = []
    for name in recipe.sources:
        if name == leave_out:
            continue
        part = all_pairs[(all_pairs["source"] == name) & (all_pairs["split"] == "train")]
        part = part.sort_values("pair_id", kind="stable")
        if len(part) > recipe.cap_per_source:
            idx = np.sort(rng.choice(len(part), recipe.cap_per_source, replace=False))
            part = part.iloc[idx]
        parts.append(part)
    cols = ["pair_id", "claim", "passage", "label", "source"]
    base = pd.concat(parts, ignore_index=True)[cols]
    nei_sources = tuple(
        s for s in recipe.hard_nei_sources if s in recipe.sources and s != leave_out
    )
    if recipe.hard_nei_fraction <= 0 or not nei_sources:
        return base
    hard = hard_nei_pairs(
        base,
        recipe.hard_nei_fraction,
        recipe.seed + 1,
        nei_sources,
        known=all_pairs[all_pairs["source"].isin(nei_sources)],
    )
    return pd.concat([base, hard], ignore_index=True)


def validation_pairs(all_pairs: pd.DataFrame, per_source: int, seed: int) -> pd.DataFrame:
    """Held-out pairs of every source (splits dev / test, never trained on), at most
    ``per_source`` each, stratified by label."""
    rng = np.random.default_rng(seed)
    held = all_pairs[all_pairs["split"].isin(["dev", "test"])]
    parts = []
    for (_src, _lab), part in held.groupby(["source", "label"], sort=True):
        part = part.sort_values("pair_id", kind="stable")
        n_lab = held[(held["source"] == _src)]["label"].nunique()
        take = max(1, per_source // n_lab)
        if len(part) > take:
            part = part.iloc[np.sort(rng.choice(len(part), take, replace=False))]
        parts.append(part)
    return pd.concat(parts, ignore_index=True)
