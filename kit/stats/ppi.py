"""Prediction-powered inference for a mean (a rate): PPI, PPI++, and the labelling planner (pure).

Setting. N + n items were judged by an instrument (a judge score f in [0, 1], or 0/1); a uniform
random subset of n of them also carries a gold label Y in {0, 1}; the other N are *unlabelled*.
The target is theta = E[Y], the gold rate over the judged population.

* **PPI** (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered inference",
  Science 382, 2023; Eq. 1 and Thm 1, mean estimation): the judge's mean on the unlabelled items,
  corrected by the *rectifier* -- the mean gold-minus-judge difference on the gold items::

      theta_PP = mean_N(f) - mean_n(f - Y)

* **PPI++** (Angelopoulos, Duchi, Zrnic, "PPI++: Efficient prediction-powered inference",
  arXiv:2311.01453, 2023; Eq. 3 for the mean, and Example 6.1 / Eq. 11 for the tuned lambda):
  the judge is given a weight lambda, ::

      theta_lambda = lambda * mean_N(f) + mean_n(Y - lambda * f),

  unbiased for every lambda (lambda = 1 is PPI, lambda = 0 the gold-only mean); the lambda that
  minimises the asymptotic variance is ::

      lambda_hat = Cov_n(Y, f) / ((1 + n / N) * Var_{n+N}(f)),   clipped to [0, 1],

  so a useless judge (no covariance with gold) gets lambda = 0 and the estimate falls back to the
  gold-only mean, never worse than it asymptotically.

* **Interval** (the CLT interval of both papers)::

      theta_lambda +- z_{1-alpha/2} * sqrt(lambda^2 Var_N(f) / N + Var_n(Y - lambda f) / n)

Estimators of variance follow ppi-python (github.com/aangelopoulos/ppi_py, the reference
implementation of both papers), so results agree with it to rounding: Cov_n and the Var inside
the interval are the plug-in (divide by the count) moments; Var_{n+N}(f) in lambda_hat is the
unbiased (divide by count - 1) variance of the judge over every judged item. The interval is not
clipped to [0, 1] (as ppi-python's). The *classical* interval (gold-only) is the same CLT interval
with lambda = 0: mean_n(Y) +- z * sd_n(Y) / sqrt(n).

Assumption: the gold items are a uniform random subset of the judged items (so gold and
unlabelled items are exchangeable). Under a stratified design with known sampling weights, pass
``weights`` (inverse inclusion probabilities); the estimates become the weighted ones of
ppi-python's ``w``/``w_unlabeled`` (weights normalised to mean 1 within the labelled and within
the unlabelled part).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import norm
from scipy.stats import t as student_t

from kit.core.errors import check_param


@dataclass(frozen=True)
class MeanEstimate:
    """A point estimate of a rate with its two-sided 1 - alpha normal interval.

    ``lam`` is the judge's weight (1 for plain PPI, the tuned value for PPI++, None for an
    estimate that is not prediction-powered); ``se`` the standard error the interval uses."""

    estimate: float
    ci_low: float
    ci_high: float
    se: float
    alpha: float
    n: int
    lam: float | None = None


def z_value(alpha: float) -> float:
    """z_{1 - alpha/2}, the two-sided normal quantile."""
    check_param("alpha", alpha, 0.0 < alpha < 1.0, "in (0, 1)", "z_value")
    return float(norm.ppf(1.0 - alpha / 2.0))


def _vec(x: ArrayLike, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float).reshape(-1)
    check_param(name, f"{a.size} values", a.size >= 1, "non-empty", "ppi")
    check_param(name, "non-finite values", bool(np.isfinite(a).all()), "finite", "ppi")
    return a


def _weights(w: ArrayLike | None, size: int, name: str) -> np.ndarray:
    """Weights normalised to mean 1 (ppi-python's ``construct_weight_vector``); ones if None."""
    if w is None:
        return np.ones(size)
    a = np.asarray(w, dtype=float).reshape(-1)
    check_param(name, f"{a.size} weights", a.size == size, f"{size} weights", "ppi")
    check_param(name, "a weight <= 0", bool((a > 0).all() and np.isfinite(a).all()), "> 0", "ppi")
    return a / a.sum() * size


def t_value(alpha: float, df: int) -> float:
    """t_{1 - alpha/2, df}, the two-sided quantile of Student's t with ``df`` degrees of freedom."""
    check_param("alpha", alpha, 0.0 < alpha < 1.0, "in (0, 1)", "t_value")
    check_param("df", df, df >= 1, ">= 1", "t_value")
    return float(student_t.ppf(1.0 - alpha / 2.0, df))


def _interval(
    estimate: float, se: float, alpha: float, n: int, lam: float | None, df: int | None = None
) -> MeanEstimate:
    """estimate +- q se: q the normal quantile, or Student's t with ``df`` degrees of freedom."""
    half = (z_value(alpha) if df is None else t_value(alpha, df)) * se
    return MeanEstimate(
        estimate=float(estimate),
        ci_low=float(estimate - half),
        ci_high=float(estimate + half),
        se=float(se),
        alpha=alpha,
        n=n,
        lam=lam,
    )


def ppi_lambda(
    gold: ArrayLike,
    judge_gold: ArrayLike,
    judge_unlabelled: ArrayLike,
    weights_gold: ArrayLike | None = None,
    weights_unlabelled: ArrayLike | None = None,
) -> float:
    """The power-tuned lambda of PPI++ for a mean (Angelopoulos, Duchi & Zrnic 2023, Eq. 11 with
    the mean's Hessian = 1): lambda_hat = Cov_n(Y, f) / ((1 + n/N) Var_{n+N}(f)), clipped to
    [0, 1]. Moments are those of ppi-python: plug-in covariance over the gold items, unbiased
    variance of the judge over all judged items; with weights, of the weighted centred scores
    (centred at the PPI (lambda = 1) estimate). A judge that is constant over every judged item
    carries no information: lambda = 0 (any lambda gives the same estimate then)."""
    y, fg, fu = _vec(gold, "gold"), _vec(judge_gold, "judge_gold"), _vec(judge_unlabelled, "judge")
    check_param("judge_gold", f"{fg.size} values", fg.size == y.size, f"{y.size} values", "ppi")
    n, big_n = y.size, fu.size
    w, wu = _weights(weights_gold, n, "weights_gold"), _weights(weights_unlabelled, big_n, "w")
    centre = float(np.mean(wu * fu) + np.mean(w * (y - fg)))  # the PPI estimate (lambda = 1)
    g, gh, ghu = w * (y - centre), w * (fg - centre), wu * (fu - centre)
    cov = float(np.mean((g - g.mean()) * (gh - gh.mean())))
    all_hat = np.concatenate([gh, ghu])
    var = float(np.var(all_hat, ddof=1)) if all_hat.size > 1 else 0.0
    if var <= 0.0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / big_n) * var), 0.0, 1.0))


