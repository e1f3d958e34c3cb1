"""Tokens and batches of the ONNX verifiers (issue 38: less work per pair, the same scores).

* :class:`Tokens` tokenizes each distinct text once (a bounded memo keyed by the text) with the
  verifier's tokenizer, padding off. A cross-encoder and its relatedness bi-encoder share one
  :class:`Tokens` when their tokenizer files are identical (the kit's default card: both are
  the MiniLM WordPiece tokenizer, truncation 256), so a claim or window tokenized for the
  bi-encoder is not tokenized again for the pair. A pair's ids are built from its two texts'
  ids -- ``[CLS] a [SEP]`` + ``b [SEP]`` with token type 1 on the second part -- when the
  tokenizer's post-processor is BERT's pair template (:func:`bert_pair_template`) and the pair
  needs no truncation; any other pair is tokenized as a pair by the tokenizer itself.
* :func:`pad_feed` pads a batch exactly as the tokenizer's own padding would (to the batch's
  longest row or a fixed length, rounded up to ``pad_to_multiple_of``, right or left), so a
  batch fed from :class:`Tokens` is byte-identical to ``encode_batch`` of the same texts.
* :func:`batch_order` decides which rows share a batch. By token length (less padding: on 256
  PubMedQA short pairs 9% padded tokens instead of 30% when sorted by characters) wherever a
  row's output does not depend on the other rows of its batch; by character length, exactly as
  before, for a graph with dynamic quantisation (:func:`scales_per_batch`): its int8 MatMuls
  quantise their input with one scale computed over the whole batch, padding included, so
  another batching gives other int8 scores (measured: up to 4.5e-3 on a probability).

Measured against the old batching (tests/guard/verifiers/test_batching.py): int8 scores byte-identical;
fp32 scores within 1e-6 (padding lengths change the order of a few float sums only).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

# ops that compute a quantisation scale from their input at run time: one scale per tensor, so
# every row of a batch (and its padding) changes every other row's result
DYNAMIC_QUANT_OPS = frozenset(
    {
        "DynamicQuantizeLinear",
        "DynamicQuantizeMatMul",
        "MatMulIntegerToFloat",
        "DynamicQuantizeLSTM",
    }
)
MEMO_TEXTS = 65_536  # texts whose ids a Tokens keeps; it starts afresh when full
Ids = np.ndarray  # int64 token ids of one row
Row = tuple[Ids, Ids]  # (input ids, token type ids)


# ----------------------------------------------------------------------------- pure parts


def scales_per_batch(op_types: Iterable[str]) -> bool:
    """Whether a graph with these op types quantises activations per batch (dynamic int8)."""
    return not DYNAMIC_QUANT_OPS.isdisjoint(op_types)


def batch_order(
    token_lengths: Sequence[int],
    char_lengths: Sequence[int],
    keys: Sequence[Hashable],
    by_tokens: bool,
) -> list[int]:
    """Row indices in batch order: sorted by (token length, key) when ``by_tokens``, else by
    (character length, key) -- the order every verifier used before issue 38. ``keys`` are
    distinct (sha256 of the texts), so the order is total and does not depend on the input's."""
    lengths = token_lengths if by_tokens else char_lengths
    return sorted(range(len(keys)), key=lambda i: (lengths[i], keys[i]))


def chunked(order: Sequence[int], batch_size: int) -> list[list[int]]:
    """``order`` cut into batches of ``batch_size`` (the last one shorter)."""
    return [list(order[b : b + batch_size]) for b in range(0, len(order), batch_size)]


