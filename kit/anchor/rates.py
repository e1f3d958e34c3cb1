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

Intervals (each row names its own in ``interval``): PPI++ and gold-only take the CLT normal
interval of ppi-python (``ppi_mean_ci`` / ``classical_mean_ci``), so their widths compare (gold-only
is PPI++ with lambda = 0). The judge-only rate of a 0/1 judge is a proportion and takes the
kit's interval for proportions, Wilson's (:func:`kit.stats.wilson.wilson_ci`); a judge scoring
in [0, 1] gets the CLT interval of its mean.

Clustered items (``clusters_gold`` / ``clusters_unlabelled``: e.g. the citations of one answer,
correlated through one generator and one retrieval): every interval accounts for the clusters --
PPI++ and gold-only by the cluster-robust (CR1) variance of their linearisation with a
Student t reference on G - 1 degrees of freedom, G the clusters
(:func:`kit.stats.ppi.cluster_ppi_mean`, :func:`kit.stats.ppi.cluster_classical_mean`), the
judge-only Wilson interval at the effective sample size n / deff (Kish's design effect by
cluster, :func:`kit.stats.wilson.wilson_effective`). Lambda is tuned as for independent items
(every lambda keeps the estimate unbiased). What "too small" means for the gold sample:

* fewer than :data:`MIN_GOLD` gold items is refused (:func:`too_small`): the intervals'
  normal approximation rests on a variance estimated from the gold items; so are gold labels
  of one class only (:func:`one_class`), whose estimated variance is 0;
* fewer than :data:`SMALL_GOLD` gold items, or fewer than :data:`MIN_CLASS` of either class, is
  reported with a warning: the interval is computed but its coverage may fall short of
  1 - alpha (the rule of thumb n p >= 10 and n (1 - p) >= 10 for the normal approximation of a
  binomial).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from kit.stats.ppi import (
    GoldPlan,
    MeanEstimate,
    classical_mean,
    cluster_classical_mean,
    cluster_ppi_mean,
    design_effect,
    plan_gold_size,
    ppi_mean,
)
from kit.stats.wilson import wilson_ci, wilson_effective

MIN_GOLD = 10
SMALL_GOLD = 30
MIN_CLASS = 10
FEW_CLUSTERS = 20  # below it, cluster-robust intervals are flagged (cluster_warnings)
ASSUMPTION = (
    "the gold items are a uniform random subset of the judged items (each judged item equally "
    "likely to be gold-labelled, independently of its judge score and gold label)"
)
STRATIFIED_ASSUMPTION = (
    "stratified design: within each stratum the gold items are a uniform random subset of that "
    "stratum's judged items; the strata sizes are known (counted in the judged table) and weight "
    "each gold item by M_h / n_h and each unlabelled item by M_h / (M_h - n_h)"
)
CLUSTERED_ASSUMPTION = (
    "; items come in clusters ({name}): clusters independent, items within one may be "
    "correlated (every interval is cluster-robust)"
)
METHODS = ("ppi", "judge_only", "gold_only")
INTERVALS = {
    "clt": "normal (CLT) interval, plug-in variance (items independent)",
    "clt_cluster": "t interval ({g} - 1 degrees of freedom), cluster-robust (CR1) variance by "
    "{name} ({g} clusters)",
    "wilson": "Wilson score interval (a proportion of 0/1 labels; items independent)",
    "wilson_cluster": "Wilson score interval at the effective n = n / {deff:.3g} (Kish design "
    "effect by {name}, {g} clusters; a proportion of 0/1 labels)",
}
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
    interval: str = INTERVALS["clt"]  # which interval (INTERVALS), in words


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
    strata: tuple[tuple[str, int, int], ...] | None = None  # (stratum, judged, gold) if stratified
    clusters: tuple[str, int] | None = None  # (what a cluster is, how many) if clustered

    @property
    def assumption(self) -> str:
        base = ASSUMPTION if self.strata is None else STRATIFIED_ASSUMPTION
        if self.clusters is None:
            return base
        return base + CLUSTERED_ASSUMPTION.format(name=self.clusters[0])

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


