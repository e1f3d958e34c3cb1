"""Construction-labelled hard not-enough-info pairs for verifier training.

A claim paired with the passage of *another* claim of the same source that shares the most
content words with it is labelled ``neutral``: topically close, written for a different claim.
Such pairs teach a cross-encoder that relatedness is not support -- the gap the
leave-one-source-out rows showed (a verifier trained without Check-COVID ranked its NEI pairs
below the similarity bi-encoder, AUC 0.780 against 0.830).

Part of the default recipe since 2026-12-04 (:class:`kit.guard.training.train_data.Recipe`,
``hard_nei_fraction``), adopted on a measurement made before it was wired in (a driver around
``train_verifier``; README "Verifiers, and a guarantee ..."): the recipe with these pairs added
at a third of each claim-verification source, scored on the left-out source's pairs under
two_signal -- Check-COVID left out (1,504 pairs): AUC vs unsupported 0.744 (recipe without them
0.706, bi-encoder 0.703), vs NEI 0.836 (0.780 / 0.830), vs contradicted 0.653 (0.633 / 0.579);
SciFact left out: vs unsupported 0.593 (0.596 / 0.536), no gain and no loss. The board's
leave-one-source-out table (``guard_verifier_loso``; README "Verifiers") now measures the recipe
itself, on every fold.

The label is a construction, not a judgement: a neighbour's passage may, rarely, support the
claim. Every pair it writes says so in its ``pair_id`` (suffix ``-hardnei``).

Pure: a frame in, a frame out; deterministic for a seed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from kit.corpus.lexical import tokenize

SUFFIX = "-hardnei"
LABEL = "neutral"
CANDIDATES = 5  # neighbours tried, nearest first, before a claim is given up


def content_words(text: str) -> frozenset[str]:
    """The words of :func:`kit.corpus.lexical.tokenize` (lower case, its stop list removed)
    longer than two characters."""
    return frozenset(w for w in tokenize(text) if len(w) > 2)


def word_jaccard(left: list[str], right: list[str]) -> np.ndarray:
    """[len(left), len(right)] Jaccard similarity of the content-word sets of two text lists."""
    vocab: dict[str, int] = {}

    def incidence(texts: list[str]) -> tuple[list[int], list[int]]:
        rows: list[int] = []
        cols: list[int] = []
        for i, text in enumerate(texts):
            for w in sorted(content_words(text)):
                rows.append(i)
                cols.append(vocab.setdefault(w, len(vocab)))
        return rows, cols

    lr, lc = incidence(left)
    rr, rc = incidence(right)
    shape = len(vocab)
    a = sp.csr_matrix((np.ones(len(lr)), (lr, lc)), shape=(len(left), shape))
    b = sp.csr_matrix((np.ones(len(rr)), (rr, rc)), shape=(len(right), shape))
    inter = (a @ b.T).toarray()
    union = np.asarray(a.sum(axis=1)) + np.asarray(b.sum(axis=1)).T - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def hard_nei_pairs(
    pairs: pd.DataFrame,
    fraction: float,
    seed: int,
    sources: tuple[str, ...],
    known: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Hard NEI pairs for ``round(fraction * n)`` claims of each source in ``sources``.

    ``pairs`` has columns pair_id, claim, passage, label, source. For each chosen pair (drawn
    without replacement with ``seed``), the claim is paired with the passage of the same
    source's pair whose content words overlap it most (Jaccard), skipping pairs of the same
    claim text and passages the claim is already paired with -- in ``pairs`` or in ``known``
    (e.g. the whole source, every split, when ``pairs`` is a sample of it); a claim with no
    overlapping candidate among the ``CANDIDATES`` nearest is skipped. Returns the new pairs
    (same columns, label ``neutral``, pair_id + ``-hardnei``), in source then pair order.
    """
    if not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be in [0, 1]; got {fraction}")
    rng = np.random.default_rng(seed)
    paired = set(zip(pairs["claim"], pairs["passage"], strict=True))
    if known is not None:
        paired |= set(zip(known["claim"], known["passage"], strict=True))
    out = []
    for name in sources:
        part = pairs[pairs["source"] == name].reset_index(drop=True)
        n = round(fraction * len(part))
        if n == 0:
            continue
        claims, passages = part["claim"].tolist(), part["passage"].tolist()
        sim = word_jaccard(claims, passages)
        c = np.asarray(claims, dtype=object)
        sim[c[:, None] == c[None, :]] = -1.0
        for i in np.sort(rng.choice(len(part), size=n, replace=False)):
            for j in np.argsort(-sim[i], kind="stable")[:CANDIDATES]:
                if sim[i, j] > 0 and (claims[i], passages[j]) not in paired:
                    out.append(
                        (f"{part['pair_id'].iloc[i]}{SUFFIX}", claims[i], passages[j], LABEL, name)
                    )
                    break
    return pd.DataFrame(out, columns=["pair_id", "claim", "passage", "label", "source"])