def ppi_mean(
    gold: ArrayLike,
    judge_gold: ArrayLike,
    judge_unlabelled: ArrayLike,
    alpha: float = 0.05,
    lam: float | None = None,
    weights_gold: ArrayLike | None = None,
    weights_unlabelled: ArrayLike | None = None,
) -> MeanEstimate:
    """Prediction-powered estimate of E[Y] and its 1 - alpha CLT interval.

    ``lam=None`` is PPI++ (lambda tuned by :func:`ppi_lambda`, Angelopoulos, Duchi & Zrnic
    2023, Eq. 3 and 11); ``lam=1.0`` is plain PPI (Angelopoulos et al. 2023, Science, Thm 1 /
    Eq. 1 for the mean). theta = lambda mean_N(w f) + mean_n(w (Y - lambda f));
    se^2 = Var_N(lambda w f) / N + Var_n(w (Y - lambda f)) / n (plug-in variances)."""
    y, fg, fu = _vec(gold, "gold"), _vec(judge_gold, "judge_gold"), _vec(judge_unlabelled, "judge")
    check_param("judge_gold", f"{fg.size} values", fg.size == y.size, f"{y.size} values", "ppi")
    n, big_n = y.size, fu.size
    w, wu = _weights(weights_gold, n, "weights_gold"), _weights(weights_unlabelled, big_n, "w")
    if lam is None:
        lam = ppi_lambda(y, fg, fu, w, wu)
    check_param("lam", lam, 0.0 <= lam <= 1.0, "in [0, 1]", "ppi_mean")
    estimate = float(np.mean(wu * lam * fu) + np.mean(w * (y - lam * fg)))
    imputed = float(np.std(wu * lam * fu)) / math.sqrt(big_n)
    rectifier = float(np.std(w * (y - lam * fg))) / math.sqrt(n)
    return _interval(estimate, math.hypot(imputed, rectifier), alpha, n, float(lam))


def classical_mean(
    values: ArrayLike, alpha: float = 0.05, weights: ArrayLike | None = None
) -> MeanEstimate:
    """The classical CLT interval of a mean: mean(w x) +- z sd(w x) / sqrt(n) (plug-in sd), the
    baseline of both PPI papers (ppi-python's ``classical_mean_ci``). Used for the gold-only
    rate (the PPI++ estimate with lambda = 0) and for the judge-only rate over every judged
    item."""
    x = _vec(values, "values")
    w = _weights(weights, x.size, "weights")
    return _interval(
        float(np.mean(w * x)), float(np.std(w * x)) / math.sqrt(x.size), alpha, x.size, None
    )