def one_class(gold: ArrayLike) -> str | None:
    """Why gold labels of a single class cannot anchor a rate (None when both occur): the
    gold-only and PPI++ variances are then estimated as 0 and the intervals would be a point,
    claiming a certainty no sample has (e.g. 40 gold items, none wrong, of a rare rate)."""
    y = np.asarray(gold, dtype=float).reshape(-1)
    if y.size and (y.min() == y.max()):
        return (
            f"all {y.size} gold labels are {int(y[0])}: with one class the intervals' variance is "
            "estimated as 0 and the interval would be a point; label more items, from the judged "
            "items at random, until both classes occur (a rare rate needs a larger gold sample)"
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


def cluster_warnings(
    clusters: tuple[str, int] | None, gold_clusters: np.ndarray | None
) -> list[str]:
    """What is shaky about a clustered design: fewer than :data:`FEW_CLUSTERS` clusters among
    the judged or the gold items (cluster-robust variances are themselves estimated from the
    clusters; with few, the t reference narrows the shortfall but does not remove it)."""
    if clusters is None or gold_clusters is None:
        return []
    name, g_all = clusters
    g_gold = int(np.unique(gold_clusters).size)
    if min(g_all, g_gold) >= FEW_CLUSTERS:
        return []
    return [
        f"few clusters ({name}): {g_all} among the judged items, {g_gold} among the gold items "
        f"(< {FEW_CLUSTERS}); the cluster-robust intervals (t reference, G - 1 degrees of "
        "freedom) may cover less than 1 - alpha"
    ]


def stratified_weights(
    strata_gold: ArrayLike, strata_unlabelled: ArrayLike
) -> tuple[np.ndarray, np.ndarray, tuple[tuple[str, int, int], ...]]:
    """Design weights of a stratified gold sample (Horvitz-Thompson / inverse inclusion
    probability): stratum h has M_h judged items of which n_h are gold, drawn uniformly within
    it; a gold item weighs M_h / n_h and an unlabelled one M_h / (M_h - n_h), so the weighted
    means of the rectifier over gold and of the judge over the unlabelled items are stratified
    (Hajek) estimates of their means over all judged items -- the ``w`` / ``w_unlabeled`` of
    ppi-python's weighted PPI. Also returns (stratum, M_h, n_h) per stratum, sorted. Raises
    ``ValueError`` naming a stratum without gold (its items cannot be anchored)."""
    sg = np.asarray(strata_gold, dtype=object).reshape(-1).astype(str)
    su = np.asarray(strata_unlabelled, dtype=object).reshape(-1).astype(str)
    names = sorted({str(x) for x in (*sg, *su)})
    n_h = {h: int((sg == h).sum()) for h in names}
    m_h = {h: n_h[h] + int((su == h).sum()) for h in names}
    empty = [h for h in names if n_h[h] == 0]
    if empty:
        raise ValueError(
            f"stratum {empty[0]!r} has {m_h[empty[0]]} judged items and no gold item"
            + (f" ({len(empty)} strata without gold)" if len(empty) > 1 else "")
        )
    full = [h for h in names if n_h[h] == m_h[h]]
    if full:  # its judge term has no unlabelled item: the PPI++ sum would leave it out
        raise ValueError(
            f"stratum {full[0]!r}: all of its {m_h[full[0]]} judged items have gold (a stratum "
            "needs unlabelled items beside its gold)"
        )
    w = np.asarray([m_h[h] / n_h[h] for h in sg], dtype=float)
    wu = np.asarray([m_h[h] / (m_h[h] - n_h[h]) for h in su], dtype=float)
    return w, wu, tuple((h, m_h[h], n_h[h]) for h in names)


def anchored_rates(
    gold: ArrayLike,
    judge_gold: ArrayLike,
    judge_unlabelled: ArrayLike,
    judge: str,
    alpha: float = 0.05,
    half_width: float | None = None,
    strata_gold: ArrayLike | None = None,
    strata_unlabelled: ArrayLike | None = None,
    clusters_gold: ArrayLike | None = None,
    clusters_unlabelled: ArrayLike | None = None,
    cluster_name: str = "cluster",
) -> AnchoredRates:
    """The PPI++, judge-only and gold-only estimates of one rate (see the module doc).

    ``gold`` (0/1) and ``judge_gold`` are aligned over the gold items; ``judge_unlabelled``
    holds the judge scores of the judged items without gold. ``half_width``: also plan the gold
    sample size for that half-width, with this gold sample as the pilot
    (:func:`kit.stats.ppi.plan_gold_size`). Raises ``ValueError`` on a gold sample
    :func:`too_small` or no unlabelled item (callers check first and say where).

    ``strata_gold`` / ``strata_unlabelled`` (one stratum label per item): a stratified design;
    PPI++ and gold-only use the design weights of :func:`stratified_weights` (the judge-only
    rate is the plain mean over every judged item either way). The planner assumes a uniform
    design.

    ``clusters_gold`` / ``clusters_unlabelled`` (one cluster id per item, ``cluster_name`` saying
    what a cluster is): cluster-robust intervals for every row (module doc). Not combined with
    strata (a ``ValueError``)."""
    y = np.asarray(gold, dtype=float).reshape(-1)
    fg = np.asarray(judge_gold, dtype=float).reshape(-1)
    fu = np.asarray(judge_unlabelled, dtype=float).reshape(-1)
    reason = too_small(y.size) or one_class(y)
    if reason is not None:
        raise ValueError(reason)
    if fu.size == 0:
        raise ValueError("no unlabelled item: every judged item has gold")
    f_all = np.concatenate([fg, fu])
    w = wu = strata = None
    if strata_gold is not None or strata_unlabelled is not None:
        if strata_gold is None or strata_unlabelled is None:
            raise ValueError("give the strata of both the gold and the unlabelled items")
        w, wu, strata = stratified_weights(strata_gold, strata_unlabelled)
    clustered = clusters_gold is not None or clusters_unlabelled is not None
    if clustered and (clusters_gold is None or clusters_unlabelled is None):
        raise ValueError("give the clusters of both the gold and the unlabelled items")
    if clustered and strata is not None:
        raise ValueError("a stratified design with clustered items is not supported")
    if clustered:
        ests, intervals, c_all, g_all = _cluster_estimates(
            y, fg, fu, clusters_gold, clusters_unlabelled, alpha, cluster_name
        )
        clusters: tuple[str, int] | None = (cluster_name, g_all)
    else:
        c_all, g_all, clusters = None, 0, None
        ests = {
            "ppi": ppi_mean(y, fg, fu, alpha, None, w, wu),
            "judge_only": classical_mean(f_all, alpha),
            "gold_only": classical_mean(y, alpha, w),
        }
        intervals = {m: INTERVALS["clt"] for m in ("ppi", "judge_only", "gold_only")}
    if bool(np.isin(f_all, (0.0, 1.0)).all()):  # a 0/1 judge: its rate is a proportion
        ests["judge_only"], intervals["judge_only"] = _proportion_judge(
            f_all, alpha, c_all, g_all, cluster_name
        )
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
            interval=intervals[m],
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
        warnings=tuple(
            gold_warnings(y)
            + cluster_warnings(
                clusters, np.asarray(clusters_gold).astype(str) if clustered else None
            )
        ),
        plan=plan,
        strata=strata,
        clusters=clusters,
    )


