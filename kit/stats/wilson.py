"""Wilson score interval for a binomial proportion (pure).

Used for every rate the citation guard reports (unsupported rate, flag rate, recall@1), as in
the paper (seed 001, Appendix S4 Table S5, Appendix S6 Table S7: "Wilson 95% CIs").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.stats import norm

from kit.core.errors import check_param


@dataclass(frozen=True)
class Proportion:
    k: int
    n: int
    estimate: float
    lo: float
    hi: float
    level: float


def wilson_ci(k: int, n: int, level: float = 0.95) -> Proportion:
    """Wilson score interval (Wilson 1927).

    centre = (p + z^2/(2n)) / (1 + z^2/n); half = z sqrt(p(1-p)/n + z^2/(4n^2)) / (1 + z^2/n),
    z = Phi^{-1}(1 - (1 - level)/2). Assumes k ~ Binomial(n, p) with independent trials; for
    clustered data (several citations per answer) use a cluster bootstrap instead.
    n = 0 is undefined and raises rather than returning a silent interval.
    """
    check_param("n", n, int(n) == n and n >= 1, "an integer >= 1", "wilson_ci")
    check_param("k", k, int(k) == k and 0 <= k <= n, f"an integer in [0, {n}]", "wilson_ci")
    check_param("level", level, 0.0 < level < 1.0, "in (0, 1)", "wilson_ci")
    return _wilson(k, n, n, level)


def wilson_effective(k: int, n: int, design_effect: float = 1.0, level: float = 0.95) -> Proportion:
    """Wilson interval of k / n for clustered trials: the Wilson formula with the effective
    sample size n_eff = n / deff (Kish's design effect, e.g. citations clustered in answers;
    Korn & Graubard 1998 use it for complex-survey proportions). The estimate is k / n;
    ``design_effect`` 1 is :func:`wilson_ci`. Bounds are exactly 0 at k = 0 and 1 at k = n."""
    check_param("n", n, int(n) == n and n >= 1, "an integer >= 1", "wilson_effective")
    check_param("k", k, int(k) == k and 0 <= k <= n, f"an integer in [0, {n}]", "wilson_effective")
    check_param("design_effect", design_effect, design_effect >= 1.0, ">= 1", "wilson_effective")
    check_param("level", level, 0.0 < level < 1.0, "in (0, 1)", "wilson_effective")
    return _wilson(k, n, n / design_effect, level)


def _wilson(k: int, n: int, m: float, level: float) -> Proportion:
    """The Wilson interval of k / n at sample size ``m`` (``n`` itself, an int, for
    :func:`wilson_ci`; n / deff for :func:`wilson_effective`); the estimate is k / n."""
    z = float(norm.ppf(1.0 - (1.0 - level) / 2.0))
    p = k / n
    denom = 1.0 + z * z / m
    centre = (p + z * z / (2 * m)) / denom
    half = z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / denom
    return Proportion(
        k=int(k),
        n=int(n),
        estimate=p,
        # at k = 0 (k = n) the bound is 0 (1) exactly; rounding would leave ~1e-17 off it
        lo=0.0 if k == 0 else max(0.0, centre - half),
        hi=1.0 if k == n else min(1.0, centre + half),
        level=level,
    )
