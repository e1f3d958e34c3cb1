"""What a bi-encoder card folder holds: its file names and the tokenizer's length (constants).

Written by :func:`kit.guard.verifiers.export.build_verifier` (and, for ``card.json`` and the tokenizer, by
:mod:`kit.guard.verifiers.cross_export`), read by :func:`kit.guard.verifiers.card.default_card` and the verifier
loader. One home for both sides, so the writer and the reader cannot disagree and neither imports
the other.
"""

from __future__ import annotations

MAX_LENGTH = 256  # sentence_bert_config.json max_seq_length (the shipped tokenizer.json says 128)
FP32_NAME = "minilm-fp32.onnx"
INT8_NAME = "minilm-int8.onnx"
TOKENIZER_NAME = "tokenizer.json"
CARD_NAME = "card.json"
