"""The verifiers' batching as it was before issue 38 (commit 7549e76), frozen as the reference
the new batching is measured against (tests/guard/verifiers/test_batching.py).

Before: each verifier sorted the texts (bi-encoder) or pairs (cross-encoder) it had to encode by
their length in characters, cut batches of ``batch_size`` and let the tokenizer tokenize and pad
each batch (pad to its longest); the cross-encoder and its relatedness bi-encoder tokenized
separately. These functions run a loaded verifier's own session, tokenizer and batch size that
way, from empty caches, and reduce like :meth:`_WindowedVerifier.score` (s = max over windows).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from kit.guard.verifiers.rules import softmax, two_signal_score
from kit.guard.verifiers.session import flatten_windows, pair_feed


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def old_embed(bi: Any, texts: Sequence[str]) -> np.ndarray:
    """L2-normalised embeddings, batched by character length (the pre-issue-38 order)."""
    keys = [_key(t) for t in texts]
    todo = sorted(dict(zip(keys, texts, strict=True)).items())
    todo.sort(key=lambda kv: (len(kv[1]), kv[0]))
    got: dict[str, np.ndarray] = {}
    for b in range(0, len(todo), bi.batch_size):
        chunk = todo[b : b + bi.batch_size]
        enc = bi.tokenizer.encode_batch([t for _, t in chunk])
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        out = bi.session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        for (k, _), v in zip(chunk, out, strict=True):
            got[k] = v
    return np.stack([got[k] for k in keys])


def old_relatedness(bi: Any, claims: Sequence[str], windows: Sequence[str]) -> np.ndarray:
    uniq = list(dict.fromkeys([*claims, *windows]))
    emb = old_embed(bi, uniq)
    index = {t: i for i, t in enumerate(uniq)}
    a = emb[[index[c] for c in claims]].astype(np.float64)
    b = emb[[index[w] for w in windows]].astype(np.float64)
    return np.clip((1.0 + np.sum(a * b, axis=1)) / 2.0, 0.0, 1.0)


def old_pair_chunks(
    claims: Sequence[str], windows: Sequence[str], batch_size: int
) -> list[list[tuple[tuple[str, str], tuple[str, str]]]]:
    """The distinct pairs, keyed by their texts' sha256, in the old batches."""
    keys = [(_key(c), _key(w)) for c, w in zip(claims, windows, strict=True)]
    todo = sorted(dict(zip(keys, zip(claims, windows, strict=True), strict=True)).items())
    todo.sort(key=lambda kv: (len(kv[1][0]) + len(kv[1][1]), kv[0]))
    return [todo[b : b + batch_size] for b in range(0, len(todo), batch_size)]


def old_pair_feeds(cross: Any, claims: Sequence[str], windows: Sequence[str]) -> list[dict]:
    """The feeds of the old batches (the tokenizer tokenizing and padding each batch)."""
    return [
        pair_feed(cross.tokenizer.encode_batch([pair for _, pair in chunk]))
        for chunk in old_pair_chunks(claims, windows, cross.batch_size)
    ]


def old_pair_probs(cross: Any, claims: Sequence[str], windows: Sequence[str]) -> np.ndarray:
    """Class probabilities, pairs batched by claim + window character length."""
    keys = [(_key(c), _key(w)) for c, w in zip(claims, windows, strict=True)]
    got: dict[tuple[str, str], np.ndarray] = {}
    for chunk in old_pair_chunks(claims, windows, cross.batch_size):
        feed = pair_feed(cross.tokenizer.encode_batch([pair for _, pair in chunk]))
        out = cross.session.run(None, {k: v for k, v in feed.items() if k in cross.inputs})[0]
        for (k, _), p in zip(chunk, softmax(np.asarray(out, dtype=np.float64)), strict=True):
            got[k] = p
    return np.stack([got[k] for k in keys])


def old_scores(verifier: Any, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
    """s per (claim, passage) as the verifier scored it before issue 38: a bi-encoder's
    similarity, or a cross-encoder's P(entailment) or two_signal rule; s = max over windows."""
    flat_c, flat_w, owner = flatten_windows(claims, passages, verifier.window)
    if hasattr(verifier, "labels"):
        probs = old_pair_probs(verifier, flat_c, flat_w)
        s = probs[:, verifier.labels.index("entailment")]
        if verifier.scoring == "two_signal":
            s = two_signal_score(s, old_relatedness(verifier.relatedness, flat_c, flat_w))
        elif verifier.scoring != "entailment":
            raise ValueError(f"reference covers entailment and two_signal, not {verifier.scoring}")
    else:
        s = old_relatedness(verifier, flat_c, flat_w)
    out = np.zeros(len(claims))
    np.maximum.at(out, np.asarray(owner, dtype=int), s)
    return out
