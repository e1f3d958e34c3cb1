"""An opt-in fused ONNX graph of the MiniLM encoder (issue 38, step 1 "a fast graph").

:func:`build_fused_minilm_graph` turns the weights :func:`kit.guard.verifiers.export.build_minilm_graph`
reads into the same function written with onnxruntime's ``com.microsoft`` contrib operators for
BERT encoders on CPU, so each layer is a handful of kernels instead of ~30 elementwise nodes:

* ``EmbedLayerNormalization`` -- word + position (+ token type) gather, sum and LayerNorm in one
  kernel (int32 ids). For the bi-encoder (no token_type_ids input) token type row 0 is folded
  into the position table, as the unfused graph adds it as a constant.
* ``Attention`` -- packed Q/K/V projection (weight [hidden, 3*hidden], bias [3*hidden]), scaled
  dot product, softmax and head merge; ``mask_index`` is the raw 2-D int32 attention_mask
  [batch, seq] (1 = attend, 0 = padding), which the kernel turns into the additive
  ``mask_filter_value`` (-10000, the unfused graph's -1e4) on padded keys.
* ``SkipLayerNormalization`` -- dense output bias + residual add + LayerNorm (post-LN).
* ``BiasGelu`` -- intermediate bias + exact erf GELU (not FastGelu's tanh approximation).

Pooling and heads are the unfused graph's own (:mod:`kit.guard.verifiers.export`'s
``_mean_pool`` / ``_with_head``): mean over real tokens, then ``logits`` or the L2-normalised
``sentence_embedding``. Same inputs and outputs as the unfused graph, so a session feeds it the
same batches. Deterministic like the unfused graph (fixed names, fixed order, no timestamps):
the same weights give byte-identical models.

Not the default: the default verifier's graph (and so the card's ONNX sha256) is unchanged.
Note for int8: the kit's :func:`~kit.guard.verifiers.export.quantize_int8` quantises ``MatMul``
only, so in this graph the attention output and feed-forward MatMuls become int8 and the
``Attention`` node's packed QKV weight stays fp32 (:func:`quantize_fused_int8` also quantises
it, to ``QAttention``).

Measured (bench/bench_fused.py, 2 shared CPUs, 64 pairs of 100-200 tokens, 2026-12-06): fp32
parity ~5e-7 on the real weights, but no speed-up in fp32 (0.99-1.06x the unfused graph: the
time is in the MatMuls, not in the elementwise ops); int8 through ``quantize_int8`` about the
unfused int8's speed (the QKV projection left in fp32 offsets the fusion); int8 with
``QAttention`` 2.0-2.1x unfused fp32, i.e. ~1.1-1.2x unfused int8.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

from kit.core import atomic
from kit.core.errors import ConfigError
from kit.guard.verifiers.export import OPSET, _Graph, _mean_pool, _with_head

MS_DOMAIN = "com.microsoft"
MS_OPSET = 1
FUSED_OPS = ("EmbedLayerNormalization", "Attention", "SkipLayerNormalization", "BiasGelu")


def _fused_embeddings(g: _Graph, head: str) -> str:
    """``h0`` from EmbedLayerNormalization of the int32 ids (and segment ids)."""
    w = g.weights
    g.const("word_emb", w["embeddings.word_embeddings.weight"])
    pos = w["embeddings.position_embeddings.weight"]
    types = w["embeddings.token_type_embeddings.weight"]
    g.node("Cast", ["input_ids"], ["ids_i32"], to=TensorProto.INT32)
    if head == "embedding":
        g.const("pos_emb", (pos + types[0][None, :]).astype(np.float32))
        ins = ["ids_i32", "", "word_emb", "pos_emb", ""]
    else:
        g.const("pos_emb", pos)
        g.const("type_emb", types)
        g.node("Cast", ["token_type_ids"], ["types_i32"], to=TensorProto.INT32)
        ins = ["ids_i32", "types_i32", "word_emb", "pos_emb", "type_emb"]
    gamma, beta = "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"
    g.const(gamma, w[gamma].astype(np.float32))
    g.const(beta, w[beta].astype(np.float32))
    g.nodes.append(
        helper.make_node(
            "EmbedLayerNormalization",
            [*ins, gamma, beta],
            ["h0", "emb_mask_index"],
            domain=MS_DOMAIN,
            epsilon=g.eps,
        )
    )
    return "h0"


def _masks(g: _Graph) -> None:
    """``mask_i32`` (Attention's raw 2-D mask_index) and ``mask_f`` (what pooling reads)."""
    g.node("Cast", ["attention_mask"], ["mask_i32"], to=TensorProto.INT32)
    g.node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT)


def _ms(g: _Graph, op: str, inputs: list[str], outputs: list[str], **attrs: Any) -> None:
    g.nodes.append(helper.make_node(op, inputs, outputs, domain=MS_DOMAIN, **attrs))


def _matmul(g: _Graph, x: str, out: str, prefix: str) -> str:
    """x W^T (no bias: the bias goes into the fused node that follows); returns its bias name."""
    wt, b = f"{prefix}.weight_t", f"{prefix}.bias"
    g.const(wt, np.ascontiguousarray(g.weights[f"{prefix}.weight"].T))
    g.const(b, g.weights[b].astype(np.float32))
    g.node("MatMul", [x, wt], [out])
    return b


