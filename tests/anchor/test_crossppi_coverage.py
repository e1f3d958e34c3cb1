"""Issue 56: the cross-fitted anchored rate covers, and is narrower than gold alone, when the
judge is only good once adapted on the gold sample.

Seeded simulation of audits shaped like real ones (SYNTHETIC): 120 runs (answers) of 1-8
citations, a strong run effect (a run's unsupported rate ~ Beta(1, 3), mean 0.25: the truth),
and three signals per citation whose class-conditional means differ; the parent judge reads
only the weak first signal on a wrong scale (a default verifier out of domain), the adapted
one is the kit's own fitted rule (:func:`kit.guard.verifiers.fitted_rule.fit_rule`, what
``--adapt recombine`` fits) on all three, fitted fold by fold on the gold items
(:func:`kit.anchor.cross_fit.cross_fit`, folds keeping runs whole). Gold: 150 citations drawn
uniformly. Over 2000 audits (300 in the fast test) the cluster-robust cross-fitted interval
(lambda = 1, the audit's; power-tuned beside it) must cover the truth at >= 0.93 (nominal
0.95), and be narrower than the gold-only interval and the parent's PPI++ on the same draws.
"""

from __future__ import annotations

import numpy as np
import pytest

from kit.anchor.cross_fit import cross_fit, gold_folds
from kit.guard.verifiers.fitted_rule import fit_rule, fitted_score
from kit.stats.crossppi import cluster_crossppi_mean
from kit.stats.ppi import cluster_classical_mean, cluster_ppi_mean

A, B = 1.0, 3.0
TRUTH = A / (A + B)
SHIFT = np.array([0.3, 2.0, 1.5])  # class-conditional mean difference of each signal
FEATURES = ("entailment", "contradiction", "relatedness")  # names only (the rule's record)


def _audit(rng: np.random.Generator, runs: int = 120, n_gold: int = 150):
    sizes = rng.integers(1, 9, runs)
    p = rng.beta(A, B, runs)
    run = np.repeat(np.arange(runs), sizes)
    y = (rng.random(run.size) < p[run]).astype(float)
    x = rng.normal(size=(run.size, 3)) + y[:, None] * SHIFT
    parent = 1 / (1 + np.exp(-(0.4 * x[:, 0] - 1.5)))  # weak and miscalibrated
    gold = np.sort(rng.choice(run.size, n_gold, replace=False))
    rest = np.setdiff1d(np.arange(run.size), gold)
    return y, x, parent, run, gold, rest


def _fitter(x: np.ndarray, y: np.ndarray, gold: np.ndarray):
    def fit(train: np.ndarray, idx: np.ndarray) -> np.ndarray:
        rule = fit_rule(x[gold[train]], y[gold[train]], FEATURES)
        return fitted_score(rule, x[idx])

    return fit


def _covers(e, truth: float) -> bool:
    return bool(e.ci_low <= truth <= e.ci_high)


def _simulate(seed: int, reps: int) -> tuple[dict[str, float], dict[str, float]]:
    """Coverage of TRUTH and mean width of each interval over ``reps`` seeded audits."""
    rng = np.random.default_rng(seed)
    hits = {"tuned": 0, "lam1": 0, "gold": 0, "parent": 0}
    width: dict[str, list[float]] = {k: [] for k in hits}
    for rep in range(reps):
        y, x, parent, run, gold, rest = _audit(rng)
        _, fold = gold_folds(run[gold], y[gold], 5, rep)
        fitted = cross_fit(fold, gold, rest, _fitter(x, y, gold))
        cg, cu = run[gold], run[rest]
        est = {
            "tuned": cluster_crossppi_mean(
                y[gold], fitted.judge_gold, fitted.judge_unlabelled, cg, cu, lam=None
            ),
            "lam1": cluster_crossppi_mean(
                y[gold], fitted.judge_gold, fitted.judge_unlabelled, cg, cu
            ),
            "gold": cluster_classical_mean(y[gold], cg),
            "parent": cluster_ppi_mean(y[gold], parent[gold], parent[rest], cg, cu),
        }
        for k, e in est.items():
            hits[k] += _covers(e, TRUTH)
            width[k].append(e.ci_high - e.ci_low)
    return {k: v / reps for k, v in hits.items()}, {k: float(np.mean(v)) for k, v in width.items()}


def test_cross_fitted_interval_covers_and_beats_gold_only() -> None:
    """300 audits (4 s): measured over 1000 audits on two seeds the coverage was 0.937 / 0.964
    (tuned), 0.948 / 0.968 (lambda = 1), gold-only 0.928 / 0.953; the bar here is 0.91 (the
    binomial sd at 300 is 0.013), the slow test below holds 0.93 over 2000."""
    cov, width = _simulate(56, 300)
    assert cov["tuned"] >= 0.91, cov
    assert cov["lam1"] >= 0.91, cov
    assert cov["gold"] >= 0.90, cov
    # the adapted judge earns its keep: narrower than gold alone and than the parent's PPI++
    # (measured: 0.123 against gold-only 0.156 and the parent's 0.154)
    assert width["tuned"] <= 0.85 * width["gold"], width
    assert width["tuned"] < width["parent"], width


@pytest.mark.slow
def test_cross_fitted_interval_covers_at_nominal() -> None:
    """The issue's bar: coverage >= 0.93 at nominal 0.95 over 2000 audits (binomial sd 0.005)
    for the paper's estimator (lambda = 1), the one the audit reports. Power-tuning lambda on the
    same gold items costs a little coverage (measured 0.929 here, against 0.9395 for lambda = 1
    and 0.9435 gold-only), which is why the audit does not tune it."""
    cov, _ = _simulate(5600, 2000)
    assert cov["lam1"] >= 0.93, cov
    assert cov["tuned"] >= 0.92, cov
