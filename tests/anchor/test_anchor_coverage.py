"""Seeded coverage simulation (SYNTHETIC): over hundreds of datasets with a biased judge, the
PPI++ and gold-only intervals cover the gold rate 1 - alpha of the time within binomial slack;
the judge-only interval, which answers a different question (the judge's own rate), does not."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from kit.anchor.rates import anchored_rates

REPS = 1000
ALPHA = 0.05
# 3 binomial standard deviations of a coverage rate over REPS datasets
SLACK = 3 * math.sqrt(ALPHA * (1 - ALPHA) / REPS)


def _pool(
    rng: np.random.Generator, size: int, rate: float, kind: str
) -> tuple[np.ndarray, np.ndarray]:
    """A judged pool: gold Y ~ Bernoulli(rate) and a biased judge of it.

    binary: a 0/1 judge with sensitivity 0.85 and false-positive rate 0.20 (it over-calls);
    score: a score 0.3 + 0.45 Y + N(0, 0.2), clipped to [0, 1] (shifted up, noisy)."""
    y = (rng.random(size) < rate).astype(float)
    if kind == "binary":
        f = np.where(y == 1, rng.random(size) < 0.85, rng.random(size) < 0.20).astype(float)
    else:
        f = np.clip(0.3 + 0.45 * y + rng.normal(0.0, 0.2, size), 0.0, 1.0)
    return y, f


def simulate(kind: str, rate: float, n_items: int, n_gold: int, seed: int) -> dict[str, float]:
    """How often each method's interval covers the population gold rate, over REPS datasets:
    each a fresh pool of n_items, gold a uniform random subset of n_gold of them; and the mean
    interval widths of PPI++ and gold-only."""
    rng = np.random.default_rng(seed)
    covered = {"ppi": 0, "judge_only": 0, "gold_only": 0}
    width = {"ppi": 0.0, "gold_only": 0.0}
    for _ in range(REPS):
        y, f = _pool(rng, n_items, rate, kind)
        gold = rng.choice(n_items, size=n_gold, replace=False)
        mask = np.zeros(n_items, dtype=bool)
        mask[gold] = True
        res = anchored_rates(y[mask], f[mask], f[~mask], "synthetic-judge", ALPHA)
        for r in res.rows:
            covered[r.method] += r.ci_low <= rate <= r.ci_high
            if r.method in width:
                width[r.method] += (r.ci_high - r.ci_low) / REPS
    out = {m: c / REPS for m, c in covered.items()}
    out |= {f"width_{m}": w for m, w in width.items()}
    return out


@pytest.mark.parametrize(
    ("kind", "rate", "n_items", "n_gold", "seed"),
    [("binary", 0.25, 2000, 150, 40), ("score", 0.30, 1500, 100, 41)],
)
def test_ppi_covers_within_binomial_slack(kind, rate, n_items, n_gold, seed) -> None:
    start = time.perf_counter()
    cov = simulate(kind, rate, n_items, n_gold, seed)
    print(f"{kind}: coverage {cov} over {REPS} datasets in {time.perf_counter() - start:.1f} s")
    for method in ("ppi", "gold_only"):
        assert abs(cov[method] - (1 - ALPHA)) <= SLACK, (method, cov)
    # the judge is biased: its own rate's interval misses the gold rate nearly always
    assert cov["judge_only"] < 0.2, cov
    # and anchoring on it still pays: PPI++ is narrower than gold-only on average
    assert cov["width_ppi"] < cov["width_gold_only"], cov


def simulate_stratified(seed: int, reps: int = REPS) -> dict[str, float]:
    """SYNTHETIC stratified design: a pool of 2,000 items in two strata -- 'rare' (400 items,
    gold rate 0.5) and 'common' (1,600 items, gold rate 0.2) -- with gold oversampled in the
    rare stratum (100 of 400, 100 of 1,600). The judge is biased (0/1, sensitivity 0.8, false-
    positive rate 0.25). Returns the coverage of the population rate by the stratified PPI++
    interval, by gold-only with design weights, and by PPI++ that wrongly assumes a uniform
    design (the oversampled stratum then pulls it up)."""
    from kit.stats.ppi import ppi_mean

    rng = np.random.default_rng(seed)
    sizes, rates, n_gold = {"rare": 400, "common": 1600}, {"rare": 0.5, "common": 0.2}, 100
    target = sum(sizes[h] * rates[h] for h in sizes) / sum(sizes.values())
    covered = {"ppi": 0, "gold_only": 0, "ppi_ignoring_strata": 0}
    for _ in range(reps):
        ys, fs, gold_mask, strata = [], [], [], []
        for h, m in sizes.items():
            y = (rng.random(m) < rates[h]).astype(float)
            f = np.where(y == 1, rng.random(m) < 0.8, rng.random(m) < 0.25).astype(float)
            mask = np.zeros(m, dtype=bool)
            mask[rng.choice(m, size=n_gold, replace=False)] = True
            ys.append(y), fs.append(f), gold_mask.append(mask), strata.append(np.full(m, h))
        y, f, mask, st = (np.concatenate(a) for a in (ys, fs, gold_mask, strata))
        res = anchored_rates(
            y[mask], f[mask], f[~mask], "synthetic-judge", ALPHA, None, st[mask], st[~mask]
        )
        for r in res.rows:
            if r.method in covered:
                covered[r.method] += r.ci_low <= target <= r.ci_high
        naive = ppi_mean(y[mask], f[mask], f[~mask], ALPHA)
        covered["ppi_ignoring_strata"] += naive.ci_low <= target <= naive.ci_high
    return {m: c / reps for m, c in covered.items()}


def test_stratified_design_covers_and_ignoring_it_does_not() -> None:
    start = time.perf_counter()
    cov = simulate_stratified(42)
    print(f"stratified: coverage {cov} over {REPS} datasets in {time.perf_counter() - start:.1f} s")
    assert cov["ppi"] >= 1 - ALPHA - SLACK, cov
    assert cov["gold_only"] >= 1 - ALPHA - SLACK, cov
    # the weighted intervals are those of ppi-python (weighted iid), conservative here
    assert cov["ppi"] <= 1.0 and cov["gold_only"] <= 1.0
    # the oversampled stratum biases an estimate that assumes a uniform design
    assert cov["ppi_ignoring_strata"] < 0.5, cov


def test_planned_gold_size_delivers_the_target_half_width() -> None:
    """SYNTHETIC: a pilot of 300 gold items plans n for +-0.03; datasets with n gold items drawn
    from the same pool then have PPI++ half-widths near 0.03 (the pilot's moments are
    estimates: within 10%), and gold alone would need far more."""
    from kit.stats.ppi import plan_gold_size, ppi_mean

    rng = np.random.default_rng(11)
    size = 3000
    y = (rng.random(size) < 0.3).astype(float)
    f = np.clip(0.25 + 0.45 * y + rng.normal(0, 0.2, size), 0, 1)
    pilot = rng.choice(size, 300, replace=False)
    plan = plan_gold_size(y[pilot], f[pilot], f, 0.03)
    assert plan.n_gold is not None and plan.n_gold < plan.n_gold_only
    half = []
    for _ in range(200):
        mask = np.zeros(size, dtype=bool)
        mask[rng.choice(size, plan.n_gold, replace=False)] = True
        e = ppi_mean(y[mask], f[mask], f[~mask])
        half.append(e.ci_high - e.estimate)
    print(
        f"planned n = {plan.n_gold} (gold-only {plan.n_gold_only}); mean half-width {np.mean(half):.4f}"
    )
    assert abs(np.mean(half) - 0.03) <= 0.003
