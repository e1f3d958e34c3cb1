"""The numpy float32 matmul baseline of the benchmarks, measured as the machine's BLAS can do it.

Some machines force an OpenBLAS kernel or cache size through OPENBLAS_CORETYPE /
OPENBLAS_L2_SIZE, which slows numpy below the machine's peak; a "fraction of numpy matmul"
against such a baseline flatters the code measured. :func:`matmul_baseline` therefore times
numpy float32 ``a @ b`` (n x n, best of ``reps`` after a warm-up) in a child process whose
environment has both variables removed -- for that measurement only; the caller's process is
untouched -- and reports the BLAS library and kernel the child used (threadpoolctl, when
installed: ``pip install -e ".[bench]"``). When the variables are set, the same matmul is also
timed in the caller's environment, so the slowdown they cause is printed next to it.

Run alone (what the child runs: a measurement in the current environment, as JSON):
    .venv/bin/python bench/blas_baseline.py [--n 1024] [--reps 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def blas_info() -> list[dict[str, Any]] | None:
    """threadpoolctl's view of the loaded BLAS (library, version, kernel, threads), or None."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    keep = ("internal_api", "version", "architecture", "num_threads", "threading_layer")
    return [{k: d.get(k) for k in keep} for d in threadpool_info() if d.get("user_api") == "blas"]


def measure(n: int = 1024, reps: int = 5) -> float:
    """GFLOP/s of numpy float32 n x n matmul in this process (best of ``reps``)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    a @ b  # warm-up
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best / 1e9


def matmul_baseline(n: int = 1024, reps: int = 5) -> dict[str, Any]:
    """The baseline with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset (child process), see module."""
    present = {k: os.environ[k] for k in OPENBLAS_VARS if k in os.environ}
    env = {k: v for k, v in os.environ.items() if k not in OPENBLAS_VARS}
    cmd = [sys.executable, os.path.abspath(__file__), "--n", str(n), "--reps", str(reps)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    child = json.loads(out.stdout)
    row: dict[str, Any] = {
        "numpy_float32_matmul_gflops": child["gflops"],
        "matmul_n": n,
        "openblas_overrides_unset_for_baseline": present or "none were set",
        "blas": child["blas"] if child["blas"] is not None else "threadpoolctl not installed",
    }
    if present:
        row["numpy_float32_matmul_gflops_with_overrides"] = measure(n, reps)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    print(json.dumps({"gflops": measure(args.n, args.reps), "blas": blas_info()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
