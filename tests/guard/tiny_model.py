"""A tiny random-weight cross-encoder (2 layers, hidden 16) built in well under a second.

Tests use it wherever a real cross-encoder card is needed; it has the real graph, the real
tokenizer and a real card, only untrained weights -- so tests assert plumbing, never accuracy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kit.guard.scoring.windows import WindowSpec
from kit.guard.verifiers.cross_export import write_cross_encoder
from kit.guard.verifiers.export import package_model_dir, tokenizer_json

TINY_CONFIG: dict[str, Any] = {
    "hidden_size": 16,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 32,
    "vocab_size": 30522,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "hidden_act": "gelu",
}


# a claim and a passage of several windows, shared by the scoring-rule tests
CLAIM = "Aspirin lowers the risk of stroke in adults."
PASSAGE = (
    "We enrolled 400 adults. Aspirin was given daily for two years. Strokes were counted by "
    "blinded assessors. The aspirin arm had fewer strokes than placebo. Bleeding was more common "
    "with aspirin. Adherence was high in both arms. Costs were not measured. Follow-up ended in "
    "2019."
)


def tiny_weights(seed: int = 0, n_classes: int = 3) -> dict[str, np.ndarray]:
    """BERT-named float32 weights for :data:`TINY_CONFIG`, drawn N(0, 0.2^2)."""
    rng = np.random.default_rng(seed)
    h, inter = TINY_CONFIG["hidden_size"], TINY_CONFIG["intermediate_size"]

    def r(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": r(TINY_CONFIG["vocab_size"], h),
        "embeddings.position_embeddings.weight": r(512, h),
        "embeddings.token_type_embeddings.weight": r(2, h),
        "embeddings.LayerNorm.weight": np.ones(h, np.float32),
        "embeddings.LayerNorm.bias": np.zeros(h, np.float32),
        "classifier.weight": r(n_classes, h),
        "classifier.bias": np.zeros(n_classes, np.float32),
    }
    for i in range(TINY_CONFIG["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        for name in ("query", "key", "value"):
            w[f"{p}.attention.self.{name}.weight"] = r(h, h)
            w[f"{p}.attention.self.{name}.bias"] = r(h)
        w[f"{p}.attention.output.dense.weight"] = r(h, h)
        w[f"{p}.attention.output.dense.bias"] = r(h)
        w[f"{p}.intermediate.dense.weight"] = r(inter, h)
        w[f"{p}.intermediate.dense.bias"] = r(inter)
        w[f"{p}.output.dense.weight"] = r(h, inter)
        w[f"{p}.output.dense.bias"] = r(h)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[f"{p}.{ln}.weight"] = np.ones(h, np.float32)
            w[f"{p}.{ln}.bias"] = np.zeros(h, np.float32)
    return w


def build_tiny_cross_encoder(
    out: Path, seed: int = 0, scoring: str = "entailment", relatedness: Path | None = None
) -> Path:
    """A cross-encoder card folder at ``out`` (random weights; labels e/n/c), with the
    bi-encoder card folder ``relatedness`` as its companion when given."""
    write_cross_encoder(
        out,
        tiny_weights(seed),
        TINY_CONFIG,
        tokenizer_json(package_model_dir(), max_length=128),
        name="tiny random cross-encoder (tests only)",
        scoring=scoring,
        window=WindowSpec(),
        validated_on="nothing: random weights for plumbing tests",
        relatedness=relatedness,
    )
    return out


def build_tiny_base(out: Path) -> Path:
    """A BERT folder like the MiniLM package's (model.safetensors, config.json, tokenizer.json)
    with tiny weights and no classifier head: a ``--base`` for training in seconds."""
    import json
    import shutil

    from safetensors.numpy import save_file

    out.mkdir(parents=True, exist_ok=True)
    w = {k: v for k, v in tiny_weights(1).items() if not k.startswith("classifier")}
    save_file(w, str(out / "model.safetensors"))
    (out / "config.json").write_text(json.dumps(TINY_CONFIG))
    shutil.copy(package_model_dir() / "tokenizer.json", out / "tokenizer.json")
    return out
