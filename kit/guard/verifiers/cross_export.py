"""Write a cross-encoder verifier folder: ONNX fp32 + int8, tokenizer, card.json (build step).

The folder layout is the one :func:`kit.guard.verifiers.load.load_verifier` reads for a card of kind
``cross-encoder``: the graph of :func:`kit.guard.verifiers.export.build_minilm_graph` with the
``classifier`` head, written deterministically (no timestamps, fixed initializer order), its
int8 twin from onnxruntime's per-channel dynamic quantisation, the tokenizer with pair
truncation and dynamic padding, and a card naming labels, scoring rule and window rule.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from kit.core import atomic
from kit.guard.evaluation.evaluate import CLASSES as LABELS
from kit.guard.scoring.windows import WindowSpec
from kit.guard.verifiers.card import ModelCard
from kit.guard.verifiers.card_file import card_text, check_card, write_card
from kit.guard.verifiers.export import build_minilm_graph, quantize_int8, sha256_bytes
from kit.guard.verifiers.layout import CARD_NAME, TOKENIZER_NAME
from kit.guard.verifiers.load import RELATEDNESS_DIR
from kit.guard.verifiers.rules import SCORING_RULES

CROSS_FP32 = "cross-fp32.onnx"
CROSS_INT8 = "cross-int8.onnx"


def scoring_text(scoring: str) -> str:
    if scoring == "entailment":
        return "s = P(entailment | claim, window); s = max over windows"
    if scoring == "fitted":
        return (
            "s = sigmoid(b + w . f(claim, window)), f = (P(entailment), P(contradiction), r) "
            "as named in extra.fitted, weights fitted by `kit guard adapt` on the lab's sample; "
            "s = max over windows"
        )
    if scoring == "two_signal":
        return (
            "s = (P(entailment | claim, window) + r(claim, window)) / 2, r = the relatedness "
            "bi-encoder's clip((1 + cos) / 2, 0, 1) (relatedness/, sha256-pinned); "
            "s = max over windows"
        )
    return (
        "s = (1 + P(entailment) - P(contradiction)) / 2 for (claim, window); s = max over windows"
    )


def attach_relatedness(folder: Path, relatedness: Path) -> dict[str, Any]:
    """Copy the bi-encoder card folder ``relatedness`` into ``folder/relatedness/`` (its model
    files; receipts stay behind) and return the card entry pinning it by its card's sha256
    (``extra.relatedness``, read by :func:`kit.guard.verifiers.load.load_verifier`)."""
    rel = Path(folder) / RELATEDNESS_DIR
    rel.mkdir()
    for f in sorted(Path(relatedness).iterdir()):
        if f.is_file():
            shutil.copy2(f, rel / f.name)
    rel_card = json.loads((rel / CARD_NAME).read_text())
    return {
        "folder": RELATEDNESS_DIR,
        "card_sha256": sha256_bytes((rel / CARD_NAME).read_bytes()),
        "name": rel_card.get("name", ""),
        "onnx_sha256": rel_card.get("onnx_sha256", ""),
    }


def recard_folder(src: Path, out: Path, card: dict[str, Any]) -> dict[str, Any]:
    """Write ``out`` (whole or not at all): the model files of the card folder ``src`` (and its
    relatedness subfolder; receipts stay behind), unchanged and so still matching their pinned
    sha256s, under a new ``card`` -- a verifier whose weights are kept and whose card changes
    (an imported cross-encoder with a rule fitted by ``kit guard adapt --method recombine``)."""
    check_card(card, str(Path(out) / CARD_NAME))
    with atomic.staged_dir(out) as tmp:
        tmp.chmod(0o755)
        copy_card_folder(src, tmp, skip=(CARD_NAME, "receipts"))
        (tmp / CARD_NAME).write_text(card_text(card))
    return card


def copy_card_folder(src: Path, dst: Path, skip: tuple[str, ...] = ()) -> None:
    """Copy a written card folder's files (and its relatedness subfolder) into ``dst``, but
    not the entries named in ``skip``."""
    for f in sorted(Path(src).iterdir()):
        if f.name in skip:
            continue
        if f.is_dir():
            shutil.copytree(f, Path(dst) / f.name)
        else:
            shutil.copy2(f, Path(dst) / f.name)


def write_cross_encoder(
    out: Path,
    weights: dict[str, np.ndarray],
    config: dict[str, Any],
    tokenizer_text: str,
    *,
    name: str,
    scoring: str,
    window: WindowSpec,
    labels: tuple[str, ...] = LABELS,
    validated_on: str = "",
    source: str = "",
    licence: str = "",
    extra: dict[str, Any] | None = None,
    int8: bool = True,
    relatedness: Path | None = None,
) -> dict[str, Any]:
    """Write the verifier folder ``out`` (whole or not at all) and return its card.

    ``relatedness``: a bi-encoder card folder, copied into ``out/relatedness/`` and pinned by
    its card's sha256 (the ``two_signal`` rule needs it; any rule may carry it)."""
    if scoring not in SCORING_RULES:
        raise ValueError(f"scoring must be one of {SCORING_RULES}")
    if scoring == "two_signal" and relatedness is None:
        raise ValueError("the two_signal rule needs a relatedness bi-encoder folder")
    model = build_minilm_graph(weights, config, head="classifier")
    fp32 = model.SerializeToString(deterministic=True)
    max_length = int(json.loads(tokenizer_text).get("truncation", {}).get("max_length", 256))
    with atomic.staged_dir(out) as tmp:
        tmp.chmod(0o755)
        (tmp / CROSS_FP32).write_bytes(fp32)
        more: dict[str, Any] = {
            "labels": list(labels),
            "scoring": scoring,
            "window": {
                "size": window.size,
                "stride": window.stride,
                "max_words": window.max_words,
                "unit": window.unit,
            },
            "architecture": {
                k: config[k]
                for k in (
                    "hidden_size",
                    "num_hidden_layers",
                    "num_attention_heads",
                    "intermediate_size",
                    "vocab_size",
                )
                if k in config
            },
        }
        if int8:
            quantize_int8(tmp / CROSS_FP32, tmp / CROSS_INT8)
            more["int8_file"] = CROSS_INT8
            more["int8_sha256"] = sha256_bytes((tmp / CROSS_INT8).read_bytes())
            more["int8_method"] = (
                "onnxruntime quantize_dynamic, MatMul weights, QInt8, per_channel=True"
            )
        (tmp / TOKENIZER_NAME).write_text(tokenizer_text, encoding="utf-8")
        if relatedness is not None:
            more["relatedness"] = attach_relatedness(tmp, relatedness)
        card = ModelCard(
            name=name,
            kind="cross-encoder",
            onnx_file=CROSS_FP32,
            onnx_sha256=sha256_bytes(fp32),
            tokenizer=f"{TOKENIZER_NAME} (pair encoding, truncation {max_length}, pad to longest)",
            tokenizer_sha256=sha256_bytes(tokenizer_text.encode("utf-8")),
            max_length=max_length,
            scoring_rule=scoring_text(scoring),
            window_rule=window.describe(),
            validated_on=validated_on,
            source=source,
            licence=licence,
            extra={**more, **(extra or {})},
        ).to_dict()
        write_card(tmp, card, Path(out) / CARD_NAME)
    return card
