"""Agreement between two raters on binary labels (pure).

Seed 001, Appendix S2 Table S3: observed agreement, Cohen's kappa with percentile-bootstrap
95% CI (2000 resamples), Gwet's AC1, and positive- and negative-specific agreement. With a
highly prevalent class kappa is depressed (the base-rate paradox), which is why the
class-specific agreements and AC1 are reported next to it, with the base rates beside them
(:func:`agreement_row`). Assumption: items independent (or, with clusters, clusters
independent).

2x2 table: a = both positive, b = A positive / B negative, c = A negative / B positive,
d = both negative, n = a + b + c + d.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kit.core.errors import ConfigError, check_param
from kit.stats.bootstrap import BootstrapCI, bootstrap_ci, cluster_bootstrap_ci


def _table(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int, int]:
    x = np.asarray(x).astype(bool)
    y = np.asarray(y).astype(bool)
    check_param(
        "ratings",
        x.size,
        x.size == y.size and x.size >= 1,
        "two aligned non-empty arrays",
        "agreement",
    )
    return (
        int(np.sum(x & y)),
        int(np.sum(x & ~y)),
        int(np.sum(~x & y)),
        int(np.sum(~x & ~y)),
    )


def cohens_kappa(x: np.ndarray, y: np.ndarray) -> float:
    """kappa = (p_o - p_e) / (1 - p_e), p_e = p_A+ p_B+ + p_A- p_B- (Cohen 1960).

    Undefined (NaN) when p_e = 1 (both raters constant and identical).
    """
    a, b, c, d = _table(x, y)
    n = a + b + c + d
    po = (a + d) / n
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
    return float("nan") if pe >= 1.0 else (po - pe) / (1.0 - pe)


def gwet_ac1(x: np.ndarray, y: np.ndarray) -> float:
    """Gwet's AC1 for two raters, two categories (Gwet 2008).

    pi = (p_A+ + p_B+) / 2; p_e = 2 pi (1 - pi); AC1 = (p_o - p_e) / (1 - p_e).
    """
    a, b, c, d = _table(x, y)
    n = a + b + c + d
    po = (a + d) / n
    pi = ((a + b) + (a + c)) / (2 * n)
    pe = 2 * pi * (1 - pi)
    return (po - pe) / (1 - pe)


def specific_agreement(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(positive-specific, negative-specific) agreement: 2a/(2a+b+c), 2d/(2d+b+c).

    NaN when the denominator is 0 (no positive / no negative ratings at all).
    """
    a, b, c, d = _table(x, y)
    psa = 2 * a / (2 * a + b + c) if (2 * a + b + c) else float("nan")
    nsa = 2 * d / (2 * d + b + c) if (2 * d + b + c) else float("nan")
    return psa, nsa


@dataclass(frozen=True)
class Agreement:
    n: int
    observed: float
    kappa: float
    kappa_ci: BootstrapCI
    ac1: float
    positive_specific: float
    negative_specific: float
    negative_specific_ci: BootstrapCI


def agreement(
    x: np.ndarray, y: np.ndarray, rng: np.random.Generator, n_boot: int = 2000
) -> Agreement:
    """All agreement statistics of Table S3 for one pair of raters."""
    a, b, c, d = _table(x, y)
    xa, ya = np.asarray(x).astype(bool), np.asarray(y).astype(bool)
    psa, nsa = specific_agreement(xa, ya)
    return Agreement(
        n=a + b + c + d,
        observed=(a + d) / (a + b + c + d),
        kappa=cohens_kappa(xa, ya),
        kappa_ci=bootstrap_ci((xa, ya), cohens_kappa, rng, n_boot),
        ac1=gwet_ac1(xa, ya),
        positive_specific=psa,
        negative_specific=nsa,
        negative_specific_ci=bootstrap_ci(
            (xa, ya), lambda p, q: specific_agreement(p, q)[1], rng, n_boot
        ),
    )


def _psa(x: np.ndarray, y: np.ndarray) -> float:
    return specific_agreement(x, y)[0]


def _nsa(x: np.ndarray, y: np.ndarray) -> float:
    return specific_agreement(x, y)[1]


STATISTICS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "kappa": cohens_kappa,
    "ac1": gwet_ac1,
    "positive_specific": _psa,
    "negative_specific": _nsa,
}


def _safe(stat: Callable[[np.ndarray, np.ndarray], float], x: np.ndarray, y: np.ndarray) -> float:
    """The statistic, NaN where its formula divides by zero (a constant rater, AC1's p_e = 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            return float(stat(x, y))
        except ZeroDivisionError:
            return float("nan")


def agreement_row(
    level: str,
    x: np.ndarray,
    y: np.ndarray,
    clusters: np.ndarray | None,
    rng: np.random.Generator,
    n_boot: int,
    level_ci: float,
    cluster_name: str = "answers",
) -> dict[str, object]:
    """One agreement row of two raters' binary labels ``x`` (A) and ``y`` (B): the base rates
    (``rate_a``, ``rate_b``: share positive under each -- the prevalence that depresses kappa,
    reported beside it), observed agreement, and Cohen's kappa, Gwet's AC1, positive- and
    negative-specific agreement, each with a percentile-bootstrap CI at ``level_ci``: over rows,
    or over ``clusters`` (named ``cluster_name`` in ``ci_method``) when given. A statistic
    undefined on the data is NaN with a note, never 0 (shared by the judge swap and the
    validation of an instrument against human labels)."""
    x, y = np.asarray(x, dtype=bool), np.asarray(y, dtype=bool)
    row: dict[str, object] = {
        "level": level,
        "n": int(x.size),
        "n_clusters": int(x.size if clusters is None else np.unique(clusters).size),
        "rate_a": float(x.mean()),
        "rate_b": float(y.mean()),
        "observed": float(np.mean(x == y)),
    }
    notes = []
    for name, stat in STATISTICS.items():
        est = _safe(stat, x, y)
        lo = hi = float("nan")
        if np.isnan(est):
            notes.append(f"{name} undefined")
        else:
            safe = lambda p, q, s=stat: _safe(s, p, q)  # noqa: E731
            try:
                if clusters is None:
                    ci = bootstrap_ci((x, y), safe, rng, n_boot, level_ci)
                else:
                    ci = cluster_bootstrap_ci((x, y), clusters, safe, rng, n_boot, level_ci)
                lo, hi = ci.lo, ci.hi
                if ci.n_undefined:
                    notes.append(f"{name}: {ci.n_undefined} of {n_boot} resamples undefined")
            except ConfigError:
                notes.append(f"{name} CI undefined")
        row[name], row[f"{name}_lo"], row[f"{name}_hi"] = est, lo, hi
    row["ci_method"] = "bootstrap" if clusters is None else f"cluster-bootstrap ({cluster_name})"
    row["note"] = "; ".join(notes)
    return row
