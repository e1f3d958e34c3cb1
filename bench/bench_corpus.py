"""Benchmark `kit corpus`: MEDLINE ingestion at scale, PMID look-ups, BM25 against rank-bm25.

Plain script (kept out of pytest):

    .venv/bin/python bench/bench_corpus.py                       # 1,000,000 records
    .venv/bin/python bench/bench_corpus.py --records 200000      # quicker

A SYNTHETIC MEDLINE-format corpus (kit.corpus.synthetic, seed 0; titles start with SYNTHETIC)
is written as gzip files of ``--per-file`` records, then:

1. ingestion (`kit corpus build` without the index) of the first file (``--per-file`` records)
   and of all files, each in a fresh process: records/s and peak resident memory; the ratio of
   the two peaks shows whether memory stays bounded as the corpus grows;
2. the on-disk BM25 index (kit.corpus.bm25) built over ``--bm25-docs`` documents: build time;
3. PMID look-ups/s against the full corpus (batches of 1,000 identifiers, half absent);
4. BM25 queries/s, the on-disk index (memory-mapped) against the reference rank-bm25 (the kit's
   Lucene-idf BM25Okapi) on the same ``--bm25-docs`` documents and tokens, in this run: the
   ratio, and a check that both give the identical top-10 with scores within 1e-6.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_files(folder: Path, records: int, per_file: int) -> list[Path]:
    from kit.corpus.synthetic import synthetic_records, write_medline

    rng = np.random.default_rng(0)
    files = []
    for i, start in enumerate(range(0, records, per_file)):
        n = min(per_file, records - start)
        path = folder / f"pubmed99n{i + 1:04d}.xml.gz"
        write_medline(path, synthetic_records(start + 1, n, rng))
        files.append(path)
    return files


def child_ingest(files: list[str], root: str, name: str) -> None:
    """Run in a fresh process: build without index; print seconds, records, peak RSS (MiB)."""
    from kit.corpus.build import BuildSpec, build_corpus, medline_sources

    t0 = time.perf_counter()
    spec = BuildSpec(
        name=name,
        sources=tuple(medline_sources([Path(f) for f in files])),
        licence="SYNTHETIC benchmark data",
        root=Path(root),
        progress=False,
        index=False,
    )
    m = build_corpus(spec).manifest
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {
        "seconds": time.perf_counter() - t0,
        "records": m["counts"]["documents"],
        "peak_mib": peak,
    }
    print(json.dumps(out))


def ingest(files: list[Path], root: Path, name: str) -> dict:
    cmd = [sys.executable, __file__, "--child", root.as_posix(), name, *map(str, files)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


def bm25_compare(root: Path, name: str, n_docs: int, n_queries: int, n_ref: int) -> None:
    from kit.corpus.bm25 import BM25Index
    from kit.corpus.lexical import tokenize
    from kit.corpus.store import DiskCorpus, doc_text
    from kit.guard.reattribute import build_bm25

    con = DiskCorpus.open(root / name).connect()
    rows = con.execute(
        "SELECT doc_id, title, text FROM documents ORDER BY doc_id LIMIT ?", [n_docs]
    ).fetchall()
    con.close()
    docs = [(d, doc_text(t, x)) for d, t, x in rows]
    t0 = time.perf_counter()
    BM25Index.build(docs).save(root / "bm25-bench")
    build_s = time.perf_counter() - t0
    index = BM25Index.open(root / "bm25-bench")
    rng = np.random.default_rng(1)
    queries = []
    for i in rng.choice(len(docs), size=n_queries, replace=False):
        toks = tokenize(docs[int(i)][1])
        queries.append(" ".join(rng.choice(toks, size=min(6, len(toks)), replace=False)))
    t0 = time.perf_counter()
    got = [index.top(q, 10) for q in queries]
    fast_qps = len(queries) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    ref = build_bm25([tokenize(t) for _, t in docs])
    ref_build = time.perf_counter() - t0
    ids = [d for d, _ in docs]
    t0 = time.perf_counter()
    same, max_delta = 0, 0.0
    for q, mine in zip(queries[:n_ref], got[:n_ref], strict=True):
        s = np.asarray(ref.get_scores(tokenize(q)), dtype=float)
        order = sorted(np.argsort(-s, kind="stable")[:50], key=lambda i: (-s[i], ids[i]))[:10]
        want = [(ids[i], float(s[i])) for i in order]
        same += [d for d, _ in want] == [d for d, _ in mine]
        max_delta = max(max_delta, max(abs(a[1] - b[1]) for a, b in zip(want, mine, strict=True)))
    ref_qps = n_ref / (time.perf_counter() - t0)
    print(f"BM25 over {len(docs):,} documents (same tokens, k1 = 1.5, b = 0.75, Lucene idf):")
    print(f"  on-disk index (bm25s, mmap): build {build_s:.1f} s, {fast_qps:,.1f} queries/s")
    print(f"  reference rank-bm25 (in memory): build {ref_build:.1f} s, {ref_qps:,.2f} queries/s")
    print(
        f"  ratio: {fast_qps / ref_qps:,.0f}x; identical top-10 on {same}/{n_ref} queries, ", end=""
    )
    print(f"max |score delta| {max_delta:.2e}")


def lookups(root: Path, name: str, records: int, n_batches: int) -> None:
    from kit.corpus.store import DiskCorpus

    corpus = DiskCorpus.open(root / name)
    rng = np.random.default_rng(2)
    batches = []
    for _ in range(n_batches):
        present = rng.integers(1, records + 1, size=500)
        absent = rng.integers(records + 1, 2 * records, size=500)
        batches.append([("PMID", str(v)) for v in np.concatenate([present, absent])])
    t0 = time.perf_counter()
    found = 0
    for b in batches:
        found += sum(o == "found" for o, _ in corpus.lookup(b).values())
    dt = time.perf_counter() - t0
    n = sum(len(set(b)) for b in batches)
    print(
        f"PMID look-ups: {n / dt:,.0f} /s in batches of 1,000 ({found} found of {n}) against {records:,} records"
    )


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_ingest(sys.argv[4:], sys.argv[2], sys.argv[3])
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=1_000_000)
    p.add_argument("--per-file", type=int, default=100_000)
    p.add_argument("--bm25-docs", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--ref-queries", type=int, default=20, help="queries timed on rank-bm25")
    p.add_argument("--lookup-batches", type=int, default=20)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_corpus_") as tmp:
        d = Path(tmp)
        t0 = time.perf_counter()
        files = write_files(d / "pubmed", args.records, args.per_file)
        mib = sum(f.stat().st_size for f in files) / 2**20
        print(f"SYNTHETIC MEDLINE: {args.records:,} records in {len(files)} gzip files ({mib:,.0f} MiB), "
              f"written in {time.perf_counter() - t0:.0f} s")  # fmt: skip
        small = ingest(files[:1], d / "corpora", "small")
        big = ingest(files, d / "corpora", "big")
        for label, r in (("first file", small), ("all files", big)):
            print(f"ingest {label}: {r['records']:,} records in {r['seconds']:.1f} s = "
                  f"{r['records'] / r['seconds']:,.0f} records/s; peak memory {r['peak_mib']:,.0f} MiB")  # fmt: skip
        print(f"peak memory ratio ({big['records']:,} / {small['records']:,} records): "
              f"{big['peak_mib'] / small['peak_mib']:.2f} (records ratio {big['records'] / small['records']:.0f})")  # fmt: skip
        lookups(d / "corpora", "big", args.records, args.lookup_batches)
        bm25_compare(d / "corpora", "big", args.bm25_docs, args.queries, args.ref_queries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
