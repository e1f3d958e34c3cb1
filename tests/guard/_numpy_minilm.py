"""An independent numpy forward pass of BERT + mean pooling + L2 (the parity reference).

Written from the BERT definition (Devlin et al. 2019; HF BertModel), not from the ONNX graph:
float64 throughout, finfo.min-style masking by removing padded keys, tanh-free exact GELU.
"""

from __future__ import annotations

import numpy as np
from scipy.special import erf


def _ln(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def embed_one(
    w: dict[str, np.ndarray], ids: list[int], layers: int = 6, heads: int = 12
) -> np.ndarray:
    """Sentence embedding of one unpadded token sequence."""
    W = {k: v.astype(np.float64) for k, v in w.items() if v.dtype != np.int64}
    t = len(ids)
    x = (
        W["embeddings.word_embeddings.weight"][ids]
        + W["embeddings.position_embeddings.weight"][:t]
        + W["embeddings.token_type_embeddings.weight"][0]
    )
    x = _ln(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
    d = x.shape[1] // heads
    for i in range(layers):
        p = f"encoder.layer.{i}."

        def lin(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
            return h @ W[p + name + ".weight"].T + W[p + name + ".bias"]

        q = lin(x, "attention.self.query").reshape(t, heads, d).transpose(1, 0, 2)
        k = lin(x, "attention.self.key").reshape(t, heads, d).transpose(1, 0, 2)
        v = lin(x, "attention.self.value").reshape(t, heads, d).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        a = (s / s.sum(-1, keepdims=True)) @ v
        a = a.transpose(1, 0, 2).reshape(t, heads * d)
        x = _ln(
            lin(a, "attention.output.dense") + x,
            W[p + "attention.output.LayerNorm.weight"],
            W[p + "attention.output.LayerNorm.bias"],
        )
        h = lin(x, "intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / np.sqrt(2.0)))
        x = _ln(
            lin(h, "output.dense") + x,
            W[p + "output.LayerNorm.weight"],
            W[p + "output.LayerNorm.bias"],
        )
    m = x.mean(0)
    return m / max(np.linalg.norm(m), 1e-12)
