"""Benchmark `--engine ray`: verifier pairs/s on a local Ray cluster at 1 and 2 workers.

Run: .venv/bin/python bench/bench_ray.py [--pairs 256] [--verifier minilm-nli]
     [--batch-size 32] [--workers 1,2] [--out bench_ray.json]

Pairs are SYNTHETIC (seed 0): claims of 12-24 and passages of 80-300 words drawn from a fixed
vocabulary, so passages span one to a few windows as cited abstracts do. Every measurement
scores the same pairs with a fresh verifier (no embedding or score cache): first the local
engine with one onnxruntime thread (the unit a Ray worker is), then Ray with 1, 2, ... actors
of one CPU each on a Ray started here with as many CPUs as the most workers. The Ray times
include the actors' start and model load (once per actor per run), as a command pays them.
Printed: pairs/s each, speedup over 1 worker and the scaling efficiency
rate(N) / (N * rate(1)), and whether the scores are byte-identical to the local engine. The
machine's load average is printed: on a shared machine the workers compete with other jobs.

A missing ray (the 'ray' extra) or a missing cross-encoder (`make reproduce` trains
minilm-nli) is a one-line SKIP. Out of pytest on purpose: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = (
    "aspirin lowers fever in adults statins cut ldl cholesterol randomized trials show no "
    "significant effect on mortality patients treated with placebo reported fewer adverse "
    "events cohort study risk ratio confidence interval children elderly women men dose"
).split()


def synthetic_pairs(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """SYNTHETIC claims and passages (random words; lengths as cited abstracts)."""
    rng = np.random.default_rng(seed)
    claims = [" ".join(rng.choice(WORDS, rng.integers(12, 25))) for _ in range(n)]
    passages = [" ".join(rng.choice(WORDS, rng.integers(80, 301))) for _ in range(n)]
    return claims, passages


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--verifier", default="minilm-nli")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    try:
        import ray
    except ImportError:
        print("SKIP bench_ray: ray is not installed (pip install -e '.[ray]')")
        return 0
    from kit.core.errors import KitError
    from kit.guard.scoring.ray_engine import ray_engine
    from kit.guard.verifiers.load import load_verifier

    def fresh() -> object:
        return load_verifier(args.verifier, batch_size=args.batch_size, threads=1)

    try:
        fresh()
    except KitError as exc:
        print(f"SKIP bench_ray: {exc}")
        return 0
    workers = [int(w) for w in args.workers.split(",")]
    claims, passages = synthetic_pairs(args.pairs)
    load = os.getloadavg()
    print(
        f"bench_ray: {args.pairs} SYNTHETIC pairs, verifier {args.verifier}, batch "
        f"{args.batch_size}; {os.cpu_count()} CPUs, load average {load[0]:.1f}"
    )
    v = fresh()
    t = time.perf_counter()
    ref = np.asarray(v.score(claims, passages))
    local_s = time.perf_counter() - t
    print(f"  local engine, 1 thread: {args.pairs / local_s:8.1f} pairs/s ({local_s:.1f} s)")
    ray.init(num_cpus=max(workers), include_dashboard=False, log_to_driver=False)
    rows = []
    try:
        for n in workers:
            v = fresh()
            with ray_engine(v, workers=n):
                t = time.perf_counter()
                s = np.asarray(v.score(claims, passages))
                sec = time.perf_counter() - t
            rows.append(
                {
                    "workers": n,
                    "seconds": sec,
                    "pairs_per_s": args.pairs / sec,
                    "identical": s.tobytes() == ref.tobytes(),
                }
            )
    finally:
        ray.shutdown()
    base = rows[0]["pairs_per_s"] if rows[0]["workers"] == 1 else None
    for r in rows:
        line = f"  ray, {r['workers']} worker(s): {r['pairs_per_s']:8.1f} pairs/s ({r['seconds']:.1f} s)"
        if base:
            r["speedup"] = r["pairs_per_s"] / base
            r["efficiency"] = r["speedup"] / r["workers"]
            line += f", speedup {r['speedup']:.2f}x, efficiency {r['efficiency']:.2f}"
        line += f", scores byte-identical to local: {r['identical']}"
        print(line)
    if args.out:
        result = {
            "pairs": args.pairs,
            "verifier": args.verifier,
            "load_average": load[0],
            "local_pairs_per_s": args.pairs / local_s,
            "ray": rows,
        }
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