def pad_feed(rows: Sequence[Row], padding: Mapping[str, Any] | None) -> dict[str, np.ndarray]:
    """input_ids, attention_mask and token_type_ids of ``rows``, padded as a tokenizers
    ``padding`` setting pads one ``encode_batch`` call: to the longest row (``length`` None) or
    to ``length``, rounded up to ``pad_to_multiple_of``, with ``pad_id`` / ``pad_type_id`` on
    the ``direction`` side. No setting (None) pads to the longest row on the right with 0."""
    pad = dict(padding or {})
    longest = max((len(ids) for ids, _ in rows), default=0)
    width = longest if pad.get("length") is None else max(longest, int(pad["length"]))
    multiple = pad.get("pad_to_multiple_of")
    if multiple:
        width = -(-width // int(multiple)) * int(multiple)
    ids = np.full((len(rows), width), int(pad.get("pad_id", 0)), dtype=np.int64)
    types = np.full((len(rows), width), int(pad.get("pad_type_id", 0)), dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    left = str(pad.get("direction", "right")).lower() == "left"
    for r, (row_ids, row_types) in enumerate(rows):
        n = len(row_ids)
        cols = slice(width - n, width) if left else slice(0, n)
        ids[r, cols] = row_ids
        types[r, cols] = row_types
        mask[r, cols] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def bert_pair_template(post_processor: Mapping[str, Any] | None) -> bool:
    """Whether a tokenizer's post-processor (its JSON) encodes a pair as ``[CLS] A [SEP] B
    [SEP]`` with type ids 0 for ``[CLS] A [SEP]`` and 1 for ``B [SEP]``, and one text as
    ``[CLS] A [SEP]`` (BertProcessing, or the same TemplateProcessing): then a pair's ids are
    its first text's ids followed by its second text's ids without their first token."""
    if not post_processor:
        return False
    if post_processor.get("type") == "BertProcessing":
        return True
    if post_processor.get("type") != "TemplateProcessing":
        return False

    def part(p: Mapping[str, Any]) -> tuple[str, str, int] | None:
        for kind in ("SpecialToken", "Sequence"):
            if kind in p:
                return kind, str(p[kind]["id"]), int(p[kind]["type_id"])
        return None

    single = [part(p) for p in post_processor.get("single", [])]
    pair = [part(p) for p in post_processor.get("pair", [])]
    if len(single) != 3 or len(pair) != 5:
        return False
    cls, seq_a, sep = single
    if cls is None or sep is None or cls[0] != "SpecialToken" or sep[0] != "SpecialToken":
        return False
    if seq_a != ("Sequence", "A", 0) or cls[2] != 0 or sep[2] != 0:
        return False
    specials = post_processor.get("special_tokens", {})
    if any(len(specials.get(name, {}).get("ids", [])) != 1 for name in (cls[1], sep[1])):
        return False
    return pair == [cls, seq_a, sep, ("Sequence", "B", 1), ("SpecialToken", sep[1], 1)]


def joined_pair(a: Ids, b: Ids, max_length: int | None) -> Row | None:
    """The pair row of two texts' single-text ids under BERT's pair template, or None when the
    pair would be truncated (the tokenizer then encodes it as a pair itself)."""
    n = len(a) + len(b) - 1
    if max_length is not None and n > max_length:
        return None
    ids = np.concatenate([a, b[1:]])
    types = np.concatenate([np.zeros(len(a), np.int64), np.ones(len(b) - 1, np.int64)])
    return ids, types


# ----------------------------------------------------------------------------- with a tokenizer


class Tokens:
    """A verifier's tokenizer, padding off, with each distinct text tokenized once.

    ``texts`` gives single-text rows, ``pairs`` pair rows; :attr:`padding` is the tokenizer's
    own padding setting, for :func:`pad_feed`. The memo holds at most :data:`MEMO_TEXTS` texts
    (it is emptied when full): ids are a function of the text alone, so what it holds never
    changes a result, only how often a text is tokenized."""

    def __init__(self, tokenizer: Any) -> None:
        from tokenizers import Tokenizer

        text = tokenizer.to_str()
        self.fingerprint = hashlib.sha256(text.encode("utf-8")).hexdigest()
        self.padding = tokenizer.padding
        self.tokenizer = Tokenizer.from_str(text)
        self.tokenizer.no_padding()
        trunc = tokenizer.truncation
        self.max_length: int | None = None if trunc is None else int(trunc["max_length"])
        self.joins_pairs = bert_pair_template(json.loads(text).get("post_processor"))
        self._memo: dict[str, Ids] = {}
        self.tokenized = 0  # texts and pairs the tokenizer actually encoded (for tests, benches)

    def texts(self, texts: Sequence[str]) -> list[Row]:
        """(ids, token type ids) of each text encoded alone, each distinct text tokenized once."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if len(self._memo) + len(todo) > MEMO_TEXTS:
            self._memo.clear()
            todo = list(dict.fromkeys(texts))
        for t, enc in zip(todo, self.tokenizer.encode_batch(todo), strict=True):
            self._memo[t] = np.asarray(enc.ids, dtype=np.int64)
        self.tokenized += len(todo)
        rows = [self._memo[t] for t in texts]
        return [(ids, np.zeros(len(ids), np.int64)) for ids in rows]

    def pairs(self, pairs: Sequence[tuple[str, str]]) -> list[Row]:
        """The pair row of each (a, b): joined from the two texts' rows where the template
        allows and nothing is truncated, else encoded as a pair by the tokenizer."""
        out: list[Row | None] = [None] * len(pairs)
        if self.joins_pairs and pairs:
            singles = self.texts([x for pair in pairs for x in pair])
            for i in range(len(pairs)):
                a, b = singles[2 * i][0], singles[2 * i + 1][0]
                out[i] = joined_pair(a, b, self.max_length)
        rest = [i for i, row in enumerate(out) if row is None]
        if rest:
            encs = self.tokenizer.encode_batch([pairs[i] for i in rest])
            self.tokenized += len(rest)
            for i, e in zip(rest, encs, strict=True):
                out[i] = (np.asarray(e.ids, np.int64), np.asarray(e.type_ids, np.int64))
        return [row for row in out if row is not None]  # every row is set by now


def graph_op_types(model: Path | bytes) -> set[str]:
    """The op types of an ONNX graph (file or bytes), subgraphs included."""
    import onnx

    proto = onnx.load_from_string(model) if isinstance(model, bytes) else onnx.load(str(model))
    types: set[str] = set()
    stack = [proto.graph]
    while stack:
        g = stack.pop()
        for node in g.node:
            types.add(node.op_type)
            for a in node.attribute:
                if a.HasField("g"):
                    stack.append(a.g)
                stack.extend(a.graphs)
    return types