def _skip_ln(g: _Graph, x: str, skip: str, bias: str, out: str, prefix: str) -> None:
    gamma, beta = f"{prefix}.weight", f"{prefix}.bias"
    g.const(gamma, g.weights[gamma].astype(np.float32))
    g.const(beta, g.weights[beta].astype(np.float32))
    _ms(g, "SkipLayerNormalization", [x, skip, gamma, beta, bias], [out], epsilon=g.eps)


def _fused_layer(g: _Graph, h: str, i: int, heads: int) -> str:
    """Post-LN BERT layer ``i`` as Attention, MatMul + SkipLayerNormalization, MatMul +
    BiasGelu, MatMul + SkipLayerNormalization; returns the output's name."""
    p, L = f"encoder.layer.{i}", f"l{i}"
    w = g.weights
    s = f"{p}.attention.self"
    qkv_w = np.concatenate([w[f"{s}.{n}.weight"].T for n in ("query", "key", "value")], axis=1)
    qkv_b = np.concatenate([w[f"{s}.{n}.bias"] for n in ("query", "key", "value")])
    g.const(f"{s}.qkv_weight", np.ascontiguousarray(qkv_w, dtype=np.float32))
    g.const(f"{s}.qkv_bias", qkv_b.astype(np.float32))
    _ms(
        g,
        "Attention",
        [h, f"{s}.qkv_weight", f"{s}.qkv_bias", "mask_i32"],
        [f"{L}_ctx"],
        num_heads=heads,
    )
    b = _matmul(g, f"{L}_ctx", f"{L}_ao", f"{p}.attention.output.dense")
    _skip_ln(g, f"{L}_ao", h, b, f"{L}_h1", f"{p}.attention.output.LayerNorm")
    b = _matmul(g, f"{L}_h1", f"{L}_i", f"{p}.intermediate.dense")
    _ms(g, "BiasGelu", [f"{L}_i", b], [f"{L}_gelu"])
    b = _matmul(g, f"{L}_gelu", f"{L}_o", f"{p}.output.dense")
    _skip_ln(g, f"{L}_o", f"{L}_h1", b, f"{L}_out", f"{p}.output.LayerNorm")
    return f"{L}_out"


def _contrib_value_info(g: _Graph, hidden: int, inter: int) -> list[onnx.ValueInfoProto]:
    """The types and shapes of the contrib nodes' outputs, which onnx's shape inference cannot
    derive (it does not know the com.microsoft schemas); without them onnxruntime's quantiser
    cannot type the MatMuls downstream of a contrib node."""
    out = []
    for n in g.nodes:
        if n.domain != MS_DOMAIN:
            continue
        width = inter if n.op_type == "BiasGelu" else hidden
        out.append(
            helper.make_tensor_value_info(n.output[0], TensorProto.FLOAT, ["batch", "seq", width])
        )
        if n.op_type == "EmbedLayerNormalization":
            out.append(helper.make_tensor_value_info(n.output[1], TensorProto.INT32, ["batch"]))
    return out


def build_fused_minilm_graph(
    weights: dict[str, np.ndarray], config: dict[str, Any], head: str = "classifier"
) -> onnx.ModelProto:
    """The encoder of :func:`~kit.guard.verifiers.export.build_minilm_graph` (same inputs,
    outputs and heads) with onnxruntime's contrib operators; runs on onnxruntime only."""
    if head not in ("embedding", "classifier"):
        raise ConfigError(
            "bad_parameter", f"head must be 'embedding' or 'classifier'; got {head!r}"
        )
    if config.get("hidden_act") != "gelu":
        raise ConfigError("unsupported_model", f"hidden_act {config.get('hidden_act')!r} != 'gelu'")
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    g = _Graph(weights, float(config["layer_norm_eps"]))
    g.const("tiny_f", np.array(1e-9, dtype=np.float32))
    if head == "embedding":
        g.const("norm_eps", np.array(1e-12, dtype=np.float32))
    g.const("axes_1", np.array([1], dtype=np.int64))
    g.const("axes_m1", np.array([-1], dtype=np.int64))
    h = _fused_embeddings(g, head)
    _masks(g)
    for i in range(int(config["num_hidden_layers"])):
        h = _fused_layer(g, h, i, heads)
    graph = _with_head(g, _mean_pool(g, h), head, hidden)
    graph.value_info.extend(_contrib_value_info(g, hidden, int(config["intermediate_size"])))
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MS_DOMAIN, MS_OPSET)],
        producer_name="litaudit-kit",
        producer_version="1",
    )
    model.ir_version = 8  # pinned so a newer onnx package does not change the bytes
    onnx.checker.check_model(model)
    return model


def quantize_fused_int8(fp32_path: Path, out_path: Path) -> None:
    """Like :func:`~kit.guard.verifiers.export.quantize_int8` (dynamic, per output channel), with
    the ``Attention`` nodes quantised too (to ``QAttention``)."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.disable(logging.WARNING)
    try:
        with atomic.staged_file(out_path) as tmp:
            quantize_dynamic(
                str(fp32_path),
                str(tmp),
                per_channel=True,
                weight_type=QuantType.QInt8,
                op_types_to_quantize=["MatMul", "Attention"],
            )
    finally:
        logging.disable(logging.NOTSET)
