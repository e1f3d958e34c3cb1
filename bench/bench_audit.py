"""Benchmark `kit audit`: wall time to audit N synthetic agent runs of ~10 citations each.

Run: .venv/bin/python bench/bench_audit.py [--runs 1000] [--cites 10] [--variant fp32]
     [--device cpu] [--n-cal 200] [--raw data/raw] [--verifier minilm-nli]
     [--out bench_audit.json]

The runs are built synthetically from PubMedQA PQA-L (clearly labelled SYNTHETIC; seed 0): each
run answers one item with ``--cites`` claims, items drawn from a fixed random 75% of the corpus
(the other 25% stay held out for the default calibration pairs); a claim is one sentence of a random item's
conclusion behind one of 8 lead-ins (so claims are mostly distinct, as an agent's paraphrases
are), followed by ``(PMID:x)`` where x is the item's own PMID (80%), its on-topic MeSH neighbour
(15%) or a non-existent 8-digit PMID (5%). The audit is the whole `kit audit` (validation,
L1, L2 with the verifier, conformal flags, BM25 re-attribution, behaviour, outputs) from an
empty score cache, then once more from the full cache (the resumable path). With ``--runs``
other than 1000 the 1,000-run time is extrapolated linearly from the whole audit time, and the
output says so.
Out of pytest on purpose: timings depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

LEADS = (
    "",
    "Evidence indicates that ",
    "One study reports that ",
    "According to the literature, ",
    "It has been shown that ",
    "Researchers concluded that ",
    "A clinical study found that ",
    "Data suggest that ",
)


def build_runs(raw: Path, n_runs: int, n_cites: int, seed: int = 0) -> list[dict]:
    """Synthetic agent-run records (see module doc)."""
    from kit.grade.planted import build_corpus
    from kit.guard.windows import split_sentences
    from kit.registry.loaders import pubmedqa_tables

    t = pubmedqa_tables(raw)
    corpus = build_corpus(t["pubmedqa_items"], t["pubmedqa_contexts"], t["pubmedqa_meshes"])
    rng = np.random.default_rng(seed)
    # the agent draws from 75% of the corpus; the rest stays held out for the default calibration
    full = list(corpus.pool)
    pool = sorted(full[i] for i in rng.permutation(len(full))[: int(0.75 * len(full))])
    sentences = {p: split_sentences(corpus.conclusion[p]) or [corpus.conclusion[p]] for p in pool}
    known = set(corpus.pmids)
    runs = []
    for j in range(n_runs):
        task = pool[int(rng.integers(len(pool)))]
        parts, cited = [], []
        for _ in range(n_cites):
            p = pool[int(rng.integers(len(pool)))]
            sent = sentences[p][int(rng.integers(len(sentences[p])))].rstrip(". ")
            lead = LEADS[int(rng.integers(len(LEADS)))]
            claim = lead + (sent[0].lower() + sent[1:] if lead else sent)
            u = rng.random()
            if u < 0.80:
                x = p
            elif u < 0.95:
                x = corpus.neighbour[p]
            else:
                x = str(int(rng.integers(10_000_000, 99_999_999)))
                while x in known:
                    x = str(int(rng.integers(10_000_000, 99_999_999)))
            parts.append(f"{claim} (PMID:{x}).")
            cited.append(f"PMID:{x}")
        runs.append(
            {
                "run_id": f"bench-{j:05d}",
                "task_id": f"pubmedqa-{task}",
                "model": "synthetic-agent",
                "answer": " ".join(parts),
                "cited": list(dict.fromkeys(cited)),
                "tool_calls": [
                    {"tool": "pubmed_fetch", "arguments": {"pmid": c}, "status": "ok"}
                    for c in dict.fromkeys(cited)
                ],
                "tools_enabled": True,
            }
        )
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--cites", type=int, default=10)
    ap.add_argument("--variant", default="fp32", choices=["fp32", "int8"])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--n-cal", type=int, default=200)
    ap.add_argument("--raw", type=Path, default=Path("data/raw"))
    ap.add_argument(
        "--verifier", default="minilm-nli", help="built-in name or card folder (kit guard --help)"
    )
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    from kit.audit.runner import AuditOptions, audit

    with tempfile.TemporaryDirectory(prefix="bench_audit_") as tmp:
        d = Path(tmp)
        t0 = time.perf_counter()
        runs = build_runs(args.raw, args.runs, args.cites)
        (d / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
        t_build = time.perf_counter() - t0
        opts = AuditOptions(
            runs=d / "runs.jsonl",
            out=d / "report",
            raw=args.raw,
            verifier=args.verifier,
            variant=args.variant,
            device=args.device,
            n_cal=args.n_cal,
            progress=True,
        )
        t1 = time.perf_counter()
        result = audit(opts)
        t_audit = time.perf_counter() - t1
        # a rerun: every score from the cache (the resumable path)
        t2 = time.perf_counter()
        audit(AuditOptions(**{**opts.__dict__, "progress": False}))
        t_rerun = time.perf_counter() - t2
    n_cit = result.summary["counts"]["citations"]
    report = {
        "synthetic": True,
        "runs": args.runs,
        "citations": n_cit,
        "variant": args.variant,
        "device": args.device,
        "n_cal": args.n_cal,
        "pairs_scored": result.cache_misses,
        "build_s": round(t_build, 2),
        "audit_s": round(t_audit, 2),
        "rerun_cached_s": round(t_rerun, 2),
        "runs_per_s": round(args.runs / t_audit, 3),
        "cpu_count": os.cpu_count(),
        "machine": platform.platform(),
    }
    if args.runs != 1000:
        report["audit_s_1000_runs_extrapolated"] = round(t_audit * 1000 / args.runs, 1)
        report["note"] = (
            "linear extrapolation of the whole audit time: an over-estimate, since most of the "
            "encoder work is the corpus passages' windows, embedded once whatever the run count"
        )
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
