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
