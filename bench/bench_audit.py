"""Benchmark `kit audit`: citations/s from a cold score store and warm, at growing sizes.

Run: .venv/bin/python bench/bench_audit.py [--citations 1000,10000] [--cites 10]
     [--variant fp32] [--device cpu] [--n-cal 200] [--raw data/raw] [--verifier minilm-bi]
     [--out bench_audit.json]

The runs are built synthetically from PubMedQA PQA-L (clearly labelled SYNTHETIC; seed 0): each
run answers one item with ``--cites`` claims, items drawn from a fixed random 75% of the corpus
(the other 25% stay held out for the default calibration pairs); a claim is one sentence of a random item's
conclusion behind one of 8 lead-ins (so claims are mostly distinct, as an agent's paraphrases
are), followed by ``(PMID:x)`` where x is the item's own PMID (80%), its on-topic MeSH neighbour
(15%) or a non-existent 8-digit PMID (5%). For each size (``--citations``, runs = size /
``--cites``), in a fresh child process: the whole `kit audit` (validation, L1, L2 with the
verifier, conformal flags, BM25 re-attribution, behaviour, outputs) from an EMPTY score store,
then a re-audit of the same runs into a NEW output folder with the store warm (the shared
content-addressed store of kit.guard.score_store). Printed: citations/s cold and warm, the
warm/cold ratio (goal >= 10x), the cost growth between sizes, the child's peak memory (max RSS),
and the projected hours for 1 M citations cold on this machine (fixed + marginal cost fitted
through the two largest sizes). The machine's load average is printed: on a shared machine the
numbers are slower than on an idle one.

Verifier: a built-in name or a card folder. The bi-encoder (minilm-bi, the default here) is
built into a temp folder when data/verifier is missing (seconds, from the installed model
package); a missing cross-encoder (minilm-nli: `make reproduce` trains it) is a one-line SKIP.
Out of pytest on purpose: timings depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sys
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
    from kit.grade.pubmedqa_corpus import build_corpus
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


def _audit_size(args: argparse.Namespace, verifier: str, n_cit: int) -> dict:
    """Cold and warm audits of ``n_cit`` synthetic citations (run in a child process)."""
    import resource

    from kit.audit.runner import AuditOptions, audit

    n_runs = max(1, n_cit // args.cites)
    with tempfile.TemporaryDirectory(prefix="bench_audit_") as tmp:
        d = Path(tmp)
        runs = build_runs(args.raw, n_runs, args.cites)
        (d / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
        opts = AuditOptions(
            runs=d / "runs.jsonl",
            out=d / "cold",
            raw=args.raw,
            verifier=verifier,
            variant=args.variant,
            device=args.device,
            n_cal=args.n_cal,
            cache_dir=d / "scores",
            progress=False,
        )
        t0 = time.perf_counter()
        cold = audit(opts)
        t_cold = time.perf_counter() - t0
        t1 = time.perf_counter()
        warm = audit(AuditOptions(**{**opts.__dict__, "out": d / "warm"}))
        t_warm = time.perf_counter() - t1
        same = all(
            (d / "cold" / n).read_bytes() == (d / "warm" / n).read_bytes()
            for n in ("summary.json", "citations.csv", "runs.csv")
        )
    n = cold.summary["counts"]["citations"]
    return {
        "runs": n_runs,
        "citations": n,
        "cold_s": round(t_cold, 2),
        "warm_s": round(t_warm, 2),
        "cold_citations_per_s": round(n / t_cold, 1),
        "warm_citations_per_s": round(n / t_warm, 1),
        "warm_over_cold": round(t_cold / t_warm, 2),
        "pairs_scored_cold": cold.cache_misses,
        "pairs_scored_warm": warm.cache_misses,
        "warm_outputs_identical": same,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _verifier(spec: str, tmp: Path) -> str | None:
    """The verifier to load: ``spec``, the bi-encoder built into ``tmp`` when minilm-bi is not
    built, or None (a SKIP line printed) when a missing verifier cannot be built here."""
    from kit.errors import ConfigError
    from kit.guard.verifier import resolve_verifier

    try:
        resolve_verifier(spec)
        return spec
    except ConfigError as err:
        if spec != "minilm-bi":
            print(f"SKIP bench_audit: {err.message}")
            return None
    from kit.guard.export import build_verifier

    out = tmp / "verifier"
    print("bench_audit: minilm-bi is not built (data/verifier); building it into a temp folder")
    build_verifier(out)
    return str(out)


def project(rows: list[dict], target: int = 1_000_000) -> dict:
    """Cost growth and the projected cold hours for ``target`` citations: t(N) = a + b N through
    the two largest sizes (one size: proportional)."""
    big = sorted(rows, key=lambda r: r["citations"])[-2:]
    if len(big) == 2 and big[1]["citations"] > big[0]["citations"]:
        (n1, t1), (n2, t2) = ((r["citations"], r["cold_s"]) for r in big)
        b = max((t2 - t1) / (n2 - n1), 0.0)
        a = max(t1 - b * n1, 0.0)
        growth = f"citations x{n2 / n1:.3g} -> cold time x{t2 / t1:.3g}"
        how = "t(N) = a + b N through the two largest sizes"
    else:
        n2, t2 = big[-1]["citations"], big[-1]["cold_s"]
        a, b, growth, how = 0.0, t2 / n2, "one size only", "proportional to the one size"
    return {
        "fixed_s": round(a, 2),
        "marginal_ms_per_citation": round(1000 * b, 3),
        "cost_growth": growth,
        "projected_hours_1M_citations_cold": round((a + b * target) / 3600, 2),
        "projection": how,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--citations", default="1000,10000", help="comma list of sizes")
    ap.add_argument("--cites", type=int, default=10, help="citations per run")
    ap.add_argument("--variant", default="fp32", choices=["fp32", "int8"])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--n-cal", type=int, default=200)
    ap.add_argument("--raw", type=Path, default=Path("data/raw"))
    ap.add_argument(
        "--verifier", default="minilm-bi", help="built-in name or card folder (kit guard --help)"
    )
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    sizes = [int(x) for x in args.citations.split(",") if x.strip()]

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench_audit_v_") as vtmp:
        verifier = _verifier(args.verifier, Path(vtmp))
        if verifier is None:
            return 0
        ctx = multiprocessing.get_context("spawn")
        rows = []
        for n in sizes:
            with ctx.Pool(1) as pool:  # a fresh process per size: its own peak memory
                row = pool.apply(_audit_size, (args, verifier, n))
            rows.append(row)
            print(
                f"bench_audit: {row['citations']} citations: cold {row['cold_citations_per_s']}/s "
                f"({row['cold_s']} s), warm {row['warm_citations_per_s']}/s ({row['warm_s']} s), "
                f"warm/cold x{row['warm_over_cold']}, peak {row['peak_rss_mib']} MiB",
                file=sys.stderr,
                flush=True,
            )
    report = {
        "synthetic": True,
        "verifier": args.verifier,
        "variant": args.variant,
        "device": args.device,
        "n_cal": args.n_cal,
        "sizes": rows,
        **project(rows),
        "warm_goal_met": all(r["warm_over_cold"] >= 10 for r in rows),
        "load_average_1m_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "cpu_count": os.cpu_count(),
        "machine": platform.platform(),
        "note": "SYNTHETIC runs over the 1,000-paper PubMedQA corpus: every cited passage is "
        "embedded once, so the cold marginal cost is mostly claims; a corpus with more distinct "
        "papers costs more per citation. Timings depend on the machine's load (printed).",
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        from kit import atomic

        atomic.write_text(args.out, text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
