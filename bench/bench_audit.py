"""Benchmark `kit audit`: citations/s cold and warm, projected hours for 1 M, Ray scaling.

Run: .venv/bin/python bench/bench_audit.py [--citations 1000,10000] [--full] [--cites 10]
     [--modes bi,cross,two-stage] [--variant int8] [--device cpu] [--n-cal 200]
     [--bi minilm-bi] [--cross minilm-nli] [--top-k 2] [--ray-pairs 200] [--no-ray]
     [--restated] [--raw data/raw] [--out bench_audit.json]

The runs are built synthetically from PubMedQA PQA-L (clearly labelled SYNTHETIC; seed 0): each
run answers one item with ``--cites`` claims, items drawn from a fixed random 75% of the corpus
(the other 25% stay held out for the default calibration pairs); a claim is one sentence of a
random item's conclusion, with one or two of its words dropped, behind one of 8 lead-ins (so
claims stay distinct at 100k citations, as an agent's paraphrases are: without the dropped
words a 100k run repeated its ~24k distinct claims, and the cold audit re-used its own scores),
followed by ``(PMID:x)`` where x is the item's own PMID (80%), its on-topic
MeSH neighbour (15%) or a non-existent 8-digit PMID (5%).

``--restated``: after the warm audit, the same citations with every claim behind "In other
words, " (another agent's wording: new (claim, passage) pairs over the same cited papers) are
audited twice from the warm store -- once from a copy with the bi-encoders' embeddings removed
(the score store alone), once with them (kit.guard.scoring.embedding_store) -- and the two
times are printed side by side: what keeping the windows' embeddings saves a re-audit.

Modes (``--modes``; ``--variant`` int8 by default): ``bi`` (minilm-bi, built into a temp folder
when data/verifier is missing), ``cross`` (minilm-nli, the default verifier; until `make
reproduce` trained it, a STAND-IN of the same size, graph, tokenizer and rule with an untrained
head, bench/standin.py, named as such on every line -- its times hold, its flags do not;
``--no-standin``: a SKIP line instead) and ``two-stage`` (the bi-encoder keeps ``--top-k``
windows per passage, the cross-encoder judges them: kit.guard.verifiers.two_stage; `kit audit` has no
option for it, so the bench loads it in place of the audit's verifier). For each mode and size
(``--citations``; ``--full`` adds 100,000; runs = size / ``--cites``), in a fresh child
process: the whole `kit audit` (validation, L1, L2, conformal flags, BM25 re-attribution,
behaviour, outputs) from an EMPTY score store, then a re-audit of the same runs into a NEW
folder with the store warm. Printed: citations/s cold and warm, the warm/cold ratio (goal >=
10x), the cost growth between sizes, the child's peak memory (max RSS), the verifier and the
smallest size's cold seconds (1,000 citations by default), and the projected hours for 1 M
citations cold (and warm) on this machine (fixed + marginal cost fitted through the two
largest sizes).

Ray scaling (needs the 'ray' extra; else a SKIP line): ``--ray-pairs`` (claim, cited abstract)
pairs drawn as the runs' citations are -- the audit's L2 workload -- scored by the mode's
verifier with the local engine and with ``--engine ray``'s runner at 1 and 2 one-CPU workers
on a Ray started in a fresh child process each time (driver peak RSS by getrusage; the Ray
processes' summed RSS sampled every 0.2 s with psutil); scores checked byte-identical to local.
From the efficiency rate(2) / (2 rate(1)) and the projections it prints how many cores bring a
1 M-citation cold audit under one hour, with its assumption (:func:`cores_statement`).

The machine's load average is printed: on a shared machine the numbers are slower than on an
idle one. Out of pytest on purpose: timings depend on the machine and on what else runs on it.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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


def _vary(sentence: str, rng: np.random.Generator) -> str:
    """``sentence`` with one or two words dropped (never the first): a paraphrase stand-in that
    makes repeated claims rare (a sentence of w words has about w^2 / 2 variants)."""
    words = sentence.split()
    if len(words) < 4:
        return sentence
    k = 1 + int(rng.integers(2))
    drop = {1 + int(i) for i in rng.choice(len(words) - 1, size=k, replace=False)}
    return " ".join(w for i, w in enumerate(words) if i not in drop)


def _draw(raw: Path, n_runs: int, n_cites: int, seed: int) -> tuple[Any, list[tuple]]:
    """The corpus and, per run, (task item, [(claim, cited PMID), ...]) (see module doc)."""
    from kit.grade.pubmedqa_corpus import build_corpus
    from kit.registry.loaders import pubmedqa_tables
    from kit.runs.sentences import split_sentences

    t = pubmedqa_tables(raw)
    corpus = build_corpus(t["pubmedqa_items"], t["pubmedqa_contexts"], t["pubmedqa_meshes"])
    rng = np.random.default_rng(seed)
    # the agent draws from 75% of the corpus; the rest stays held out for the default calibration
    full = list(corpus.pool)
    pool = sorted(full[i] for i in rng.permutation(len(full))[: int(0.75 * len(full))])
    sentences = {p: split_sentences(corpus.conclusion[p]) or [corpus.conclusion[p]] for p in pool}
    known = set(corpus.pmids)
    runs = []
    for _ in range(n_runs):
        task = pool[int(rng.integers(len(pool)))]
        cites = []
        for _ in range(n_cites):
            p = pool[int(rng.integers(len(pool)))]
            sent = _vary(sentences[p][int(rng.integers(len(sentences[p])))].rstrip(". "), rng)
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
            cites.append((claim, x))
        runs.append((task, cites))
    return corpus, runs


RESTATED = "In other words, "  # another agent's wording of the same claims (restated audits)


def build_runs(
    raw: Path, n_runs: int, n_cites: int, seed: int = 0, restate: str = ""
) -> list[dict]:
    """Synthetic agent-run records (see module doc); ``restate`` goes before every claim (the
    same citations in other words: new (claim, passage) pairs over the same passages)."""
    _, drawn = _draw(raw, n_runs, n_cites, seed)
    runs = []
    for j, (task, cites) in enumerate(drawn):
        cited = [f"PMID:{x}" for _, x in cites]
        runs.append(
            {
                "run_id": f"bench-{j:05d}",
                "task_id": f"pubmedqa-{task}",
                "model": "synthetic-agent",
                "answer": " ".join(f"{restate}{claim} (PMID:{x})." for claim, x in cites),
                "cited": list(dict.fromkeys(cited)),
                "tool_calls": [
                    {"tool": "pubmed_fetch", "arguments": {"pmid": c}, "status": "ok"}
                    for c in dict.fromkeys(cited)
                ],
                "tools_enabled": True,
            }
        )
    return runs


def build_pairs(raw: Path, n: int, seed: int = 1) -> tuple[list[str], list[str]]:
    """``n`` (claim, cited abstract) pairs drawn as the runs' citations are (the L2 workload;
    fabricated identifiers, which have no passage, are left out)."""
    corpus, drawn = _draw(raw, n, 1, seed)
    pairs = [(c, corpus.abstract.get(x, "")) for _, cites in drawn for c, x in cites]
    pairs = [(c, p) for c, p in pairs if p]
    return [c for c, _ in pairs], [p for _, p in pairs]


def _two_stage(
    load: Any, bi: str, cross: str, top_k: int, variant: str, device: str, batch_size: int = 32
) -> Any:
    """The two-stage verifier (``bi`` keeps the top-k windows, ``cross`` judges them), both
    parts loaded by ``load`` (``kit.guard.verifiers.load.load_verifier``'s signature)."""
    from kit.guard.verifiers.two_stage import TwoStageVerifier

    parts = [load(x, variant, device, batch_size) for x in (bi, cross)]
    return TwoStageVerifier(parts[0], parts[1], top_k=top_k)


def _use_two_stage(bi: str, cross: str, top_k: int) -> None:
    """Make ``load_verifier(cross, ...)`` in this (child) process return the two-stage verifier
    of ``bi`` and ``cross`` (``kit audit`` has no two-stage option; the bench measures what it
    would cost); every other spec (the card's own relatedness folder among them) loads as
    before. The audit imports ``load_verifier`` from its module at call time, so patching the
    module attribute reaches it (tests/audit/test_audit_pipeline.py pins that)."""
    import kit.guard.verifiers.load as kv

    original = kv.load_verifier

    def load(
        spec: Any,
        variant: str = "fp32",
        device: str = "cpu",
        batch_size: int = 32,
        *rest: Any,
        **kw: Any,
    ) -> Any:
        if str(spec) != cross:
            return original(spec, variant, device, batch_size, *rest, **kw)
        return _two_stage(original, bi, cross, top_k, variant, device, batch_size)

    kv.load_verifier = load


def _audit_size(args: argparse.Namespace, mode: str, verifier: str, n_cit: int) -> dict:
    """Cold and warm audits of ``n_cit`` synthetic citations (run in a child process)."""
    import resource

    from kit.audit.runner import AuditOptions, audit

    if mode == "two-stage":
        bi, cross = verifier.split("|")
        _use_two_stage(bi, cross, args.top_k)
        verifier = cross
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
        restated = _restated_audits(args, opts, d, n_runs) if args.restated else {}
    n = cold.summary["counts"]["citations"]
    return {
        "verifier_name": cold.summary["verifier"]["name"],
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
        **restated,
    }


def _restated_audits(args: Any, opts: Any, d: Path, n_runs: int) -> dict[str, Any]:
    """The same citations in another agent's words, audited after the cold and warm audits:
    once from a copy of the store with the bi-encoders' embeddings removed (the score store
    alone) and once from the store as it is (scores and embeddings,
    kit.guard.scoring.embedding_store). Both score the same new pairs; the difference is the
    windows' embeddings."""
    import shutil

    from kit.audit.runner import AuditOptions, audit

    runs = build_runs(args.raw, n_runs, args.cites, restate=RESTATED)
    (d / "restated.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    shutil.copytree(d / "scores", d / "scores-only")
    dropped = 0
    for shard in (d / "scores-only").glob("*/*/embeddings-*.parquet"):
        shard.unlink()
        dropped += 1
    out: dict[str, Any] = {"embedding_shards_dropped": dropped}
    for key, store in (("scores_only", "scores-only"), ("with_embeddings", "scores")):
        o = AuditOptions(
            **{
                **opts.__dict__,
                "runs": d / "restated.jsonl",
                "out": d / f"restated-{key}",
                "cache_dir": d / store,
            }
        )
        t = time.perf_counter()
        res = audit(o)
        dt = time.perf_counter() - t
        n = res.summary["counts"]["citations"]
        out[f"restated_{key}_s"] = round(dt, 2)
        out[f"restated_{key}_citations_per_s"] = round(n / dt, 1)
        out[f"restated_{key}_pairs_scored"] = res.cache_misses
    return out


def _verifier(spec: str, tmp: Path, no_standin: bool = False) -> str | None:
    """The verifier to load: ``spec``, the bi-encoder built into ``tmp`` when minilm-bi is not
    built, a stand-in of minilm-nli (bench/standin.py) built into ``tmp`` when that is not
    built (unless ``no_standin``), or None (a SKIP line printed) when a missing verifier cannot
    be built here."""
    from kit.core.errors import ConfigError
    from kit.guard.verifiers.load import resolve_verifier

    try:
        resolve_verifier(spec)
        return spec
    except ConfigError as err:
        if spec == "minilm-nli" and not no_standin:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from standin import build_standin

            print(
                "bench_audit: minilm-nli is not built (make reproduce trains it); the cross and "
                "two-stage modes audit with a STAND-IN of the same size, graph, tokenizer and "
                "rule, untrained head (bench/standin.py): its times hold, its flags do not"
            )
            return str(build_standin(tmp / "standin-nli", bi_dir=Path(_verifier("minilm-bi", tmp))))
        if spec != "minilm-bi":
            print(f"SKIP: {err.message}")
            return None
    out = tmp / "verifier"
    if not (out / "card.json").is_file():
        from kit.guard.verifiers.export import build_verifier

        print("bench_audit: minilm-bi is not built (data/verifier); building it into a temp folder")
        build_verifier(out)
    return str(out)


def _fit(rows: list[dict], key: str) -> tuple[float, float, str]:
    """(a, b, growth) of t(N) = a + b N through the two largest sizes (one size: proportional)."""
    big = sorted(rows, key=lambda r: r["citations"])[-2:]
    n2, t2 = big[-1]["citations"], big[-1][key]
    if len(big) == 2 and big[1]["citations"] > big[0]["citations"]:
        n1, t1 = big[0]["citations"], big[0][key]
        growth = f"citations x{n2 / n1:.3g} -> time x{t2 / t1:.3g}"
        if t2 > t1:
            b = (t2 - t1) / (n2 - n1)
            return max(t1 - b * n1, 0.0), b, growth
        return 0.0, t2 / n2, growth + " (time did not grow: load noise or fixed costs dominate)"
    return 0.0, t2 / n2, "one size only"


def project(rows: list[dict], target: int = 1_000_000) -> dict:
    """Cost growth and the projected cold (and warm) hours for ``target`` citations:
    t(N) = a + b N through the two largest sizes (one size: proportional)."""
    a, b, growth = _fit(rows, "cold_s")
    aw, bw, _ = _fit(rows, "warm_s")
    fitted = "did not grow" not in growth and growth != "one size only"
    return {
        "fixed_s": round(a, 2),
        "marginal_ms_per_citation": round(1000 * b, 3),
        "cost_growth": growth,
        "projected_hours_1M_citations_cold": round((a + b * target) / 3600, 3),
        "projected_hours_1M_citations_warm": round((aw + bw * target) / 3600, 3),
        "projection": "t(N) = a + b N through the two largest sizes"
        if fitted
        else "proportional to the largest size (upper bound: its fixed costs scale too)",
    }


# ----------------------------------------------------------------------------- Ray scaling


def _ray_child(args: argparse.Namespace, mode: str, verifier: str, workers: int) -> dict:
    """Score the L2 workload pairs locally (workers 0) or on a local Ray with ``workers``
    one-CPU actors; pairs/s, driver peak RSS, the Ray processes' sampled peak RSS (a child)."""
    import hashlib
    import resource
    import threading

    from kit.guard.verifiers.load import load_verifier

    claims, passages = build_pairs(args.raw, args.ray_pairs)

    def fresh() -> Any:  # a new verifier: empty caches, so no call changes another's batches
        if mode == "two-stage":
            bi, cross = verifier.split("|")
            return _two_stage(load_verifier, bi, cross, args.top_k, args.variant, args.device)
        return load_verifier(
            verifier, args.variant, args.device, 32, threads=0 if not workers else 1
        )

    v = fresh()
    peak = {"ray": 0}
    stop = threading.Event()

    def sample() -> None:
        try:
            import psutil
        except ImportError:
            return
        me = psutil.Process()
        while not stop.wait(0.2):
            total = 0
            for p in me.children(recursive=True):
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            peak["ray"] = max(peak["ray"], total)

    probe = ([c + " (probe)" for c in claims[:2]], [p + " (probe)" for p in passages[:2]])
    overhead = 0.0
    if not workers:
        t = time.perf_counter()
        s = np.asarray(v.score(claims, passages), dtype=float)
        sec = time.perf_counter() - t
    else:
        import ray

        from kit.guard.scoring.ray_engine import ray_engine

        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        try:
            probe_v = fresh()
            with ray_engine(probe_v, workers=workers):
                # every score call starts its actors and loads the model: time that on 2 pairs
                t = time.perf_counter()
                probe_v.score(*probe)
                overhead = time.perf_counter() - t
            with ray_engine(v, workers=workers):
                t = time.perf_counter()
                s = np.asarray(v.score(claims, passages), dtype=float)
                sec = time.perf_counter() - t
        finally:
            ray.shutdown()
            stop.set()
    net = sec - overhead
    return {
        "workers": workers,
        "pairs": len(claims),
        "seconds": round(sec, 2),
        "pairs_per_s": round(len(claims) / sec, 2),
        "startup_s": round(overhead, 2),
        "pairs_per_s_net": round(len(claims) / net, 2) if net > 0 else None,
        "scores_sha256": hashlib.sha256(s.tobytes()).hexdigest(),
        "driver_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "ray_processes_peak_rss_mib": round(peak["ray"] / 2**20, 1) if workers else None,
    }


def cores_statement(proj: dict, scaling: dict, target: int = 1_000_000) -> dict:
    """How many cores bring a ``target``-citation cold audit under one hour (see module doc)."""
    rows = {r["workers"]: r for r in scaling["rows"]}
    local, r1, r2 = rows[0], rows[1], rows[2]
    if not (r1["pairs_per_s_net"] and r2["pairs_per_s_net"]):
        return {"statement": "no statement: the Ray runs were not longer than their start-up"}
    rate1 = r1["pairs_per_s_net"]
    eff = r2["pairs_per_s_net"] / (2 * rate1)
    t_cold = proj["projected_hours_1M_citations_cold"] * 3600
    t_driver = proj["projected_hours_1M_citations_warm"] * 3600
    scoring_pairs = max(t_cold - t_driver, 0.0) * local["pairs_per_s"]
    assumption = (
        "the driver's work (the warm-store audit time, projected) stays serial on one core; the "
        "verifier's work (cold minus warm time, converted to L2 pairs at the local engine's "
        "measured pairs/s) is spread over N one-CPU Ray workers at the 2-worker scaling "
        f"efficiency measured here ({eff:.2f}; rates net of each call's actor start and model "
        "load, which a long run amortises), assumed to hold at N (optimistic: driver-side "
        "tokenisation and Ray's overhead grow with N)"
    )
    if t_driver >= 3600:
        n = None
        text = (
            f"no number of cores: the driver's serial work alone is projected at "
            f"{t_driver / 3600:.2f} h for {target:,} citations"
        )
    elif eff <= 0:
        n, text = None, "no statement: the measured efficiency is 0"
    else:
        n = max(1, math.ceil(scoring_pairs / (eff * rate1 * (3600 - t_driver))))
        text = (
            f"about {n + 1} cores ({n} Ray workers + 1 driver core) bring a {target:,}-citation "
            f"cold audit under one hour"
        )
    return {
        "efficiency_2_workers": round(eff, 3),
        "workers_needed": n,
        "statement": text,
        "assumption": assumption,
    }


def _child(fn: Any, *a: Any) -> Any:
    """``fn(*a)`` in a fresh spawned process (its own peak memory, its own Ray)."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(fn, a)


def _mode_verifiers(args: argparse.Namespace, tmp: Path) -> dict[str, str]:
    """mode -> verifier spec (two-stage: 'BI|CROSS'); a SKIP line for each mode not built."""
    want = [m.strip() for m in args.modes.split(",") if m.strip()]
    bi = _verifier(args.bi, tmp) if {"bi", "two-stage"} & set(want) else None
    cross = None
    if {"cross", "two-stage"} & set(want):
        cross = _verifier(args.cross, tmp, args.no_standin)
        if cross is None:
            print(
                "SKIP bench_audit cross-encoder and two-stage modes: train it with make reproduce"
            )
    out: dict[str, str] = {}
    for m in want:
        if m == "bi" and bi:
            out[m] = bi
        elif m == "cross" and cross:
            out[m] = cross
        elif m == "two-stage" and bi and cross:
            out[m] = f"{bi}|{cross}"
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--citations", default="1000,10000", help="comma list of sizes")
    ap.add_argument("--full", action="store_true", help="add 100,000 citations to the sizes")
    ap.add_argument("--modes", default="bi,cross,two-stage", help="bi, cross, two-stage")
    ap.add_argument("--cites", type=int, default=10, help="citations per run")
    ap.add_argument("--variant", default="int8", choices=["fp32", "int8"])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--n-cal", type=int, default=200)
    ap.add_argument("--raw", type=Path, default=Path("data/raw"))
    ap.add_argument("--bi", default="minilm-bi", help="bi-encoder: built-in name or card folder")
    ap.add_argument("--cross", default="minilm-nli", help="cross-encoder: name or card folder")
    ap.add_argument("--top-k", type=int, default=2, help="two-stage: windows kept per pair")
    ap.add_argument("--ray-pairs", type=int, default=200, help="L2 pairs of the Ray scaling")
    ap.add_argument("--no-ray", action="store_true", help="skip the Ray scaling section")
    ap.add_argument(
        "--restated",
        action="store_true",
        help="after the warm audit, audit the same citations in other words twice: from the "
        "store without the bi-encoders' embeddings and from the store with them (the embedding "
        "store's effect on a re-audit of new claims over the same papers)",
    )
    ap.add_argument(
        "--no-standin",
        action="store_true",
        help="minilm-nli not built: SKIP the cross modes instead of a stand-in (bench/standin.py)",
    )
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    sizes = [int(x) for x in args.citations.split(",") if x.strip()]
    if args.full and 100_000 not in sizes:
        sizes.append(100_000)
    try:
        import ray  # noqa: F401

        has_ray = not args.no_ray
        ray_note = "" if has_ray else "skipped (--no-ray)"
    except ImportError:
        has_ray, ray_note = (
            False,
            "SKIP Ray scaling: ray is not installed (pip install -e '.[ray]')",
        )

    load_before = os.getloadavg()
    report: dict[str, Any] = {
        "synthetic": True,
        "variant": args.variant,
        "device": args.device,
        "n_cal": args.n_cal,
        "cites_per_run": args.cites,
        "modes": {},
    }
    with tempfile.TemporaryDirectory(prefix="bench_audit_v_") as vtmp:
        verifiers = _mode_verifiers(args, Path(vtmp))
        for mode, spec in verifiers.items():
            rows = []
            for n in sizes:
                row = _child(_audit_size, args, mode, spec, n)
                rows.append(row)
                print(
                    f"bench_audit {mode}: {row['citations']} citations: cold "
                    f"{row['cold_citations_per_s']}/s ({row['cold_s']} s), warm "
                    f"{row['warm_citations_per_s']}/s ({row['warm_s']} s), warm/cold "
                    f"x{row['warm_over_cold']}, peak {row['peak_rss_mib']} MiB",
                    file=sys.stderr,
                    flush=True,
                )
            entry: dict[str, Any] = {"verifier": spec, "sizes": rows, **project(rows)}
            entry["warm_goal_met"] = all(r["warm_over_cold"] >= 10 for r in rows)
            if has_ray:
                scaling = {"rows": [_child(_ray_child, args, mode, spec, w) for w in (0, 1, 2)]}
                scaling["identical_to_local"] = all(
                    r["scores_sha256"] == scaling["rows"][0]["scores_sha256"]
                    for r in scaling["rows"]
                )
                entry["ray_scaling"] = {**scaling, **cores_statement(entry, scaling)}
            report["modes"][mode] = entry
    report.update(
        {
            "load_average_1m_before_after": [
                round(load_before[0], 2),
                round(os.getloadavg()[0], 2),
            ],
            "cpu_count": os.cpu_count(),
            "machine": platform.platform(),
            "ray": ray_note or "measured",
            "note": "SYNTHETIC runs over the 1,000-paper PubMedQA corpus: every cited passage is "
            "embedded once, so the cold marginal cost is mostly claims; a corpus with more "
            "distinct papers costs more per citation. Timings depend on the machine's load.",
        }
    )
    print_report(report, ray_note)
    text = json.dumps(report, indent=2)
    if args.out:
        from kit.core import atomic

        atomic.write_text(args.out, text + "\n")
    return 0


def restated_lines(report: dict[str, Any]) -> list[str]:
    """One line per (mode, size) audited with --restated: the same citations in another
    agent's words from the warm store, with the score store alone and with the embeddings."""
    out = []
    for mode, e in report["modes"].items():
        for r in e["sizes"]:
            if "restated_with_embeddings_s" not in r:
                continue
            a, b = r["restated_scores_only_s"], r["restated_with_embeddings_s"]
            out.append(
                f"{mode} {r['citations']} citations restated (new wording, same cited papers; "
                f"{r['restated_with_embeddings_pairs_scored']} new pairs scored): "
                f"{r['restated_with_embeddings_citations_per_s']} cit/s ({b} s) with the "
                f"embedding store, {r['restated_scores_only_citations_per_s']} cit/s ({a} s) "
                f"with the score store alone: {a / b:.2f}x; cold {r['cold_s']} s"
            )
    return out


def print_report(report: dict[str, Any], ray_note: str) -> None:
    la = report["load_average_1m_before_after"]
    print(
        f"# bench_audit: SYNTHETIC runs, {report['variant']}, {report['cites_per_run']} "
        f"citations per run; {report['cpu_count']} CPUs, load average {la[0]} -> {la[1]} "
        "(a loaded machine is slower)"
    )
    print()
    print(
        "| mode | citations | score-store misses, cold | cold cit/s | warm cit/s | warm / cold "
        "| peak RSS MiB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    saturated = []
    for mode, e in report["modes"].items():
        for r in e["sizes"]:
            print(
                f"| {mode} | {r['citations']} | {r['pairs_scored_cold']} | "
                f"{r['cold_citations_per_s']} | {r['warm_citations_per_s']} | "
                f"{r['warm_over_cold']}x | {r['peak_rss_mib']} |"
            )
            if r["pairs_scored_cold"] < r["citations"] / 2:
                saturated.append(f"{mode} at {r['citations']}")
    if saturated:
        print(
            "NOTE: fewer score-store misses than half the citations at "
            + ", ".join(saturated)
            + ": the SYNTHETIC runs repeat claims and passages, the cold audit re-used its own "
            "scores, so its cit/s, warm/cold and projection overstate a corpus without repeats"
        )
    for line in restated_lines(report):
        print(line)
    print()
    for mode, e in report["modes"].items():
        first = min(e["sizes"], key=lambda r: r["citations"])
        print(
            f"{mode}: verifier {first['verifier_name']}; {first['citations']} citations cold in "
            f"{first['cold_s']} s"
        )
        print(
            f"{mode}: cost growth {e['cost_growth']}; projected {e['projected_hours_1M_citations_cold']}"
            f" h for 1,000,000 citations cold on this machine ({e['projection']}); warm-store "
            f"goal (>= 10x) {'met' if e['warm_goal_met'] else 'NOT met'}"
        )
        rs = e.get("ray_scaling")
        if rs:
            parts = []
            for r in rs["rows"]:
                who = "local engine" if r["workers"] == 0 else f"ray {r['workers']} worker(s)"
                mem = f"driver {r['driver_peak_rss_mib']} MiB"
                if r["ray_processes_peak_rss_mib"] is not None:
                    mem += f", Ray processes {r['ray_processes_peak_rss_mib']} MiB"
                net = "" if not r["workers"] else f", net of {r['startup_s']} s start-up: "
                net += "" if not r["workers"] else f"{r['pairs_per_s_net']} pairs/s"
                parts.append(f"{who} {r['pairs_per_s']} pairs/s{net} ({mem})")
            print(f"  Ray scaling on {rs['rows'][0]['pairs']} L2 pairs: " + "; ".join(parts))
            print(
                f"  efficiency at 2 workers {rs.get('efficiency_2_workers')}; scores identical "
                f"to local: {rs['identical_to_local']}"
            )
            print(
                f"  {rs['statement']}."
                + (f" Assumption: {rs['assumption']}." if "assumption" in rs else "")
            )
    if ray_note:
        print(ray_note)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    sys.exit(main())
