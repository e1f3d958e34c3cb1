"""Percentile bootstrap and per-answer cluster bootstrap (pure; RNG passed in).

Seed 001 reports kappa with "percentile-bootstrap 95% CI (2000 resamples)" (Appendix S1, S2).
Citations within one answer are not independent (one generator, one retrieval), so rates over
citations get a *cluster* bootstrap: resample answers with replacement, keep all their
citations (assumption: answers are independent; citations within an answer may be correlated).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kit.core.errors import ConfigError, check_param


@dataclass(frozen=True)
class BootstrapCI:
    estimate: float
    lo: float
    hi: float
    level: float
    n_boot: int
    n_undefined: int  # resamples on which the statistic was undefined (NaN), dropped
    sd: float = float("nan")  # standard deviation of the defined resamples (ddof 1)


def _percentile(
    estimate: float, reps: np.ndarray, level: float, n_boot: int, func: str
) -> BootstrapCI:
    ok = reps[np.isfinite(reps)]
    if ok.size == 0:
        raise ConfigError(
            "undefined_statistic", f"{func}: the statistic is undefined on every resample"
        )
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(ok, [a, 1.0 - a])
    return BootstrapCI(
        estimate=float(estimate),
        lo=float(lo),
        hi=float(hi),
        level=level,
        n_boot=n_boot,
        n_undefined=int(reps.size - ok.size),
        sd=float(ok.std(ddof=1)) if ok.size > 1 else float("nan"),
    )


def bootstrap_ci(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., float],
    rng: np.random.Generator,
    n_boot: int = 2000,
    level: float = 0.95,
) -> BootstrapCI:
    """Percentile bootstrap over rows: ``statistic(*[a[idx] for a in data])`` per resample.

    All arrays in ``data`` share their first axis (paired resampling, e.g. two raters' labels).
    """
    check_param("n_boot", n_boot, n_boot >= 1, "an integer >= 1", "bootstrap_ci")
    check_param("level", level, 0.0 < level < 1.0, "in (0, 1)", "bootstrap_ci")
    arrays = tuple(np.asarray(a) for a in data)
    n = arrays[0].shape[0]
    check_param(
        "data",
        n,
        n >= 1 and all(a.shape[0] == n for a in arrays),
        "non-empty, aligned",
        "bootstrap_ci",
    )
    est = statistic(*arrays)
    reps = np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, n, n)
        reps[b] = statistic(*(a[idx] for a in arrays))
    return _percentile(est, reps, level, n_boot, "bootstrap_ci")


def cluster_bootstrap_mean(
    values: np.ndarray,
    clusters: np.ndarray,
    rng: np.random.Generator,
    n_boot: int = 2000,
    level: float = 0.95,
) -> BootstrapCI:
    """Cluster (per-answer) bootstrap CI for a mean over citations (e.g. the unsupported rate).

    Resample clusters with replacement; the statistic is the pooled mean sum(values)/count over
    the resampled clusters' citations (a ratio estimator, weighting answers by their size).
    """
    v = np.asarray(values, dtype=float)
    c = np.asarray(clusters)
    check_param(
        "values",
        v.size,
        v.size >= 1 and v.size == c.size,
        "non-empty, aligned with clusters",
        "cluster_bootstrap_mean",
    )
    _, inv = np.unique(c, return_inverse=True)
    sums = np.bincount(inv, weights=v)
    counts = np.bincount(inv).astype(float)
    m = sums.size
    reps = np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, m, m)
        reps[b] = sums[idx].sum() / counts[idx].sum()
    return _percentile(float(v.mean()), reps, level, n_boot, "cluster_bootstrap_mean")


def cluster_bootstrap_ci(
    data: tuple[np.ndarray, ...],
    clusters: np.ndarray,
    statistic: Callable[..., float],
    rng: np.random.Generator,
    n_boot: int = 2000,
    level: float = 0.95,
    strata: np.ndarray | None = None,
) -> BootstrapCI:
    """Cluster percentile bootstrap of any statistic over rows (e.g. an AUC or a kappa).

    Resample the distinct values of ``clusters`` with replacement and keep all rows of each
    drawn cluster (a cluster drawn twice contributes its rows twice); ``statistic`` gets the
    row-aligned arrays of ``data`` restricted to those rows. Resamples on which the statistic is
    NaN (e.g. an AUC with no positives) are dropped and counted in ``n_undefined``.
    Assumption: clusters independent; rows within a cluster may be correlated. With one row per
    cluster this is the ordinary percentile bootstrap of :func:`bootstrap_ci`.

    ``strata`` (row-aligned, constant within a cluster) makes it the stratified cluster
    bootstrap (Davison and Hinkley 1997, Section 3.8): each stratum's clusters are resampled
    among themselves, as many as it has, so every resample keeps the design's strata and their
    sizes in clusters (e.g. the folds of a cross-validation, each scored by its own model).
    """
    func = "cluster_bootstrap_ci"
    check_param("n_boot", n_boot, n_boot >= 1, "an integer >= 1", func)
    check_param("level", level, 0.0 < level < 1.0, "in (0, 1)", func)
    arrays = tuple(np.asarray(a) for a in data)
    c = np.asarray(clusters)
    n = c.shape[0]
    check_param(
        "data",
        n,
        n >= 1 and all(a.shape[0] == n for a in arrays),
        "non-empty, aligned with clusters",
        "cluster_bootstrap_ci",
    )
    _, inv = np.unique(c, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    sizes = np.bincount(inv)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    m = sizes.size
    pools = [np.arange(m)]
    if strata is not None:
        s = np.asarray(strata)
        check_param("strata", s.shape[0], s.shape[0] == n, "aligned with clusters", func)
        first = s[order[starts]]  # the stratum of each cluster, read at its first row
        check_param(
            "strata",
            "varies within a cluster",
            bool(np.all(s[order] == np.repeat(first, sizes))),
            "constant within each cluster",
            func,
        )
        pools = [np.flatnonzero(first == v) for v in np.unique(first)]
    est = statistic(*arrays)
    reps = np.empty(n_boot)
    for b in range(n_boot):
        drawn = np.concatenate([p[rng.integers(0, p.size, p.size)] for p in pools])
        size = sizes[drawn]
        offsets = np.repeat(np.cumsum(size) - size, size)
        rows = order[np.repeat(starts[drawn], size) + np.arange(size.sum()) - offsets]
        reps[b] = statistic(*(a[rows] for a in arrays))
    return _percentile(est, reps, level, n_boot, "cluster_bootstrap_ci")
