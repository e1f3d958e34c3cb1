"""bench/bench_cross.py's pure parts: the ratios it prints and the batches its torch row gets."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from kit.guard.verifiers.load import load_verifier
from tests.guard.tiny_model import CLAIM, PASSAGE

BENCH = Path(__file__).resolve().parents[3] / "bench"


def _bench_cross() -> object:
    sys.path.insert(0, str(BENCH))
    try:
        import bench_cross

        return bench_cross
    finally:
        sys.path.remove(str(BENCH))


def test_ratio_lines() -> None:
    bc = _bench_cross()
    rows = [
        {"mode": "onnx fp32", "short": 40.0, "full": 4.0},
        {"mode": "onnx fp32 cross-encoder alone", "short": 80.0, "full": 8.0},
        {"mode": "onnx int8", "short": 60.0, "full": 6.0},
        {"mode": "onnx int8 cross-encoder alone", "short": 100.0, "full": 10.0},
        {"mode": "torch fp32 (same weights)", "short": 20.0, "full": 4.0},
    ]
    assert bc.ratio_lines(rows, "two_signal") == [
        "int8: the card's rule (two_signal) 60.0 short pairs/s = 0.60x the cross-encoder alone "
        "(100.0): the relatedness bi-encoder takes 40% of the time",
        "fp32: the card's rule (two_signal) 40.0 short pairs/s = 0.50x the cross-encoder alone "
        "(80.0): the relatedness bi-encoder takes 50% of the time",
        "torch fp32 forward (kit.guard.torch_bert) 20.0 short pairs/s = 0.25x onnx fp32 "
        "cross-encoder alone (80.0); full passages 0.50x",
    ]
    # a card whose rule is P(entailment) has no "alone" rows: torch is set against its fp32 row
    assert bc.ratio_lines([rows[0], rows[4]], "entailment") == [
        "torch fp32 forward (kit.guard.torch_bert) 20.0 short pairs/s = 0.50x onnx fp32 (40.0); "
        "full passages 1.00x"
    ]


def test_torch_row_gets_the_fp32_graphs_batches(tiny_cross_dir: Path) -> None:
    bc = _bench_cross()
    v = load_verifier(tiny_cross_dir, "fp32", batch_size=3)
    assert v.by_tokens
    seen: list[dict[str, np.ndarray]] = []
    run = v.runner.run

    def recording(feeds):
        for f in feeds:
            seen.append(f)
            yield from run([f])

    v.runner.run = recording  # type: ignore[method-assign]
    claims = [CLAIM, "x", "Aspirin lowers stroke risk.", CLAIM, "Bleeding was common."]
    windows = [PASSAGE, "y " * 20, "Aspirin cut strokes.", PASSAGE, "Hepatocellular " * 5]
    v._pair_probs(claims, windows)
    tok = Tokenizer.from_file(str(tiny_cross_dir / "tokenizer.json"))
    got = bc._batches(tok, claims, windows, 3)
    assert len(got) == len(seen) == 2
    for a, b in zip(got, seen, strict=True):
        assert all(np.array_equal(a[k], b[k]) for k in b)


def test_ceiling_lines_say_whether_the_graphs_allow_the_target() -> None:
    bc = _bench_cross()
    ceilings = {
        "int8": {
            "pair_tokens": 131,
            "cross": 50.0,
            "window_tokens": 107,
            "window": 60.0,
            "claim_tokens": 25,
            "claim": 300.0,
            "rule": 25.0,
        },
        "fp32": {"pair_tokens": 131, "cross": 150.0, "rule": 150.0},
    }
    lines = bc.ceiling_lines(ceilings, "two_signal", 100.0)
    assert "at most 25.0 short pairs/s" in lines[0] and "is BEYOND" in lines[0]
    assert "60.0 windows/s at 107 tokens" in lines[0]
    assert "is within" in lines[1] and "windows/s" not in lines[1]


def test_graph_ceiling_is_the_harmonic_sum_of_the_graphs(
    tmp_path: Path, verifier_dir: Path
) -> None:
    from tests.guard.tiny_model import build_tiny_cross_encoder

    bc = _bench_cross()
    folder = build_tiny_cross_encoder(
        tmp_path / "two", scoring="two_signal", relatedness=verifier_dir
    )
    v = load_verifier(folder, "fp32", batch_size=2)
    c = bc.graph_ceiling(v, [CLAIM, "Aspirin cut strokes."], [PASSAGE, PASSAGE], seconds=0.05)
    assert c["window_tokens"] > c["claim_tokens"] > 0
    assert c["pair_tokens"] >= c["window_tokens"]
    want = 1.0 / (1.0 / c["cross"] + 1.0 / c["window"] + 1.0 / c["claim"])
    assert abs(c["rule"] - want) < 1e-9 and c["rule"] < min(c["cross"], c["window"])
    # seen passages: the timing helper scores through a filled embedding store
    seconds = bc._timed_seen_passages(
        folder, "fp32", {"batch_size": 2}, [CLAIM], [PASSAGE], tmp_path / "store"
    )
    assert seconds is not None and seconds > 0
    assert list((tmp_path / "store").glob("*/*/embeddings-*.parquet"))