def _cluster_estimates(
    y: np.ndarray,
    fg: np.ndarray,
    fu: np.ndarray,
    clusters_gold: ArrayLike,
    clusters_unlabelled: ArrayLike,
    alpha: float,
    cluster_name: str,
) -> tuple[dict[str, MeanEstimate], dict[str, str], np.ndarray, int]:
    """Cluster-robust PPI++, judge-only and gold-only estimates and their interval texts; the
    cluster of every judged item and how many clusters they form."""
    f_all = np.concatenate([fg, fu])
    cg = np.asarray(clusters_gold, dtype=object).reshape(-1).astype(str)
    cu = np.asarray(clusters_unlabelled, dtype=object).reshape(-1).astype(str)
    c_all = np.concatenate([cg, cu])
    g_all = int(np.unique(c_all).size)
    if g_all < 2 or np.unique(cg).size < 2:
        raise ValueError(
            f"{g_all} {cluster_name} cluster(s) among the judged items and "
            f"{np.unique(cg).size} among the gold items: cluster-robust intervals need at "
            "least 2 of each"
        )
    ests: dict[str, MeanEstimate] = {
        "ppi": cluster_ppi_mean(y, fg, fu, cg, cu, alpha),
        "judge_only": cluster_classical_mean(f_all, c_all, alpha),
        "gold_only": cluster_classical_mean(y, cg, alpha),
    }
    text = INTERVALS["clt_cluster"]
    intervals = {
        "ppi": text.format(name=cluster_name, g=g_all),
        "judge_only": text.format(name=cluster_name, g=g_all),
        "gold_only": text.format(name=cluster_name, g=int(np.unique(cg).size)),
    }
    return ests, intervals, c_all, g_all


def _proportion_judge(
    f_all: np.ndarray, alpha: float, c_all: np.ndarray | None, g_all: int, cluster_name: str
) -> tuple[MeanEstimate, str]:
    """A 0/1 judge's rate as a proportion: Wilson (design-effect adjusted when clustered,
    ``c_all`` given) and its interval text."""
    k = int(f_all.sum())
    if c_all is not None:
        deff = design_effect(f_all, c_all)
        p = wilson_effective(k, int(f_all.size), deff, 1.0 - alpha)
        interval = INTERVALS["wilson_cluster"].format(deff=deff, name=cluster_name, g=g_all)
    else:
        deff = 1.0
        p = wilson_ci(k, int(f_all.size), 1.0 - alpha)
        interval = INTERVALS["wilson"]
    se = math.sqrt(p.estimate * (1 - p.estimate) * deff / f_all.size)
    return MeanEstimate(p.estimate, p.lo, p.hi, se, alpha, int(f_all.size)), interval
