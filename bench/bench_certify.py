"""Benchmark: the vectorised certification engine against a straightforward per-cell loop.

Plain script (kept out of pytest):

    .venv/bin/python bench/bench_certify.py            # 50 tasks x 13 systems x 34 readouts
    .venv/bin/python bench/bench_certify.py --scale    # also 1,000 tasks x 50 systems

On a shared 2-core machine set OPENBLAS_NUM_THREADS=1: the loop's many small matrix
products slow down badly under BLAS thread oversubscription.

Both implementations certify every (pair, readout) cell with the cluster-robust radius of
Eq. (4) and run the same sign-flip null (one shared sign vector per cluster per draw). The loop
version visits one cell at a time (pandas filtering, a Python loop over clusters, then the draws
vectorised within the cell) -- what one writes first. The script checks that both agree, then
prints the timings and their ratio. Both run the CR1 radius with k - 1 degrees of freedom,
Bonferroni over the pairs of each readout (``DESIGN``): the loop is the simple version one
writes first; the engine's defaults (CR2 with Bell-McCaffrey degrees of freedom, one family
over every (pair, readout)) are checked against independent implementations in the tests.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

import numpy as np
import pandas as pd
from scipy import stats

from kit.certify.calibration import sign_flip_null, sign_vectors
from kit.certify.design import parse_design
from kit.certify.engine import _family, certify_prepared, contrasts, prepare_board
from kit.certify.simulate import simulate_board

# the design both implementations compute (explicit: the engine's defaults moved to CR2 and one
# family over every (pair, readout), which the reference loop does not implement)
DESIGN = {"alpha": 0.05, "inference": "cr1", "multiplicity": "pairs"}


def make_board(n_tasks: int, n_systems: int, n_readouts: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    effects = {f"S{i:02d}": 0.004 * i for i in range(n_systems)}
    readouts = [f"r{j:02d}" for j in range(n_readouts)]
    return simulate_board(
        rng,
        effects,
        n_tasks=n_tasks,
        n_clusters=min(23, n_tasks),
        readouts=readouts,
        fail_rate=0.01,
    )


def vectorised(frame: pd.DataFrame, draws: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    design = parse_design(DESIGN)
    board = prepare_board(frame, design)
    result = certify_prepared(board, design)
    fam = _family(board, design)
    d, _, _, _ = contrasts(board, fam)
    flat = d[:-1].reshape(-1, d.shape[2])  # the table readouts (not the composite)
    null = sign_flip_null(
        flat,
        board.codes,
        len(board.clusters),
        np.zeros(len(flat)),
        design.alpha / result.m,
        draws,
        np.random.default_rng(seed),
    )
    return result.pairs, null.statistic


def per_cell_loop(
    frame: pd.DataFrame, draws: int, seed: int, with_null: bool = True
) -> tuple[pd.DataFrame, np.ndarray]:
    """The reference loop: one (pair, readout) cell at a time."""
    systems = sorted(frame["system"].unique())
    readouts = sorted(frame["readout"].unique())
    clusters = sorted(frame["cluster"].unique())
    m = len(systems) * (len(systems) - 1) // 2
    delta = 0.05 / m
    signs, _, _ = sign_vectors(len(clusters), draws, np.random.default_rng(seed))
    cindex = {c: i for i, c in enumerate(clusters)}
    rows, stat = [], np.zeros(len(signs))
    for readout in readouts:
        sub = frame[frame["readout"] == readout]
        wide = sub.pivot(index="task_id", columns="system", values="score")
        cl = sub.drop_duplicates("task_id").set_index("task_id")["cluster"].loc[wide.index]
        for a, b in itertools.combinations(systems, 2):
            d = (wide[a] - wide[b]).to_numpy()
            keep = np.isfinite(d)
            d, g = d[keep], cl.to_numpy()[keep]
            n = len(d)
            gap = d.mean()
            sums: dict[str, float] = {}
            counts: dict[str, int] = {}
            for x, c in zip(d - gap, g, strict=True):
                sums[c] = sums.get(c, 0.0) + x
                counts[c] = counts.get(c, 0) + 1
            k = len(sums)
            se = np.sqrt(k / (k - 1) * sum(v * v for v in sums.values())) / n
            q = stats.t.ppf(1 - delta / 2, k - 1) * se
            rows.append((a, b, readout, gap, q, abs(gap) > q))
            if not with_null:
                continue
            # sign-flip draws for this cell, vectorised over draws only
            codes = np.array([cindex[c] for c in g])
            flipped = (d - gap)[None, :] * signs[:, codes]
            fgap = flipped.mean(axis=1)
            onehot = np.zeros((n, len(clusters)))
            onehot[np.arange(n), codes] = 1.0
            s_g = (flipped - fgap[:, None]) @ onehot
            fse = np.sqrt(k / (k - 1) * (s_g**2).sum(axis=1)) / n
            ratio = np.abs(fgap) / (stats.t.ppf(1 - delta / 2, k - 1) * fse)
            stat = np.maximum(stat, np.where(np.isfinite(ratio), ratio, 0.0))
    out = pd.DataFrame(rows, columns=["system_a", "system_b", "readout", "gap", "q", "cert"])
    return out, stat


def certification_only(frame: pd.DataFrame) -> float:
    design = parse_design(DESIGN)
    t0 = time.perf_counter()
    certify_prepared(prepare_board(frame, design), design)
    return time.perf_counter() - t0


def run(n_tasks: int, n_systems: int, n_readouts: int, draws: int, loop: bool) -> None:
    frame = make_board(n_tasks, n_systems, n_readouts)
    cells = n_systems * (n_systems - 1) // 2 * n_readouts
    print(
        f"board: {n_tasks} tasks x {n_systems} systems x {n_readouts} readouts "
        f"= {cells} (pair, readout) cells, {draws} sign-flip draws",
        flush=True,
    )
    t0 = time.perf_counter()
    pairs, stat_v = vectorised(frame, draws, seed=1)
    t_vec = time.perf_counter() - t0
    print(f"  vectorised engine : {t_vec:8.2f} s", flush=True)
    if not loop:
        print(f"  certification only (no null): {certification_only(frame):.2f} s")
        return
    t0 = time.perf_counter()
    ref, stat_l = per_cell_loop(frame, draws, seed=1)
    t_loop = time.perf_counter() - t0
    print(f"  per-cell loop     : {t_loop:8.2f} s", flush=True)
    got = pairs[pairs["readout"] != "composite"].sort_values(["readout", "system_a", "system_b"])
    ref = ref.sort_values(["readout", "system_a", "system_b"])
    assert np.allclose(got["gap"].to_numpy(), ref["gap"].to_numpy())
    assert np.allclose(got["q"].to_numpy(), ref["q"].to_numpy())
    assert np.allclose(stat_v, stat_l), "sign-flip statistics differ"
    print(f"  ratio loop / vectorised: {t_loop / t_vec:6.1f}x (results agree)")
    t_cv = certification_only(frame)
    t0 = time.perf_counter()
    per_cell_loop(frame, draws, seed=1, with_null=False)
    t_cl = time.perf_counter() - t0
    print(
        f"  certification only (no null): vectorised {t_cv:.3f} s, loop {t_cl:.3f} s, "
        f"ratio {t_cl / t_cv:.1f}x"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--scale", action="store_true", help="also 1,000 tasks x 50 systems")
    args = parser.parse_args()
    run(50, 13, 34, args.draws, loop=True)
    if args.scale:
        run(1000, 50, 34, args.draws, loop=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
