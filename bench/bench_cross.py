"""Benchmark a cross-encoder verifier: pairs/s for fp32 ONNX, int8 ONNX, torch, and two-stage.

Run: .venv/bin/python bench/bench_cross.py [--verifier data/verifier-nli] [--bi data/verifier]
     [--pairs 64] [--passages 12] [--top-k 2] [--threads 0] [--no-torch] [--out FILE.json]
     [--auc-pairs TABLE --positive SUPPORT,entailment]

Workloads, from PubMedQA PQA-L (data/raw, items in PMID order): *short* pairs are (the first
sentence of the conclusion, the abstract's first 3-sentence window), one forward pass each;
*full* pairs are (that claim, the whole abstract), read through every window of the card's window
rule (s = max over windows). Every measurement starts from a fresh verifier (empty caches) after
a warm-up on a throwaway instance. Rows:

* ``onnx fp32`` / ``onnx int8`` -- :func:`kit.guard.verifiers.load.load_verifier` on the card, under
  the card's own scoring rule (the default card's ``two_signal`` also runs its relatedness
  bi-encoder).
* ``... cross-encoder alone`` -- the same verifier under the class rule P(entailment): the
  cross-encoder's forward passes without the relatedness bi-encoder's (printed when the card's
  rule reads relatedness), so the relatedness signal's share of the time is measured, not
  assumed.
* ``torch fp32`` -- the same weights (the fp32 ONNX initializers, or ``weights.safetensors`` in
  the folder when present) in a torch forward written here to mirror
  :func:`kit.guard.verifiers.export.build_minilm_graph` (BERT encoder, additive -1e4 mask, exact GELU,
  mean pooling over real tokens, ``classifier`` head, token_type_ids), same tokenizer, the
  batches the fp32 ONNX graph gets (distinct pairs by token length,
  :mod:`kit.guard.verifiers.batching`); parity = max |logit difference| against the fp32 ONNX graph. Optional:
  skipped with a note when ``import torch`` fails.
* ``... passages seen before`` -- the card's rule when an earlier run put the passages' windows
  in the embedding store (:mod:`kit.guard.scoring.embedding_store`: new claims citing passages
  the store has embedded; the relatedness bi-encoder embeds the claims only). Printed when the
  rule reads relatedness.
* ``two-stage top-k`` -- :class:`kit.guard.verifiers.two_stage.TwoStageVerifier`: the bi-encoder
  (``--bi``; built into a temporary folder when absent) keeps the top-k windows of each passage,
  the cross-encoder judges those (full pairs only; the bi-encoder's time is included).

Ratios are pairs/s over the fp32 ONNX row (the card's rule) of the same workload; below the
table, the default rule against the cross-encoder alone (each variant) and the torch forward
against ONNX fp32 cross-encoder alone (the same work: class probabilities of the pairs). The
int8 target of issue 19 (>= 100 short pairs/s on 2 cores) is checked and printed, beside the
ceiling the graphs themselves allow on this machine (:func:`graph_ceiling`: each graph in a tight
loop at the workload's mean token length, no padding, no tokenising), so a miss says whether
the pipeline or the graphs and the hardware stand in the way. When
OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE are set, the script re-executes itself with both removed
(numpy / torch measurements would otherwise run under a forced BLAS kernel) and says so.

With ``--auc-pairs`` it also computes, on a labelled pair table (csv / parquet / jsonl with
``claim``, ``passage``, ``label``), the AUC of the full cross-encoder and of the two-stage mode
(:func:`kit.guard.verifiers.two_stage.auc_cost`) -- run it on held-out data only. No card at
``--verifier`` (minilm-nli is trained by `make reproduce`): the rows time a STAND-IN of the same
size, graph, tokenizer and rule with an untrained head (bench/standin.py, built in seconds;
every line says so; ``--no-standin``: a SKIP line and exit 0 instead). Out of pytest on purpose:
timings depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
_UNSET_NOTE = "BENCH_CROSS_UNSET_OPENBLAS"
INT8_TARGET = 100.0


def _reexec_without_openblas_overrides() -> None:
    present = {k: os.environ[k] for k in OPENBLAS_VARS if k in os.environ}
    if not present:
        return
    env = {k: v for k, v in os.environ.items() if k not in OPENBLAS_VARS}
    env[_UNSET_NOTE] = ",".join(f"{k}={v}" for k, v in sorted(present.items()))
    os.execve(sys.executable, [sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]], env)


def load_workloads(raw: Path, n_short: int, n_full: int) -> dict[str, tuple[list[str], list[str]]]:
    from kit.guard.scoring.windows import passage_windows
    from kit.guard.training.pairs import items_from_pqal
    from kit.registry.fetch import raw_path
    from kit.runs.sentences import split_sentences

    items = items_from_pqal(json.loads(raw_path("pubmedqa/ori_pqal.json", raw).read_text()))
    short_c, short_w, full_c, full_p = [], [], [], []
    for it in items:
        wins = passage_windows(it.abstract)
        sents = split_sentences(it.conclusion)
        if not (wins and sents):
            continue
        if len(short_c) < n_short:
            short_c.append(sents[0])
            short_w.append(wins[0])
        if len(full_c) < n_full:
            full_c.append(sents[0])
            full_p.append(it.abstract)
        if len(short_c) == n_short and len(full_c) == n_full:
            break
    return {"short": (short_c, short_w), "full": (full_c, full_p)}


# --- the torch twin of the ONNX classifier graph -------------------------------------------


def read_weights(vdir: Path, onnx_path: Path) -> tuple[dict[str, np.ndarray], int, float]:
    """(BERT-named float32 weights with W as [out, in], heads, LayerNorm eps).

    From ``weights.safetensors`` in the folder when present (a ``bert.`` prefix is dropped),
    else from the fp32 ONNX initializers (MatMul weights are stored transposed there).
    """
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_path))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    heads = int(inits["shape_heads"][2])
    eps = next(
        float(a.f)
        for n in model.graph.node
        if n.op_type == "LayerNormalization"
        for a in n.attribute
        if a.name == "epsilon"
    )
    st = vdir / "weights.safetensors"
    if st.is_file():
        from safetensors.numpy import load_file

        w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in load_file(str(st)).items()}
        return w, heads, eps
    w: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": inits["word_emb"],
        "embeddings.position_embeddings.weight": inits["pos_emb"],
        "embeddings.token_type_embeddings.weight": inits["type_emb"],
    }
    for name, arr in inits.items():
        if name.endswith(".weight_t"):
            w[name.removesuffix("_t")] = np.ascontiguousarray(arr.T)
        elif name.startswith(("embeddings.", "encoder.", "classifier.")):
            w[name] = arr
    return w, heads, eps


class TorchCross:
    """The kit's own torch cross-encoder (kit.guard.training.torch_bert) holding the card's weights."""

    def __init__(self, weights: dict[str, np.ndarray], heads: int, eps: float) -> None:
        import torch

        from kit.guard.training.torch_bert import from_weights

        emb = weights["embeddings.word_embeddings.weight"]
        config = {
            "hidden_size": emb.shape[1],
            "vocab_size": emb.shape[0],
            "max_position_embeddings": weights["embeddings.position_embeddings.weight"].shape[0],
            "type_vocab_size": weights["embeddings.token_type_embeddings.weight"].shape[0],
            "intermediate_size": weights["encoder.layer.0.intermediate.dense.weight"].shape[0],
            "num_hidden_layers": len(
                {k.split(".")[2] for k in weights if k.startswith("encoder.layer.")}
            ),
            "num_attention_heads": heads,
            "layer_norm_eps": eps,
        }
        self.torch = torch
        self.model = from_weights(
            weights, config, weights["classifier.weight"].shape[0], seed=0
        ).eval()

    def logits(
        self, input_ids: np.ndarray, attention_mask: np.ndarray, token_type_ids: np.ndarray
    ) -> np.ndarray:
        t = self.torch
        with t.inference_mode():
            out = self.model(
                t.from_numpy(input_ids), t.from_numpy(attention_mask), t.from_numpy(token_type_ids)
            )
        return out.numpy()


def _batches(tok: Any, claims: list[str], windows: list[str], batch_size: int) -> list[dict]:
    """The distinct pairs in the batches an fp32 OnnxCrossEncoder feeds its graph (by token
    length, padded as the tokenizer pads: kit.guard.verifiers.batching)."""
    import hashlib

    from kit.guard.verifiers.batching import Tokens, batch_order, chunked, pad_feed

    pairs = sorted(set(zip(claims, windows, strict=True)))
    tokens = Tokens(tok)
    rows = tokens.pairs(pairs)
    keys = [
        (hashlib.sha256(c.encode()).hexdigest(), hashlib.sha256(w.encode()).hexdigest())
        for c, w in pairs
    ]
    order = batch_order(
        [len(ids) for ids, _ in rows], [len(c) + len(w) for c, w in pairs], keys, by_tokens=True
    )
    return [
        pad_feed([rows[i] for i in chunk], tokens.padding) for chunk in chunked(order, batch_size)
    ]


def torch_rows(
    vdir: Path, card: dict, work: dict, window: Any, batch_size: int, threads: int
) -> tuple[dict[str, dict[str, float]], str]:
    try:
        import torch
    except ImportError:
        return {}, "torch not installed: no torch row (pip install -e '.[bench]')"
    from tokenizers import Tokenizer

    from kit.guard.scoring.windows import passage_windows
    from kit.guard.verifiers.session import make_session

    if threads:
        torch.set_num_threads(threads)
    onnx_path = vdir / card["onnx_file"]
    weights, heads, eps = read_weights(vdir, onnx_path)
    model = TorchCross(weights, heads, eps)
    tok = Tokenizer.from_file(str(vdir / card.get("tokenizer_file", "tokenizer.json")))
    rows: dict[str, dict[str, float]] = {}
    claims, wins = work["short"]
    batches = _batches(tok, claims, wins, batch_size)
    sess = make_session(onnx_path, "cpu", threads)
    names = {i.name for i in sess.get_inputs()}
    gap = 0.0
    for feed in batches:
        (ref,) = sess.run(None, {k: v for k, v in feed.items() if k in names})
        gap = max(gap, float(np.max(np.abs(model.logits(**feed) - ref))))
    model.logits(**batches[0])  # warm-up
    t = time.perf_counter()
    for feed in _batches(tok, claims, wins, batch_size):  # tokenisation timed, as in ONNX rows
        model.logits(**feed)
    rows["short"] = {"seconds": time.perf_counter() - t, "pairs": len(claims), "parity": gap}
    fc, fp = work["full"]
    t = time.perf_counter()
    flat_c, flat_w = [], []
    for c, p in zip(fc, fp, strict=True):
        for w in passage_windows(p, window):
            flat_c.append(c)
            flat_w.append(w)
    for feed in _batches(tok, flat_c, flat_w, batch_size):
        model.logits(**feed)
    rows["full"] = {"seconds": time.perf_counter() - t, "pairs": len(fc), "windows": len(flat_w)}
    return rows, f"torch {torch.__version__}, {torch.get_num_threads()} threads"


# --- the benchmark ---------------------------------------------------------------------------


def _timed_score(v: Any, claims: list[str], texts: list[str]) -> float:
    """Seconds to score the pairs from empty caches (one warm-up on other text first)."""
    for part in (getattr(v, "bi", None), getattr(v, "cross", None), v):
        if part is not None and hasattr(part, "_cache"):
            part._cache.clear()
    v.score([c + " (warm-up)" for c in claims[:4]], [x + " (warm-up)" for x in texts[:4]])
    for part in (getattr(v, "bi", None), getattr(v, "cross", None), v):
        if part is not None and hasattr(part, "_cache"):
            part._cache.clear()
    t = time.perf_counter()
    v.score(claims, texts)
    return time.perf_counter() - t


def _timed_seen_passages(
    folder: Path,
    variant: str,
    opts: dict[str, Any],
    claims: list[str],
    texts: list[str],
    store: Path,
) -> float | None:
    """Seconds for the card's rule when an earlier run put the passages' windows in the
    embedding store (new claims citing seen passages); None when the rule reads no
    relatedness model. The store is filled and read outside the timing."""
    from kit.guard.scoring.embedding_store import bind_embeddings
    from kit.guard.scoring.windows import passage_windows
    from kit.guard.verifiers.load import load_verifier

    earlier = load_verifier(folder, variant, **opts)
    if not reads_relatedness(earlier) or earlier.relatedness is None:
        return None
    bind_embeddings(earlier, store)
    earlier.relatedness.embed([w for t in texts for w in passage_windows(t, earlier.window)])
    v = load_verifier(folder, variant, **opts)
    bind_embeddings(v, store)
    return _timed_score(v, claims, texts)


def _rate(session: Any, inputs: set[str], rows: int, length: int, seconds: float) -> float:
    """Rows/s of ``session`` on one [rows, length] batch of ordinary word pieces, no padding."""
    feed = {
        "input_ids": np.full((rows, length), 2000, dtype=np.int64),
        "attention_mask": np.ones((rows, length), dtype=np.int64),
        "token_type_ids": np.zeros((rows, length), dtype=np.int64),
    }
    feed = {k: v for k, v in feed.items() if k in inputs}
    session.run(None, feed)
    n, t = 0, time.perf_counter()
    while time.perf_counter() - t < seconds:
        session.run(None, feed)
        n += rows
    return n / (time.perf_counter() - t)


def graph_ceiling(v: Any, claims: list[str], windows: list[str], seconds: float = 2.0) -> dict:
    """What the graphs alone allow on this machine for the short workload: each graph run in a
    tight loop on batches of the workload's mean token length with no padding, no tokenising
    and no Python between runs. The card's rule needs one cross-encoder pass per pair and, when
    it reads relatedness, the bi-encoder's embedding of the claim and of the window, so its
    ceiling is 1 / (1 / cross + 1 / window + 1 / claim) pairs/s."""
    tok = v.tokens
    pair_len = round(
        float(np.mean([len(ids) for ids, _ in tok.pairs(list(zip(claims, windows, strict=True)))]))
    )
    out = {"pair_tokens": pair_len}
    out["cross"] = _rate(v.session, v.inputs, v.batch_size, pair_len, seconds)
    rel = v.relatedness if reads_relatedness(v) else None
    if rel is None:
        out["rule"] = out["cross"]
        return out
    bi_inputs = {i.name for i in rel.session.get_inputs()}
    for name, texts in (("window", windows), ("claim", claims)):
        length = round(float(np.mean([len(ids) for ids, _ in rel.tokens.texts(texts)])))
        out[f"{name}_tokens"] = length
        out[name] = _rate(rel.session, bi_inputs, rel.batch_size, length, seconds)
    out["rule"] = 1.0 / (1.0 / out["cross"] + 1.0 / out["window"] + 1.0 / out["claim"])
    return out


def _bi_dir(arg: Path | None, tmp: Path) -> Path:
    if arg is not None and (arg / "card.json").is_file():
        return arg
    from kit.guard.verifiers.export import build_verifier

    out = tmp / "bi"
    build_verifier(out)
    return out


def reads_relatedness(v: Any) -> bool:
    """Whether a cross-encoder's rule runs its relatedness bi-encoder beside it."""
    fitted = getattr(v, "fitted", None)
    return v.scoring == "two_signal" or (
        v.scoring == "fitted" and fitted is not None and "relatedness" in fitted.features
    )


