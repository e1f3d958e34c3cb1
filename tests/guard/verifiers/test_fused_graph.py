"""The opt-in fused graph (kit.guard.verifiers.fused_graph) against the unfused one.

A tiny seeded model (tests/guard/tiny_model.py, LayerNorm gamma/beta perturbed so they matter),
a batch of rows of different true lengths padded to the longest: fp32 outputs of both heads
agree within 1e-4, a padded row scores as it does alone, rebuilds are byte-identical, the graph
is made of the fused ops it claims, and the kit's int8 quantiser accepts it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kit.guard.verifiers.export import build_minilm_graph, quantize_int8
from kit.guard.verifiers.fused_graph import FUSED_OPS, build_fused_minilm_graph
from tests.guard.tiny_model import TINY_CONFIG, tiny_weights

LENGTHS = [23, 17, 9, 3, 12]


@pytest.fixture(scope="module")
def weights() -> dict[str, np.ndarray]:
    w = tiny_weights(3)
    rng = np.random.default_rng(38)
    for k in w:
        if "LayerNorm" in k:
            w[k] = (w[k] + rng.standard_normal(w[k].shape) * 0.3).astype(np.float32)
    return w


def _feed(head: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    shape = (len(LENGTHS), max(LENGTHS))
    ids = rng.integers(100, 30000, shape).astype(np.int64)
    mask = np.zeros(shape, np.int64)
    types = np.zeros(shape, np.int64)
    for b, n in enumerate(LENGTHS):
        mask[b, :n] = 1
        ids[b, n:] = 0
        types[b, n // 2 : n] = 1
    feed = {"input_ids": ids, "attention_mask": mask}
    if head == "classifier":
        feed["token_type_ids"] = types
    return feed


def _run(model: Any, feed: dict[str, np.ndarray]) -> np.ndarray:
    import onnxruntime as ort

    data = model if isinstance(model, bytes) else model.SerializeToString()
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return sess.run(None, feed)[0]


@pytest.mark.parametrize("head", ["classifier", "embedding"])
def test_fused_matches_unfused_fp32_with_padding(weights: dict[str, np.ndarray], head: str) -> None:
    feed = _feed(head)
    ref = _run(build_minilm_graph(weights, TINY_CONFIG, head), feed)
    fused = build_fused_minilm_graph(weights, TINY_CONFIG, head)
    out = _run(fused, feed)
    assert out.shape == ref.shape
    assert float(np.max(np.abs(out - ref))) <= 1e-4
    # a padded row gives what it gives alone
    n = LENGTHS[3]
    alone = _run(fused, {k: v[3:4, :n] for k, v in feed.items()})
    assert float(np.max(np.abs(alone - out[3:4]))) <= 1e-5


@pytest.mark.parametrize("head", ["classifier", "embedding"])
def test_rebuild_is_byte_identical(weights: dict[str, np.ndarray], head: str) -> None:
    a = build_fused_minilm_graph(weights, TINY_CONFIG, head).SerializeToString(deterministic=True)
    b = build_fused_minilm_graph(weights, TINY_CONFIG, head).SerializeToString(deterministic=True)
    assert a == b


def test_graph_is_made_of_the_fused_ops(weights: dict[str, np.ndarray]) -> None:
    fused = build_fused_minilm_graph(weights, TINY_CONFIG, "classifier")
    ops = Counter(n.op_type for n in fused.graph.node)
    layers = TINY_CONFIG["num_hidden_layers"]
    assert ops["EmbedLayerNormalization"] == 1
    assert ops["Attention"] == layers
    assert ops["SkipLayerNormalization"] == 2 * layers
    assert ops["BiasGelu"] == layers
    assert not {"Erf", "Softmax", "Transpose", "LayerNormalization"} & set(ops)
    assert all(n.domain == "com.microsoft" for n in fused.graph.node if n.op_type in FUSED_OPS)
    unfused = build_minilm_graph(weights, TINY_CONFIG, "classifier")
    assert len(fused.graph.node) < len(unfused.graph.node) / 2


def test_kit_int8_quantiser_accepts_it(tmp_path: Path, weights: dict[str, np.ndarray]) -> None:
    import onnx

    fp32 = tmp_path / "fused.onnx"
    fp32.write_bytes(
        build_fused_minilm_graph(weights, TINY_CONFIG, "classifier").SerializeToString()
    )
    quantize_int8(fp32, tmp_path / "fused-int8.onnx")
    ops = Counter(n.op_type for n in onnx.load(str(tmp_path / "fused-int8.onnx")).graph.node)
    assert ops["MatMulInteger"] == 3 * TINY_CONFIG["num_hidden_layers"] + 1  # + classifier
    assert ops["Attention"] == TINY_CONFIG["num_hidden_layers"]  # QKV stays fp32
    feed = _feed("classifier")
    out = _run((tmp_path / "fused-int8.onnx").read_bytes(), feed)
    assert np.all(np.isfinite(out))


def test_bench_fused_batches_are_seeded_and_padded() -> None:
    import sys

    bench = Path(__file__).resolve().parents[3] / "bench"
    sys.path.insert(0, str(bench))
    try:
        import bench_fused
    finally:
        sys.path.remove(str(bench))
    a = bench_fused.token_batches(10, 4, 20, 30, seed=1)
    b = bench_fused.token_batches(10, 4, 20, 30, seed=1)
    assert [len(x["input_ids"]) for x in a] == [4, 4, 2]
    for x, y in zip(a, b, strict=True):
        assert all(np.array_equal(x[k], y[k]) for k in x)
        n = x["attention_mask"].sum(axis=1)
        assert n.min() >= 20 and n.max() <= 30 and x["input_ids"].shape[1] == n.max()
        assert np.all(x["input_ids"][x["attention_mask"] == 0] == 0)
