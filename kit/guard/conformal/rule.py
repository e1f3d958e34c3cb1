"""Split-conformal flag rule for the citation guard (pure functions).

Paper: "Evaluating and Guarding Citation Faithfulness in Agentic Scientific Synthesis"
(seed 001, arXiv 2607.20527), Section 3 "S3 Calibration", Appendix S3 (calibration-size
ablation), Appendix S5 "Calibration" (k = ceil((n_cal + 1)(1 - alpha))) and Appendix S6
(calibration-negative difficulty).

The rule. Let s_(1) <= ... <= s_(n) be verifier scores of *unsupported* calibration citations
(higher score = more support). For a tolerance alpha, k = ceil((n + 1)(1 - alpha)) and
tau = s_(k). A citation is flagged when its score s <= tau.

Guarantee (assumption: the new unsupported citation's score is exchangeable with the n
calibration scores). The rank of the new score among the n + 1 is uniform (ties broken
at random), so P(s_new <= s_(k)) >= k / (n + 1) >= 1 - alpha: at least 1 - alpha of
unsupported citations are caught, marginally over the calibration draw. Ties are broken
conservatively -- flag uses ``<=``, so a tie with tau is always flagged, which can only raise
the catch rate. When k > n no calibration score is high enough to carry the guarantee and the
rule refuses (:class:`kit.core.errors.ConfigError`) instead of returning tau = max or +inf silently.

Floating point: (n + 1)(1 - alpha) is computed in binary floating point, so for alpha on a
decimal grid an exact integer can come out as 490.00000000000006 and the ceiling jumps by one.
We subtract 1e-9 before the ceiling; this is the convention that reproduces the published QASA
tau curve exactly (all 25 points, |delta| = 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kit.core.errors import ConfigError, check_param

_EPS = 1e-9


def conformal_rank(n: int, alpha: float) -> int:
    """k = ceil((n + 1)(1 - alpha)), the 1-based order statistic of the conformal threshold.

    Appendix S5 of the paper. The 1e-9 guard absorbs binary rounding of (n + 1)(1 - alpha).
    """
    check_param(
        "n", n, isinstance(n, int | np.integer) and n >= 1, "an integer >= 1", "conformal_rank"
    )
    check_param("alpha", alpha, 0.0 < alpha < 1.0, "in (0, 1)", "conformal_rank")
    return rank_of(n, alpha)


def rank_of(n: int, alpha: float) -> int:
    """k = ceil((n + 1)(1 - alpha)) for any n >= 0, unchecked: the rank rule's one home (a
    refusal message names the k an n too small would need)."""
    return math.ceil((n + 1) * (1.0 - alpha) - _EPS)


def _scores(scores: np.ndarray | list[float], func: str) -> np.ndarray:
    arr = np.asarray(scores, dtype=float).ravel()
    check_param("scores", f"array of {arr.size}", arr.size >= 1, "non-empty", func)
    check_param("scores", "array with NaN/inf", bool(np.all(np.isfinite(arr))), "all finite", func)
    return arr


@dataclass(frozen=True)
class Threshold:
    """One operating point: tau and what it achieves on its own calibration set."""

    alpha: float
    n_cal: int
    k: int
    tau: float
    cal_recall: float  # fraction of calibration unsupported scores <= tau (ties included)


def conformal_tau(unsupported_scores: np.ndarray | list[float], alpha: float) -> Threshold:
    """tau = s_(k) on unsupported-class calibration scores; refuse when k > n.

    Section 3 / Appendix S5 of the paper. Assumes exchangeability between the calibration
    unsupported citations and the deployment unsupported citations (Appendix S6 shows what
    happens when it fails: a tau fitted on easy negatives under-covers hard ones).
    """
    s = np.sort(_scores(unsupported_scores, "conformal_tau"))
    n = int(s.size)
    k = conformal_rank(n, alpha)
    if k > n:
        need = min_calibration_size(alpha)
        raise ConfigError(
            "too_little_calibration",
            f"alpha={alpha:g} needs k = ceil((n+1)(1-alpha)) = {k} > n_cal = {n}: "
            f"too few unsupported calibration scores for this guarantee "
            f"(need n_cal >= {need} labelled unsupported citations); raise alpha or label "
            "more negatives",
        )
    tau = float(s[k - 1])
    return Threshold(alpha=float(alpha), n_cal=n, k=k, tau=tau, cal_recall=float(np.mean(s <= tau)))


def naive_tau(unsupported_scores: np.ndarray | list[float], alpha: float) -> float:
    """The naive empirical quantile: tau = s_(k) with k = floor(n (1 - alpha)) (no correction).

    Appendix S3, Table S4 of the paper (0.85 vs 0.92 at n_cal = 25, target 0.90). With
    s_(1) <= ... <= s_(n) the sorted unsupported calibration scores, k is the largest rank whose
    empirical CDF k / n does not exceed 1 - alpha (the "lower" empirical quantile; n = 25,
    alpha = 0.1 gives k = 22). No finite-sample correction: under exchangeability the expected
    catch is about k / (n + 1) = 0.846 at n = 25, below the 0.90 target -- the baseline that
    under-covers at small n_cal. (numpy's default linear interpolation, used before, sits between
    s_(22) and s_(23) and printed 0.872, further from the paper's 0.85.) The same 1e-9 guard as
    :func:`conformal_rank` absorbs binary rounding of n(1 - alpha). When n(1 - alpha) < 1 there
    is no such order statistic and the rule refuses (ConfigError).
    """
    s = np.sort(_scores(unsupported_scores, "naive_tau"))
    check_param("alpha", alpha, 0.0 < alpha < 1.0, "in (0, 1)", "naive_tau")
    k = math.floor(s.size * (1.0 - alpha) + _EPS)
    if k < 1:
        raise ConfigError(
            "too_little_calibration",
            f"naive quantile: n(1 - alpha) = {s.size * (1.0 - alpha):g} < 1, so no order "
            f"statistic s_(floor(n(1-alpha))) exists for n_cal = {s.size}, alpha = {alpha:g}",
        )
    return float(s[k - 1])


def flag(scores: np.ndarray | list[float], tau: float) -> np.ndarray:
    """Flag rule: s <= tau (ties with tau flagged: conservative)."""
    return np.asarray(scores, dtype=float) <= tau


def tau_curve(
    unsupported_scores: np.ndarray | list[float],
    alphas: np.ndarray | list[float],
    deployment_scores: dict[str, np.ndarray] | None = None,
) -> list[dict[str, float | int | str]]:
    """The tau curve over a grid of alphas: one row per alpha (rows sorted by alpha).

    Columns: alpha, n_cal, k, tau, cal_recall, and for every named deployment score set a
    ``flag_rate:<name>`` column -- the review budget (fraction of deployment citations flagged).
    An alpha with k > n_cal raises (explicit refusal), so the whole grid must be feasible.
    """
    rows: list[dict[str, float | int | str]] = []
    for a in sorted(float(x) for x in alphas):
        t = conformal_tau(unsupported_scores, a)
        row: dict[str, float | int | str] = {
            "alpha": a,
            "n_cal": t.n_cal,
            "k": t.k,
            "tau": t.tau,
            "cal_recall": t.cal_recall,
        }
        for name, dep in sorted((deployment_scores or {}).items()):
            row[f"flag_rate:{name}"] = float(np.mean(flag(dep, t.tau)))
        rows.append(row)
    return rows


@dataclass(frozen=True)
class CoverageResult:
    """Held-out catch rate over repeated random calibration/test splits."""

    alpha: float
    n_cal: int
    n_test: int
    splits: int
    conformal_catch: float  # mean over splits of the held-out catch rate
    conformal_catch_sd: float
    naive_catch: float
    naive_catch_sd: float
    frac_splits_below_target: float  # conformal; the standard per-split caveat


def split_coverage(
    unsupported_scores: np.ndarray | list[float],
    alpha: float,
    n_cal: int,
    splits: int,
    rng: np.random.Generator,
    n_test: int | None = None,
) -> CoverageResult:
    """Marginal coverage of the conformal vs naive threshold over repeated random splits.

    Appendix S3 (Table S4: B = 1000 splits, test n = 200, seed 0). Each split draws n_cal
    calibration and n_test test scores without replacement from the pool; tau is fitted on the
    calibration part; the catch rate is the fraction of test scores <= tau. Exchangeability
    holds by construction (random splits of one pool), so the mean catch of the conformal rule
    is >= 1 - alpha up to Monte Carlo error, while the naive quantile can fall short at small
    n_cal.
    """
    pool = _scores(unsupported_scores, "split_coverage")
    n_test = int(pool.size - n_cal) if n_test is None else int(n_test)
    check_param("n_cal", n_cal, n_cal >= 1, "an integer >= 1", "split_coverage")
    check_param("n_test", n_test, n_test >= 1, "an integer >= 1", "split_coverage")
    check_param(
        "n_cal + n_test",
        n_cal + n_test,
        n_cal + n_test <= pool.size,
        f"<= the pool size {pool.size}",
        "split_coverage",
    )
    check_param("splits", splits, splits >= 1, "an integer >= 1", "split_coverage")
    k = conformal_rank(n_cal, alpha)
    if k > n_cal:
        conformal_tau(pool[:n_cal], alpha)  # raises the explicit refusal
    conf = np.empty(splits)
    naive = np.empty(splits)
    for b in range(splits):
        idx = rng.permutation(pool.size)
        cal = np.sort(pool[idx[:n_cal]])
        test = pool[idx[n_cal : n_cal + n_test]]
        conf[b] = np.mean(test <= cal[k - 1])
        naive[b] = np.mean(test <= naive_tau(cal, alpha))
    return CoverageResult(
        alpha=float(alpha),
        n_cal=int(n_cal),
        n_test=n_test,
        splits=int(splits),
        conformal_catch=float(conf.mean()),
        conformal_catch_sd=float(conf.std(ddof=1)) if splits > 1 else float("nan"),
        naive_catch=float(naive.mean()),
        naive_catch_sd=float(naive.std(ddof=1)) if splits > 1 else float("nan"),
        frac_splits_below_target=float(np.mean(conf < 1.0 - alpha)),
    )


def catch_rate(negative_scores: np.ndarray | list[float], tau: float) -> float:
    """Fraction of a (possibly different) negative set caught by tau (Appendix S6 transfer)."""
    s = _scores(negative_scores, "catch_rate")
    return float(np.mean(flag(s, tau)))


def min_calibration_size(alpha: float) -> int:
    """The smallest n with k = ceil((n + 1)(1 - alpha)) <= n: how many unsupported calibration
    citations the rule needs at this alpha (Appendix S5 of the paper; for alpha = 0.1, n = 9).

    Solved from the closed form n >= 1/alpha - 1 and then checked against :func:`conformal_rank`
    itself, so the answer agrees with the refusal rule including its rounding guard.
    """
    check_param("alpha", alpha, 0.0 < alpha < 1.0, "in (0, 1)", "min_calibration_size")
    n = max(1, math.ceil(1.0 / alpha - 1.0 - _EPS))
    while conformal_rank(n, alpha) > n:
        n += 1
    while n > 1 and conformal_rank(n - 1, alpha) <= n - 1:
        n -= 1
    return n


@dataclass(frozen=True)
class MondrianThreshold:
    """Per-type conformal thresholds and the deployment threshold tau = max over types."""

    alpha: float
    per_type: dict[str, Threshold]
    tau: float  # the flag threshold when a deployment citation's type is unknown

    @property
    def types(self) -> list[str]:
        return sorted(self.per_type)


def mondrian_tau(
    unsupported_scores: np.ndarray | list[float],
    types: np.ndarray | list[str],
    alpha: float,
) -> MondrianThreshold:
    """Mondrian (label-conditional, per-type) split-conformal thresholds.

    Vovk, Gammerman & Shafer, *Algorithmic Learning in a Random World* (2005), Section 4.5
    (Mondrian conformal predictors; Vovk, Lindsay, Nouretdinov & Gammerman 2003, "Mondrian
    confidence machine"): the calibration set is split into categories -- here the negative
    type t (e.g. contradicted vs unrelated/NEI) -- and the split-conformal rule of Section 3 /
    Appendix S5 of seed 001 is applied inside each category: with s^t_(1) <= ... <= s^t_(n_t)
    the unsupported calibration scores of type t, tau_t = s^t_(k_t), k_t = ceil((n_t + 1)(1 -
    alpha)). Guarantee per type (assumption: a new unsupported citation of type t is
    exchangeable with the n_t calibration citations of type t): P(s_new <= tau_t | type t) >=
    1 - alpha, whatever the mix of types in deployment.

    Deployment: an audited citation's type is unknown, so the flag threshold is tau = max_t
    tau_t. Flagging s <= tau flags a superset of every per-type rule, so the catch of every
    type is still >= 1 - alpha (the price is a higher review budget than any single tau_t).
    Refuses (ConfigError) when any type has k_t > n_t, naming the type and how many labelled
    unsupported citations of that type are needed.
    """
    s = _scores(unsupported_scores, "mondrian_tau")
    t = np.asarray(types, dtype=object).ravel()
    check_param(
        "types", f"{t.size} labels", t.size == s.size, f"one per score ({s.size})", "mondrian_tau"
    )
    check_param("alpha", alpha, 0.0 < alpha < 1.0, "in (0, 1)", "mondrian_tau")
    names = sorted({str(x) for x in t})
    need = min_calibration_size(alpha)
    short = [(n, int(np.sum(t == n))) for n in names if int(np.sum(t == n)) < need]
    if short:
        listed = ", ".join(f"{name!r} has {count}" for name, count in short)
        raise ConfigError(
            "too_little_calibration",
            f"Mondrian calibration at alpha={alpha:g} needs k = ceil((n+1)(1-alpha)) <= n, i.e. "
            f"at least {need} labelled unsupported citations of EACH negative type; {listed}. "
            "Label more of those types, raise alpha, or calibrate pooled over types",
        )
    per = {name: conformal_tau(s[t == name], alpha) for name in names}
    return MondrianThreshold(
        alpha=float(alpha), per_type=per, tau=max(th.tau for th in per.values())
    )


def catch_verdict(catch: float, target: float) -> str:
    """``ok`` when an achieved catch rate reaches its target, else ``below_target`` (NaN, i.e.
    nothing calibrated, is ``refused``). A row, not a test: on one split a conformal catch may
    fall below 1 - alpha, the guarantee being an average over calibration draws."""
    if not math.isfinite(catch):
        return "refused"
    return "ok" if catch >= target else "below_target"