def ceiling_lines(ceilings: dict[str, dict], rule: str, target: float) -> list[str]:
    """One line per variant: the graphs' own pairs/s (:func:`graph_ceiling`) and what they allow
    the card's rule, against the target."""
    out = []
    for variant, c in ceilings.items():
        parts = [f"cross-encoder {c['cross']:.1f} pairs/s at {c['pair_tokens']} tokens"]
        if "window" in c:
            parts.append(f"bi-encoder {c['window']:.1f} windows/s at {c['window_tokens']} tokens")
            parts.append(f"{c['claim']:.1f} claims/s at {c['claim_tokens']} tokens")
        verdict = "within" if c["rule"] >= target else "BEYOND"
        out.append(
            f"{variant} ceiling of the graphs on this machine (no padding, no tokenising): "
            f"{'; '.join(parts)} -> the card's rule ({rule}) at most {c['rule']:.1f} short "
            f"pairs/s; the {target:.0f} pairs/s target is {verdict} what these graphs allow here"
        )
    return out


def ratio_lines(rows: list[dict[str, Any]], rule: str) -> list[str]:
    """The ratios issue 38 asks for, from the table's rows: the card's rule against the
    cross-encoder alone per variant (the relatedness signal's share of the time), and the torch
    forward against ONNX fp32 doing the same work (class probabilities only)."""
    by = {r["mode"]: r for r in rows}
    out = []
    for variant in ("int8", "fp32"):
        full, alone = by.get(f"onnx {variant}"), by.get(f"onnx {variant} cross-encoder alone")
        if full is None or alone is None:
            continue
        ratio = full["short"] / alone["short"]
        out.append(
            f"{variant}: the card's rule ({rule}) {full['short']:.1f} short pairs/s = "
            f"{ratio:.2f}x the cross-encoder alone ({alone['short']:.1f}): the relatedness "
            f"bi-encoder takes {1 - ratio:.0%} of the time"
        )
    torch_row = by.get("torch fp32 (same weights)")
    onnx = by.get("onnx fp32 cross-encoder alone") or by.get("onnx fp32")
    if torch_row is not None and onnx is not None:
        out.append(
            f"torch fp32 forward (kit.guard.torch_bert) {torch_row['short']:.1f} short pairs/s = "
            f"{torch_row['short'] / onnx['short']:.2f}x {onnx['mode']} ({onnx['short']:.1f}); "
            f"full passages {torch_row['full'] / onnx['full']:.2f}x"
        )
    return out


