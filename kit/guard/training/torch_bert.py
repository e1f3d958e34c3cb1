"""The cross-encoder in torch, for training only (the ``train`` extra; never imported at run time).

The module mirrors :func:`kit.guard.verifiers.export.build_minilm_graph` with ``head="classifier"`` op for
op -- BERT embeddings (word + position + token type, LayerNorm), post-LN encoder layers with
exact-erf GELU, mean pooling over real tokens, one linear layer to the class logits -- and its
``state_dict`` keys are the BERT names the ONNX builder reads, so trained weights go straight to
ONNX with no conversion step (parity is measured after every export: :mod:`kit.guard.training.train`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn


class _Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, inter: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.attention = nn.Module()
        self.attention.self = nn.Module()
        self.attention.self.query = nn.Linear(hidden, hidden)
        self.attention.self.key = nn.Linear(hidden, hidden)
        self.attention.self.value = nn.Linear(hidden, hidden)
        self.attention.output = nn.Module()
        self.attention.output.dense = nn.Linear(hidden, hidden)
        self.attention.output.LayerNorm = nn.LayerNorm(hidden, eps=eps)
        self.intermediate = nn.Module()
        self.intermediate.dense = nn.Linear(hidden, inter)
        self.output = nn.Module()
        self.output.dense = nn.Linear(inter, hidden)
        self.output.LayerNorm = nn.LayerNorm(hidden, eps=eps)
        self.dropout = nn.Dropout(0.1)

    def forward(self, h: torch.Tensor, mask_add: torch.Tensor) -> torch.Tensor:
        b, t, d = h.shape
        hd = d // self.heads
        sa = self.attention.self

        def split(x: torch.Tensor) -> torch.Tensor:
            return x.view(b, t, self.heads, hd).transpose(1, 2)

        q, k, v = split(sa.query(h)), split(sa.key(h)), split(sa.value(h))
        att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(hd)) + mask_add
        ctx = (self.dropout(att.softmax(-1)) @ v).transpose(1, 2).reshape(b, t, d)
        ao = self.attention.output
        h1 = ao.LayerNorm(self.dropout(ao.dense(ctx)) + h)
        inter = nn.functional.gelu(self.intermediate.dense(h1))
        return self.output.LayerNorm(self.dropout(self.output.dense(inter)) + h1)


class CrossEncoder(nn.Module):
    """BERT encoder + mean pooling + linear head; ``forward(ids, mask, types) -> logits``."""

    def __init__(self, config: dict[str, Any], n_classes: int = 3) -> None:
        super().__init__()
        hidden = int(config["hidden_size"])
        eps = float(config["layer_norm_eps"])
        self.embeddings = nn.Module()
        self.embeddings.word_embeddings = nn.Embedding(int(config["vocab_size"]), hidden)
        self.embeddings.position_embeddings = nn.Embedding(
            int(config["max_position_embeddings"]), hidden
        )
        self.embeddings.token_type_embeddings = nn.Embedding(
            int(config.get("type_vocab_size", 2)), hidden
        )
        self.embeddings.LayerNorm = nn.LayerNorm(hidden, eps=eps)
        self.encoder = nn.Module()
        self.encoder.layer = nn.ModuleList(
            _Layer(
                hidden, int(config["num_attention_heads"]), int(config["intermediate_size"]), eps
            )
            for _ in range(int(config["num_hidden_layers"]))
        )
        self.classifier = nn.Linear(hidden, n_classes)
        self.dropout = nn.Dropout(0.1)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
        e = self.embeddings
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = e.LayerNorm(
            e.word_embeddings(ids)
            + e.position_embeddings(pos)[None]
            + e.token_type_embeddings(types)
        )
        h = self.dropout(h)
        maskf = mask.to(h.dtype)
        mask_add = ((1.0 - maskf) * -1e4)[:, None, None, :]
        for layer in self.encoder.layer:
            h = layer(h, mask_add)
        pooled = (h * maskf[..., None]).sum(1) / maskf.sum(1, keepdim=True).clamp_min(1e-9)
        return self.classifier(self.dropout(pooled))


def from_weights(
    weights: dict[str, np.ndarray], config: dict[str, Any], n_classes: int, seed: int
) -> CrossEncoder:
    """A CrossEncoder holding ``weights`` (BERT names); a head absent from them is drawn
    N(0, 0.02^2) with torch's generator seeded by ``seed`` (BERT's initialiser range)."""
    torch.manual_seed(seed)
    model = CrossEncoder(config, n_classes)
    state = model.state_dict()
    for name in state:
        if name in weights:
            src = torch.from_numpy(np.ascontiguousarray(weights[name], dtype=np.float32))
            if tuple(src.shape) != tuple(state[name].shape):
                raise ValueError(f"{name}: shape {tuple(src.shape)} != {tuple(state[name].shape)}")
            state[name] = src
        elif name.startswith("classifier."):
            state[name] = (
                torch.randn(state[name].shape) * 0.02
                if name.endswith("weight")
                else torch.zeros(state[name].shape)
            )
        else:
            raise ValueError(f"weights lack {name}")
    model.load_state_dict(state)
    return model


def to_weights(model: CrossEncoder) -> dict[str, np.ndarray]:
    """The model's parameters as float32 numpy arrays under their BERT names."""
    return {
        k: v.detach().cpu().numpy().astype(np.float32, copy=True)
        for k, v in model.state_dict().items()
    }
