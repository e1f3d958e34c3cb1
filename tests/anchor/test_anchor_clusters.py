"""Issue 40 B: rates over citations are clustered by run; their intervals must say so.

Seeded simulation with a known truth: runs (answers) with 1-15 citations each, a strong run
effect (citations of one answer are unsupported together), a biased 0/1 judge, and a uniform
random gold subset of the citations. Over repeated draws the cluster-robust intervals of
:func:`kit.anchor.rates.anchored_rates` cover the truth at about the nominal 95% while the
intervals that take citations as independent under-cover (the judge-only Wilson interval
badly: the judge speaks for every citation, so its variance is the clustered one). Also
checked: with one item per cluster the cluster-robust variance is the plug-in one times
G / (G - 1) (so the PPI++ estimate and lambda are exactly the independent ones), and the
effective-n Wilson interval against statsmodels' Wilson at n / deff.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kit.anchor.rates import anchored_rates
from kit.stats.ppi import cluster_ppi_mean, design_effect, ppi_mean
from kit.stats.wilson import wilson_ci, wilson_effective

A, B = 1.0, 3.0  # run-level unsupported rate ~ Beta(1, 3): mean 0.25, a strong run effect
TRUTH = A / (A + B)
FPR, TPR = 0.15, 0.85  # the judge over-calls: P(f = 1 | y = 0), P(f = 1 | y = 1)
JUDGE_TRUTH = TRUTH * TPR + (1 - TRUTH) * FPR


def _draw(rng: np.random.Generator, runs: int = 60, n_gold: int = 150):
    sizes = rng.integers(1, 16, runs)
    p = rng.beta(A, B, runs)
    run = np.repeat(np.arange(runs), sizes)
    y = (rng.random(run.size) < p[run]).astype(float)
    f = np.where(y == 1, rng.random(run.size) < TPR, rng.random(run.size) < FPR).astype(float)
    gold = np.zeros(run.size, bool)
    gold[rng.choice(run.size, n_gold, replace=False)] = True
    return y, f, run.astype(str), gold


def _covers(lo: float, hi: float, truth: float) -> bool:
    return lo <= truth <= hi


def test_cluster_robust_intervals_cover_and_independent_ones_do_not() -> None:
    rng = np.random.default_rng(20240)
    reps = 400
    hits = {k: 0 for k in ("ppi", "ppi_iid", "gold", "judge", "judge_iid")}
    for _ in range(reps):
        y, f, run, gold = _draw(rng)
        clustered = anchored_rates(
            y[gold],
            f[gold],
            f[~gold],
            "judge",
            clusters_gold=run[gold],
            clusters_unlabelled=run[~gold],
            cluster_name="run",
        )
        iid = anchored_rates(y[gold], f[gold], f[~gold], "judge")
        c, i = {r.method: r for r in clustered.rows}, {r.method: r for r in iid.rows}
        assert c["ppi"].estimate == pytest.approx(i["ppi"].estimate, abs=1e-12)
        hits["ppi"] += _covers(c["ppi"].ci_low, c["ppi"].ci_high, TRUTH)
        hits["ppi_iid"] += _covers(i["ppi"].ci_low, i["ppi"].ci_high, TRUTH)
        hits["gold"] += _covers(c["gold_only"].ci_low, c["gold_only"].ci_high, TRUTH)
        hits["judge"] += _covers(c["judge_only"].ci_low, c["judge_only"].ci_high, JUDGE_TRUTH)
        hits["judge_iid"] += _covers(i["judge_only"].ci_low, i["judge_only"].ci_high, JUDGE_TRUTH)
    cov = {k: v / reps for k, v in hits.items()}
    # nominal 0.95; 400 draws give a binomial sd of 0.011. CR1 with 60 clusters and a normal
    # reference runs a little short of nominal (measured 0.92-0.95 over designs like this one),
    # so the bar is 0.90; taking citations as independent falls far lower
    assert cov["ppi"] >= 0.90, cov
    assert cov["gold"] >= 0.90, cov
    assert cov["judge"] >= 0.90, cov
    assert cov["judge_iid"] <= 0.90, cov
    assert cov["ppi_iid"] <= cov["ppi"] - 0.05, cov


def test_clustered_rows_say_which_interval_and_singletons_reduce_to_plug_in() -> None:
    rng = np.random.default_rng(7)
    y, f, run, gold = _draw(rng)
    res = anchored_rates(
        y[gold],
        f[gold],
        f[~gold],
        "judge",
        clusters_gold=run[gold],
        clusters_unlabelled=run[~gold],
        cluster_name="run",
    )
    rows = {r.method: r for r in res.rows}
    assert rows["ppi"].interval.startswith(
        "t interval (60 - 1 degrees of freedom), cluster-robust (CR1)"
    )
    assert "by run" in rows["ppi"].interval
    assert rows["judge_only"].interval.startswith("Wilson score interval at the effective n")
    assert res.clusters == ("run", 60) and "clusters (run)" in res.assumption
    # one item per cluster: the same estimate and lambda as independent items, the variance
    # the plug-in one times G / (G - 1)
    n, big_n = int(gold.sum()), int((~gold).sum())
    single = cluster_ppi_mean(
        y[gold], f[gold], f[~gold], np.arange(n), np.arange(n, n + big_n), 0.05
    )
    plain = ppi_mean(y[gold], f[gold], f[~gold], 0.05)
    assert single.estimate == pytest.approx(plain.estimate, abs=1e-12)
    assert single.lam == pytest.approx(plain.lam, abs=1e-12)
    g = n + big_n
    assert single.se == pytest.approx(plain.se * np.sqrt(g / (g - 1)), rel=1e-12)
    # the effective-n Wilson interval is statsmodels' Wilson at n / deff
    from statsmodels.stats.proportion import proportion_confint

    deff = design_effect(f, run)
    assert deff > 1.5  # the simulated run effect is strong
    k, m = int(f.sum()), f.size
    w = wilson_effective(k, m, deff)
    assert (w.lo, w.hi) == pytest.approx(
        proportion_confint(k / m * (m / deff), m / deff, method="wilson"), abs=1e-12
    )
    assert wilson_effective(k, m, 1.0) == wilson_ci(k, m)


def test_clusters_are_refused_when_too_few_or_mixed_with_strata() -> None:
    y = np.array([0, 1] * 6, float)
    with pytest.raises(ValueError, match="at least 2"):
        anchored_rates(y, y, y, "j", clusters_gold=["a"] * 12, clusters_unlabelled=["a"] * 12)
    with pytest.raises(ValueError, match="stratified design with clustered"):
        anchored_rates(
            y,
            y,
            y,
            "j",
            strata_gold=["s"] * 12,
            strata_unlabelled=["s"] * 12,
            clusters_gold=list("ab") * 6,
            clusters_unlabelled=list("ab") * 6,
        )


def test_kit_anchor_reads_a_cluster_column(tmp_path: Path) -> None:
    """`kit anchor` with a cluster column: the same rows as anchored_rates with clusters."""
    import json

    from click.testing import CliRunner

    from kit.cli import cli

    rng = np.random.default_rng(3)
    y, f, run, gold = _draw(rng)
    ids = [f"c{i}" for i in range(y.size)]
    judged = tmp_path / "judged.csv"
    judged.write_text(
        "item_id,judge,cluster\n"
        + "".join(f"{i},{int(v)},{r}\n" for i, v, r in zip(ids, f, run, strict=True))
    )
    gold_csv = tmp_path / "gold.csv"
    gold_csv.write_text(
        "item_id,gold\n" + "".join(f"{ids[i]},{int(y[i])}\n" for i in np.flatnonzero(gold))
    )
    out = tmp_path / "a.json"
    res = CliRunner().invoke(
        cli, ["anchor", str(judged), "--gold", str(gold_csv), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    art = json.loads(out.read_text())
    want = anchored_rates(
        y[gold],
        f[gold],
        f[~gold],
        "j",
        clusters_gold=run[gold],
        clusters_unlabelled=run[~gold],
        cluster_name="cluster",
    )
    assert art["clusters"] == want.clusters[1] == 60
    for row, w in zip(art["rows"], want.rows, strict=True):
        assert [row["estimate"], row["ci_low"], row["ci_high"]] == pytest.approx(
            [w.estimate, w.ci_low, w.ci_high], abs=1e-12
        )
        assert row["interval"] == w.interval
    assert "ppi interval: t interval (" in res.output and "cluster-robust (CR1)" in res.output


def test_few_clusters_take_a_t_reference_that_covers_more_than_the_normal_one() -> None:
    """With 8 runs, CR1 with a normal reference under-covers; the t(G - 1) interval (the
    half-width exactly t_{G-1} se, checked against scipy) covers more, and the rows warn."""
    from scipy.stats import norm, t

    rng = np.random.default_rng(11)
    reps, runs = 400, 8
    hits_t = hits_z = 0
    for _ in range(reps):
        y, f, run, gold = _draw(rng, runs=runs, n_gold=20)
        if np.unique(run[gold]).size < 2:
            continue
        est = cluster_ppi_mean(y[gold], f[gold], f[~gold], run[gold], run[~gold])
        g = np.unique(run).size
        half = (est.ci_high - est.ci_low) / 2
        assert half == pytest.approx(t.ppf(0.975, g - 1) * est.se, rel=1e-12)
        hits_t += abs(est.estimate - TRUTH) <= half
        hits_z += abs(est.estimate - TRUTH) <= norm.ppf(0.975) * est.se
    # measured 0.88 (t) vs 0.83 (normal) over designs like this; both under nominal with 8
    # runs, which the warning says
    assert hits_t / reps >= hits_z / reps + 0.03, (hits_t, hits_z)
    y, f, run, gold = _draw(np.random.default_rng(5), runs=runs, n_gold=20)
    res = anchored_rates(
        y[gold], f[gold], f[~gold], "judge", clusters_gold=run[gold], clusters_unlabelled=run[~gold]
    )
    assert any(w.startswith("few clusters (cluster): 8 among the judged") for w in res.warnings)
    y, f, run, gold = _draw(np.random.default_rng(5))
    many = anchored_rates(
        y[gold], f[gold], f[~gold], "judge", clusters_gold=run[gold], clusters_unlabelled=run[~gold]
    )
    assert not any(w.startswith("few clusters") for w in many.warnings)