# -- planning a labelling budget -----------------------------------------------------------


@dataclass(frozen=True)
class GoldPlan:
    """How many gold labels a target half-width needs (:func:`plan_gold_size`).

    ``n_gold`` is None when no n below the number of judged items reaches the target;
    ``half_width`` is then the best one reachable (at ``n_best``). ``n_gold_only`` is what a
    gold-only estimate would need for the same half-width (the saving PPI++ buys)."""

    target_half_width: float
    alpha: float
    n_judged: int
    n_gold: int | None
    half_width: float
    n_best: int
    lam: float
    n_gold_only: int
    pilot_n: int


def ppi_half_widths(
    n: np.ndarray,
    n_judged: int,
    var_gold: float,
    var_judge: float,
    cov: float,
    alpha: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Projected PPI++ half-width and lambda for n gold items among ``n_judged`` (N = n_judged -
    n unlabelled), from population moments: lambda(n) = clip(cov / ((1 + n/N) var_f), 0, 1);
    half(n) = z sqrt((var_Y - 2 lambda cov + lambda^2 var_f) / n + lambda^2 var_f / N) -- the
    variance of the PPI++ interval above with the pilot's moments in place of the sample's."""
    n = np.asarray(n, dtype=float)
    big_n = n_judged - n
    if var_judge > 0:
        lam = np.clip(cov / ((1.0 + n / big_n) * var_judge), 0.0, 1.0)
    else:
        lam = np.zeros_like(n)
    rect = np.maximum(var_gold - 2 * lam * cov + lam**2 * var_judge, 0.0)
    return z_value(alpha) * np.sqrt(rect / n + lam**2 * var_judge / big_n), lam


def plan_gold_size(
    pilot_gold: ArrayLike,
    pilot_judge: ArrayLike,
    judge_all: ArrayLike,
    half_width: float,
    alpha: float = 0.05,
    min_gold: int = 2,
) -> GoldPlan:
    """The smallest gold sample size n whose PPI++ interval is projected to have half-width
    <= ``half_width``, from a pilot: the pilot's gold labels and judge scores give Var(Y) and
    Cov(Y, f); every judged item's score (``judge_all``, the pool the gold is drawn from) gives
    Var(f) and the pool size. Uses :func:`ppi_half_widths` for every n in [min_gold, pool - 1]
    (the planned gold items come out of the pool, so N = pool - n). A projection: the moments
    are the pilot's estimates, so a pilot of a few dozen items gives a rough n."""
    y, fg, fa = (
        _vec(pilot_gold, "pilot_gold"),
        _vec(pilot_judge, "pilot_judge"),
        _vec(judge_all, "judge_all"),
    )
    check_param("pilot_judge", f"{fg.size} values", fg.size == y.size, f"{y.size} values", "plan")
    check_param("half_width", half_width, half_width > 0, "> 0", "plan_gold_size")
    check_param(
        "judge_all",
        f"{fa.size} items",
        fa.size >= min_gold + 1,
        f">= {min_gold + 1} items",
        "plan_gold_size",
    )
    var_y = float(np.var(y))
    cov = float(np.mean((y - y.mean()) * (fg - fg.mean())))
    var_f = float(np.var(fa, ddof=1))
    ns = np.arange(min_gold, fa.size, dtype=float)
    half, lam = ppi_half_widths(ns, fa.size, var_y, var_f, cov, alpha)
    ok = np.flatnonzero(half <= half_width)
    best = int(np.argmin(half))
    pick = int(ok[0]) if ok.size else best
    z = z_value(alpha)
    return GoldPlan(
        target_half_width=float(half_width),
        alpha=alpha,
        n_judged=int(fa.size),
        n_gold=int(ns[pick]) if ok.size else None,
        half_width=float(half[pick]),
        n_best=int(ns[best]),
        lam=float(lam[pick]),
        n_gold_only=max(min_gold, math.ceil(z * z * var_y / half_width**2)),
        pilot_n=int(y.size),
    )


# -- clustered items (several citations of one answer) --------------------------------------


def _cluster_codes(clusters: ArrayLike, size: int, name: str) -> np.ndarray:
    c = np.asarray(clusters, dtype=object).reshape(-1)
    check_param(name, f"{c.size} cluster ids", c.size == size, f"{size} cluster ids", "ppi")
    return c


def cluster_variance(psi: np.ndarray, clusters: np.ndarray) -> tuple[float, int]:
    """CR1 cluster-robust variance of a sum of per-item influence terms ``psi`` (already
    centred and scaled, so that the estimator minus its target is ~ sum(psi)):
    G / (G - 1) * sum_g (sum_{i in g} psi_i)^2, G = the number of clusters (Liang & Zeger 1986;
    the small-sample factor of :mod:`kit.stats.cluster`'s ``cr1``). Returns (variance, G); with
    singleton clusters it is the plug-in iid variance times G / (G - 1)."""
    _, inv = np.unique(clusters.astype(str), return_inverse=True)
    sums = np.bincount(inv, weights=psi)
    g = int(sums.size)
    check_param("clusters", g, g >= 2, "at least 2 clusters", "cluster_variance")
    return float(g / (g - 1) * np.sum(sums**2)), g


def cluster_ppi_mean(
    gold: ArrayLike,
    judge_gold: ArrayLike,
    judge_unlabelled: ArrayLike,
    clusters_gold: ArrayLike,
    clusters_unlabelled: ArrayLike,
    alpha: float = 0.05,
    lam: float | None = None,
) -> MeanEstimate:
    """PPI++ (or PPI with ``lam=1``) for a mean whose items come in clusters (e.g. the citations
    of one answer: one generator, one retrieval, so not independent).

    The estimate is :func:`ppi_mean`'s, with lambda tuned as there (any lambda in [0, 1] keeps it
    unbiased; the tuned one is efficient for independent items and still valid here). Its
    variance is the cluster-robust (CR1) variance of the estimator's linearisation: theta_hat -
    theta ~ sum_i psi_i with psi_i = lambda (f_i - mean_N f) / N for an unlabelled item and
    psi_j = ((Y_j - lambda f_j) - mean_n(Y - lambda f)) / n for a gold item, summed within each
    cluster before squaring -- a cluster holding both gold and unlabelled items contributes both
    terms together, so their covariance is counted (:func:`cluster_variance`). With one item per
    cluster it is ppi-python's plug-in variance times G / (G - 1). Interval: Student's t with
    G - 1 degrees of freedom, G the clusters (Cameron & Miller 2015, J. Human Resources 50(2),
    Sec. VI: CR1 with a normal reference over-rejects with few clusters; t(G - 1) is the usual
    correction; it tends to the PPI papers' normal interval as G grows). Assumption: clusters independent; gold items a uniform random subset of the judged
    items (drawn over items, not clusters)."""
    y, fg, fu = _vec(gold, "gold"), _vec(judge_gold, "judge_gold"), _vec(judge_unlabelled, "judge")
    check_param("judge_gold", f"{fg.size} values", fg.size == y.size, f"{y.size} values", "ppi")
    cg = _cluster_codes(clusters_gold, y.size, "clusters_gold")
    cu = _cluster_codes(clusters_unlabelled, fu.size, "clusters_unlabelled")
    n, big_n = y.size, fu.size
    if lam is None:
        lam = ppi_lambda(y, fg, fu)
    check_param("lam", lam, 0.0 <= lam <= 1.0, "in [0, 1]", "cluster_ppi_mean")
    rect = y - lam * fg
    estimate = float(lam * fu.mean() + rect.mean())
    psi = np.concatenate([lam * (fu - fu.mean()) / big_n, (rect - rect.mean()) / n])
    var, g = cluster_variance(psi, np.concatenate([cu, cg]))
    return _interval(estimate, math.sqrt(var), alpha, n, float(lam), df=g - 1)


def cluster_classical_mean(
    values: ArrayLike, clusters: ArrayLike, alpha: float = 0.05
) -> MeanEstimate:
    """The classical interval of a mean over clustered items: mean(x) +- t_{G-1} se, se^2 the CR1
    cluster-robust variance of the mean (:func:`cluster_variance` of (x_i - mean) / n), G the
    clusters (the reference as in :func:`cluster_ppi_mean`)."""
    x = _vec(values, "values")
    c = _cluster_codes(clusters, x.size, "clusters")
    var, g = cluster_variance((x - x.mean()) / x.size, c)
    return _interval(float(x.mean()), math.sqrt(var), alpha, x.size, None, df=g - 1)


def design_effect(values: ArrayLike, clusters: ArrayLike) -> float:
    """Kish's design effect of a mean over clustered items: the CR1 cluster-robust variance of
    the mean over the iid one (plug-in variance / n); floored at 1 (a clustered sample is never
    taken as more informative than an independent one: Korn & Graubard 1998 truncate likewise).
    1 when the values are constant (no variance to inflate)."""
    x = _vec(values, "values")
    c = _cluster_codes(clusters, x.size, "clusters")
    iid = float(np.var(x)) / x.size
    if iid <= 0.0:
        return 1.0
    var, _ = cluster_variance((x - x.mean()) / x.size, c)
    return max(1.0, var / iid)