def read_pair_table(path: Path) -> Any:
    import pandas as pd

    from kit.core.errors import InputError, Location

    suffix = path.suffix.lower()
    if suffix == ".parquet":
        df = pd.read_parquet(path)
    elif suffix in (".jsonl", ".ndjson"):
        df = pd.read_json(path, lines=True)
    else:
        df = pd.read_csv(path)
    missing = [c for c in ("claim", "passage", "label") if c not in df.columns]
    if missing:
        raise InputError(
            "missing_column", f"pair table lacks {', '.join(missing)}", where=Location(str(path))
        )
    return df


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--verifier", type=Path, default=Path("data/verifier-nli"))
    ap.add_argument("--bi", type=Path, default=Path("data/verifier"))
    ap.add_argument("--raw", type=Path, default=Path("data/raw"))
    ap.add_argument("--pairs", type=int, default=64, help="short pairs")
    ap.add_argument("--passages", type=int, default=12, help="full-passage pairs")
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument(
        "--no-standin",
        action="store_true",
        help="no card at --verifier: SKIP instead of timing a stand-in (bench/standin.py)",
    )
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--auc-pairs", type=Path, default=None)
    ap.add_argument("--positive", default="SUPPORT,SUPPORTS,entailment,supported,1,True")
    args = ap.parse_args()

    tmp = tempfile.TemporaryDirectory()
    card_path = args.verifier / "card.json"
    standin = False
    if not card_path.is_file():
        if args.no_standin:
            print(f"SKIP bench_cross: no cross-encoder card at {card_path} (make reproduce)")
            return 0
        from standin import build_standin

        print(
            f"bench_cross: no card at {card_path} (make reproduce trains minilm-nli); timing a "
            "STAND-IN of the same size, graph, tokenizer and rule with an untrained head "
            "(bench/standin.py): speeds hold for the trained card, its scores do not",
            file=sys.stderr,
        )
        bi_standin = _bi_dir(args.bi, Path(tmp.name))
        args.verifier = build_standin(Path(tmp.name) / "standin", bi_dir=bi_standin)
        card_path = args.verifier / "card.json"
        standin = True
    card = json.loads(card_path.read_text())
    if card.get("kind") != "cross-encoder":
        print(f"SKIP bench_cross: {card_path} is a {card.get('kind')!r} card, not a cross-encoder")
        return 0
    unset = os.environ.get(_UNSET_NOTE)
    if unset:
        print(
            f"note: re-executed with {unset} removed from the environment (BLAS kernels chosen "
            "by the library, as for onnxruntime)",
            file=sys.stderr,
        )

    from kit.guard.verifiers.load import load_verifier
    from kit.guard.verifiers.two_stage import TwoStageVerifier, auc_cost

    bi_dir = _bi_dir(args.bi, Path(tmp.name))
    work = load_workloads(args.raw, args.pairs, args.passages)
    opts = {"batch_size": args.batch_size, "threads": args.threads}
    variants = ["fp32"] + (["int8"] if "int8_file" in card.get("extra", {}) else [])
    t_start = time.perf_counter()
    rows: list[dict[str, Any]] = []
    ceilings: dict[str, dict] = {}
    window = None
    rule = card.get("extra", {}).get("scoring", "entailment")
    for variant in variants:
        v = load_verifier(args.verifier, variant, **opts)
        dt_s = _timed_score(v, *work["short"])
        dt_f = _timed_score(v, *work["full"])
        window = v.window
        rows.append(
            {
                "mode": f"onnx {variant}",
                "short": len(work["short"][0]) / dt_s,
                "full": len(work["full"][0]) / dt_f,
                "note": f"the card's rule, {rule}",
            }
        )
        store = Path(tmp.name) / f"store-{variant}"
        seen = {
            w: _timed_seen_passages(args.verifier, variant, opts, *work[w], store)
            for w in ("short", "full")
        }
        if seen["short"] is not None and seen["full"] is not None:
            rows.append(
                {
                    "mode": f"onnx {variant}, passages seen before",
                    "short": len(work["short"][0]) / seen["short"],
                    "full": len(work["full"][0]) / seen["full"],
                    "note": "the card's rule; the windows' embeddings from the embedding store "
                    "(new claims citing passages an earlier run embedded)",
                }
            )
        ceilings[variant] = graph_ceiling(v, *work["short"])
        if reads_relatedness(v):
            alone = load_verifier(args.verifier, variant, **opts)
            alone.scoring = "entailment"  # class probabilities only: no relatedness pass
            rows.append(
                {
                    "mode": f"onnx {variant} cross-encoder alone",
                    "short": len(work["short"][0]) / _timed_score(alone, *work["short"]),
                    "full": len(work["full"][0]) / _timed_score(alone, *work["full"]),
                    "note": "P(entailment): no relatedness bi-encoder",
                }
            )
        ts = TwoStageVerifier(load_verifier(bi_dir, variant, **opts), v, top_k=args.top_k)
        dt_2 = _timed_score(ts, *work["full"])
        st = ts.last_stats
        rows.append(
            {
                "mode": f"two-stage top-{args.top_k} ({variant} bi + {variant} cross)",
                "short": None,
                "full": len(work["full"][0]) / dt_2,
                "note": f"cross-encodes {st['judged']} of {st['windows']} windows",
            }
        )
        print(f"{variant}: done at {time.perf_counter() - t_start:.0f}s", file=sys.stderr)
    torch_note = "skipped (--no-torch)"
    if not args.no_torch:
        trows, torch_note = torch_rows(
            args.verifier, card, work, window, args.batch_size, args.threads
        )
        if trows:
            rows.append(
                {
                    "mode": "torch fp32 (same weights)",
                    "short": trows["short"]["pairs"] / trows["short"]["seconds"],
                    "full": trows["full"]["pairs"] / trows["full"]["seconds"],
                    "note": "kit.guard.torch_bert forward, class probabilities only; max |logit "
                    f"diff| vs onnx fp32 = {trows['short']['parity']:.2e}",
                }
            )
    base = rows[0]
    from kit.guard.scoring.windows import passage_windows

    n_windows = sum(len(passage_windows(p, window)) for p in work["full"][1])
    print(f"# bench_cross: {card.get('name', args.verifier)} ({args.verifier})")
    print(
        f"machine {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
        f"threads {args.threads or 'default'}, batch {args.batch_size}; short = "
        f"{len(work['short'][0])} (claim, 3-sentence window) pairs; full = "
        f"{len(work['full'][0])} (claim, whole abstract) pairs = {n_windows} windows; "
        f"torch: {torch_note}"
    )
    print()
    print("| mode | short pairs/s | ratio vs fp32 | full pairs/s | ratio vs fp32 | note |")
    print("|---|---:|---:|---:|---:|---|")
    for r in rows:
        s = "" if r["short"] is None else f"{r['short']:.1f}"
        sr = "" if r["short"] is None else f"{r['short'] / base['short']:.2f}"
        f = "" if r["full"] is None else f"{r['full']:.1f}"
        fr = "" if r["full"] is None else f"{r['full'] / base['full']:.2f}"
        print(f"| {r['mode']} | {s} | {sr} | {f} | {fr} | {r['note']} |")
    int8 = next((r for r in rows if r["mode"] == "onnx int8"), None)
    print()
    for line in ratio_lines(rows, rule):
        print(line)
    for line in ceiling_lines(ceilings, rule, INT8_TARGET):
        print(line)
    if int8 is None:
        print("int8 target: this card has no int8 variant")
    else:
        ok = "meets" if int8["short"] >= INT8_TARGET else "MISSES"
        print(
            f"int8 target: {int8['short']:.1f} short pairs/s {ok} the >= {INT8_TARGET:.0f} "
            f"pairs/s target (on {os.cpu_count()} cpus)"
        )
    result: dict[str, Any] = {
        "card": card.get("name", str(args.verifier)),
        "standin": standin,
        "rows": rows,
        "torch": torch_note,
        "windows_full": n_windows,
        "ceilings": ceilings,
        "openblas_unset": unset or "",
    }
    if args.auc_pairs is not None:
        df = read_pair_table(args.auc_pairs)
        positive = {x.strip().lower() for x in args.positive.split(",")}
        y = df["label"].astype(str).str.strip().str.lower().isin(positive).to_numpy()
        res = auc_cost(
            load_verifier(bi_dir, "fp32", **opts),
            load_verifier(args.verifier, "fp32", **opts),
            df["claim"].astype(str).tolist(),
            df["passage"].astype(str).tolist(),
            y,
            top_k=args.top_k,
        )
        print(
            f"AUC on {args.auc_pairs} ({int(y.sum())} positive / {int((~y).sum())} other): full "
            f"{res.full.auc:.3f} [{res.full.lo:.3f}, {res.full.hi:.3f}], two-stage top-"
            f"{args.top_k} {res.two_stage.auc:.3f} [{res.two_stage.lo:.3f}, "
            f"{res.two_stage.hi:.3f}], delta {res.delta:+.3f}; cross-encoded {res.judged} of "
            f"{res.windows} windows"
        )
        result["auc"] = {
            "full": res.full.auc,
            "two_stage": res.two_stage.auc,
            "delta": res.delta,
            "judged": res.judged,
            "windows": res.windows,
        }
    print(f"total {time.perf_counter() - t_start:.0f}s", file=sys.stderr)
    if args.out:
        from kit.core import atomic

        atomic.write_text(args.out, json.dumps(result, indent=2) + "\n")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    _reexec_without_openblas_overrides()
    sys.exit(main())
