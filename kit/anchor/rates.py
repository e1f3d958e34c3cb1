"""Gold-anchored rates (pure): one judge's rate beside its PPI++ and gold-only estimates.

Given judge scores on every judged item and gold labels on a uniform random subset of them,
:func:`anchored_rates` returns three rows, each a rate with its two-sided 1 - alpha interval:

* ``ppi`` -- PPI++ (power-tuned prediction-powered inference; :func:`kit.stats.ppi.ppi_mean`
  with lambda tuned, Angelopoulos, Duchi & Zrnic 2023): the judge's mean on the unlabelled
  items, weighted by lambda, plus the gold-minus-judge rectifier on the gold items. It is the
  rate of the *gold* labels, whatever the judge's bias, and never wider than gold-only
  asymptotically (lambda = 0 is gold-only; lambda = 1 plain PPI, Angelopoulos et al. 2023).
* ``judge_only`` -- the judge's mean over every judged item: a rate *relative to the judge*,
  biased by whatever bias it has; its interval covers only item sampling.
* ``gold_only`` -- the gold labels' mean (the classical interval).

Every interval is the CLT normal interval (ppi-python's ``ppi_mean_ci`` / ``classical_mean_ci``),
so widths are comparable between rows. What "too small" means for the gold sample:

* fewer than :data:`MIN_GOLD` gold items is refused (:func:`too_small`): the intervals'
  normal approximation rests on a variance estimated from the gold items;
* fewer than :data:`SMALL_GOLD` gold items, or fewer than :data:`MIN_CLASS` of either class, is
  reported with a warning: the interval is computed but its coverage may fall short of
  1 - alpha (the rule of thumb n p >= 10 and n (1 - p) >= 10 for the normal approximation of a
  binomial).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kit.stats.ppi import GoldPlan, MeanEstimate, classical_mean, plan_gold_size, ppi_mean

MIN_GOLD = 10
SMALL_GOLD = 30
MIN_CLASS = 10
ASSUMPTION = (
    "the gold items are a uniform random subset of the judged items (each judged item equally "
    "likely to be gold-labelled, independently of its judge score and gold label)"
)
METHODS = ("ppi", "judge_only", "gold_only")
DESCRIPTIONS = {
    "ppi": "PPI++: power-tuned prediction-powered inference (Angelopoulos, Duchi & Zrnic 2023; "
    "lambda = 1 is PPI, Angelopoulos et al., Science 2023): lambda x the judge's mean on the "
    "unlabelled items + the mean of (gold - lambda x judge) on the gold items; the rate of "
    "gold labels",
    "judge_only": "the judge's mean over every judged item: relative to the judge, not gold",
    "gold_only": "the gold labels' mean (classical CLT interval): gold items only",
}


@dataclass(frozen=True)
class RateRow:
    """One estimate of the rate: ``method`` in :data:`METHODS`."""

    method: str
    estimate: float
    ci_low: float
    ci_high: float
    se: float
    n: int
    lam: float | None
    relative_to: str
    description: str


@dataclass(frozen=True)
class AnchoredRates:
    """The three estimates of one rate, with the counts and warnings behind them."""

    judge: str
    alpha: float
    n_judged: int
    n_gold: int
    n_unlabelled: int
    gold_positives: int
    rows: tuple[RateRow, ...]
    warnings: tuple[str, ...]
    plan: GoldPlan | None = None

    def row(self, method: str) -> RateRow:
        return next(r for r in self.rows if r.method == method)


def too_small(n_gold: int) -> str | None:
    """Why ``n_gold`` gold items cannot anchor a rate (None when they can)."""
    if n_gold < MIN_GOLD:
        return (
            f"{n_gold} gold item(s): at least {MIN_GOLD} are needed (the intervals' variance is "
            f"estimated from the gold items); label more, from the judged items at random"
        )
    return None


def gold_warnings(gold: np.ndarray) -> list[str]:
    """What is shaky about a gold sample that is large enough to use (:data:`SMALL_GOLD`,
    :data:`MIN_CLASS`)."""
    n, pos = int(gold.size), int(gold.sum())
    out = []
    if n < SMALL_GOLD:
        out.append(
            f"small gold sample: {n} gold items (< {SMALL_GOLD}); the normal intervals' "
            "coverage may fall short of 1 - alpha"
        )
    if min(pos, n - pos) < MIN_CLASS:
        which = "gold = 1" if pos < n - pos else "gold = 0"
        out.append(
            f"few gold items of one class: {min(pos, n - pos)} with {which} (< {MIN_CLASS}); the "
            "normal intervals' coverage may fall short of 1 - alpha (label more gold items)"
        )
    return out


def anchored_rates(
    gold: ArrayLike,
    judge_gold: ArrayLike,
    judge_unlabelled: ArrayLike,
    judge: str,
    alpha: float = 0.05,
    half_width: float | None = None,
) -> AnchoredRates:
    """The PPI++, judge-only and gold-only estimates of one rate (see the module doc).

    ``gold`` (0/1) and ``judge_gold`` are aligned over the gold items; ``judge_unlabelled``
    holds the judge scores of the judged items without gold. ``half_width``: also plan the gold
    sample size for that half-width, with this gold sample as the pilot
    (:func:`kit.stats.ppi.plan_gold_size`). Raises ``ValueError`` on a gold sample
    :func:`too_small` or no unlabelled item (callers check first and say where)."""
    y = np.asarray(gold, dtype=float).reshape(-1)
    fg = np.asarray(judge_gold, dtype=float).reshape(-1)
    fu = np.asarray(judge_unlabelled, dtype=float).reshape(-1)
    reason = too_small(y.size)
    if reason is not None:
        raise ValueError(reason)
    if fu.size == 0:
        raise ValueError("no unlabelled item: every judged item has gold")
    f_all = np.concatenate([fg, fu])
    ests: dict[str, MeanEstimate] = {
        "ppi": ppi_mean(y, fg, fu, alpha),
        "judge_only": classical_mean(f_all, alpha),
        "gold_only": classical_mean(y, alpha),
    }
    relative = {"ppi": "gold", "judge_only": judge, "gold_only": "gold"}
    rows = tuple(
        RateRow(
            method=m,
            estimate=ests[m].estimate,
            ci_low=ests[m].ci_low,
            ci_high=ests[m].ci_high,
            se=ests[m].se,
            n=ests[m].n if m == "gold_only" else int(f_all.size),
            lam=ests[m].lam,
            relative_to=relative[m],
            description=DESCRIPTIONS[m],
        )
        for m in METHODS
    )
    plan = (
        None
        if half_width is None
        else plan_gold_size(y, fg, f_all, half_width, alpha, min_gold=MIN_GOLD)
    )
    return AnchoredRates(
        judge=judge,
        alpha=alpha,
        n_judged=int(f_all.size),
        n_gold=int(y.size),
        n_unlabelled=int(fu.size),
        gold_positives=int(y.sum()),
        rows=rows,
        warnings=tuple(gold_warnings(y)),
        plan=plan,
    )
