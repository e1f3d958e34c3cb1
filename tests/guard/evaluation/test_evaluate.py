"""Verifier evaluation: AUC, recall, specificity, kappa at tau -- checked independently."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import norm
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

from kit.cli import cli
from kit.guard.evaluation.evaluate import Estimate, evaluate_scores
from kit.stats.agreement import cohens_kappa
from kit.stats.bootstrap import bootstrap_ci, cluster_bootstrap_ci
from kit.stats.roc import auc_score, roc_auc
from kit.stats.wilson import wilson_ci


def brute_auc(pos: np.ndarray, neg: np.ndarray) -> float:
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def _data(seed: int = 0, n: int = 120) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    cls = rng.choice(np.array(["entailment", "neutral", "contradiction"], dtype=object), n)
    shift = np.where(cls == "entailment", 0.25, np.where(cls == "neutral", 0.1, 0.0))
    s = np.clip(np.round(rng.uniform(0.2, 0.7, n) + shift, 2), 0, 1)  # rounded: ties happen
    groups = np.repeat(np.arange(n // 4), 4).astype(str)
    return s, cls, groups


def _row(rows: list[Estimate], metric: str, subset: str) -> Estimate:
    (r,) = [x for x in rows if x.metric == metric and x.subset == subset]
    return r


def test_auc_score_is_the_pairwise_count() -> None:
    s, cls, _ = _data()
    pos = cls == "entailment"
    assert np.isclose(auc_score(s, pos), brute_auc(s[pos], s[~pos]))
    assert np.isclose(auc_score(s, pos), roc_auc(s, pos).auc)
    assert np.isnan(auc_score(s, np.ones(s.size, bool)))


def test_evaluate_auc_rows_match_brute_force() -> None:
    s, cls, _ = _data()
    types = np.where(cls == "neutral", np.where(s > 0.5, "near", "far"), "")
    rows = evaluate_scores(s, cls, 0.5, np.random.default_rng(0), negative_types=types)
    pos = s[cls == "entailment"]
    for subset, neg in [
        ("unsupported", s[cls != "entailment"]),
        ("neutral", s[cls == "neutral"]),
        ("contradiction", s[cls == "contradiction"]),
        ("type=near", s[(cls == "neutral") & (types == "near")]),
    ]:
        r = _row(rows, "auc", f"entailment vs {subset}")
        assert np.isclose(r.estimate, brute_auc(pos, neg)), subset
        assert r.n_pos == pos.size and r.n_neg == neg.size
        assert r.ci_method == "delong" and r.lo <= r.estimate <= r.hi


def test_recall_specificity_kappa_at_tau() -> None:
    s, cls, _ = _data(1)
    tau = 0.55
    rows = evaluate_scores(s, cls, tau, np.random.default_rng(0), n_boot=300)
    pos = cls == "entailment"
    rec = _row(rows, "recall", "entailment")
    w = wilson_ci(int(np.sum(s[pos] > tau)), int(pos.sum()))
    assert (rec.estimate, rec.lo, rec.hi) == pytest.approx((w.estimate, w.lo, w.hi))
    for k in ("neutral", "contradiction"):
        spec = _row(rows, "specificity", k)
        assert spec.estimate == pytest.approx(np.mean(s[cls == k] <= tau))
    spec = _row(rows, "specificity", "unsupported")
    assert spec.estimate == pytest.approx(np.mean(s[~pos] <= tau)) and spec.n_neg == (~pos).sum()
    # kappa against statsmodels on the 2x2 table gold (supported?) x decision (passed?)
    passed = s > tau
    table = np.array(
        [
            [np.sum(pos & passed), np.sum(pos & ~passed)],
            [np.sum(~pos & passed), np.sum(~pos & ~passed)],
        ]
    )
    kap = _row(rows, "kappa", "entailment vs unsupported")
    assert kap.estimate == pytest.approx(sm_kappa(table).kappa)
    assert kap.ci_method == "bootstrap" and kap.lo <= kap.estimate <= kap.hi
    assert _row(rows, "flag_rate", "all").estimate == pytest.approx(np.mean(~passed))


def test_groups_switch_every_ci_to_the_cluster_bootstrap() -> None:
    s, cls, groups = _data(2)
    rows = evaluate_scores(s, cls, 0.5, np.random.default_rng(0), groups=groups, n_boot=200)
    assert {r.ci_method for r in rows} == {"cluster-bootstrap"}
    a = evaluate_scores(s, cls, 0.5, np.random.default_rng(5), groups=groups, n_boot=200)
    b = evaluate_scores(s, cls, 0.5, np.random.default_rng(5), groups=groups, n_boot=200)
    frame = [pd.DataFrame([r.to_dict() for r in x]) for x in (a, b)]
    assert frame[0].equals(frame[1])  # seeded: reproducible


def test_undefined_statistics_are_explicit() -> None:
    s = np.array([0.2, 0.6, 0.9])
    cls = np.array(["entailment"] * 3, dtype=object)
    rows = evaluate_scores(s, cls, 0.5, np.random.default_rng(0))
    auc = _row(rows, "auc", "entailment vs unsupported")
    assert np.isnan(auc.estimate) and "undefined" in auc.note
    spec = _row(rows, "specificity", "unsupported")
    assert np.isnan(spec.estimate) and "undefined" in spec.note
    assert not any(r.subset == "entailment vs neutral" for r in rows)  # absent class: no row


def test_cluster_bootstrap_singletons_is_the_row_bootstrap_distribution() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    a = cluster_bootstrap_ci((x,), np.arange(50), np.mean, np.random.default_rng(1), 4000)
    b = bootstrap_ci((x,), np.mean, np.random.default_rng(2), 4000)
    assert a.estimate == b.estimate
    assert abs(a.lo - b.lo) < 0.05 and abs(a.hi - b.hi) < 0.05


def test_cluster_bootstrap_keeps_clusters_whole() -> None:
    # every cluster holds one 1 and one 0: any resample of whole clusters has mean exactly 0.5
    v = np.tile([1.0, 0.0], 20)
    c = np.repeat(np.arange(20), 2)
    ci = cluster_bootstrap_ci((v,), c, np.mean, np.random.default_rng(0), 200)
    assert ci.lo == ci.hi == 0.5


def test_auc_cluster_bootstrap_covers_in_simulation() -> None:
    """Clustered scores with a known population AUC: the 95% CI covers it most of the time."""
    d, su, se, k, m = 1.0, 0.6, 1.0, 60, 4
    truth = norm.cdf(d / np.sqrt(2 * su**2 + 2 * se**2))
    rng = np.random.default_rng(11)
    hits, reps = 0, 60
    for _ in range(reps):
        u = np.repeat(rng.normal(0, su, k), m)
        y = rng.random(k * m) < 0.5
        s = u + d * y + rng.normal(0, se, k * m)
        g = np.repeat(np.arange(k), m)
        ci = cluster_bootstrap_ci((s, y), g, auc_score, rng, 250)
        hits += ci.lo <= truth <= ci.hi
    assert hits / reps >= 0.85


def test_kappa_bootstrap_covers_in_simulation() -> None:
    p, flip, n = 0.6, 0.2, 200
    a, b = p * (1 - flip), p * flip
    c, d = (1 - p) * flip, (1 - p) * (1 - flip)
    po, pe = a + d, (a + b) * (a + c) + (c + d) * (b + d)
    truth = (po - pe) / (1 - pe)
    rng = np.random.default_rng(12)
    hits, reps = 0, 60
    for _ in range(reps):
        gold = rng.random(n) < p
        dec = np.where(rng.random(n) < flip, ~gold, gold)
        ci = bootstrap_ci((gold, dec), cohens_kappa, rng, 250)
        hits += ci.lo <= truth <= ci.hi
    assert hits / reps >= 0.85


def _scores_csv(path: Path, labels: list[str]) -> Path:
    rng = np.random.default_rng(3)
    n = len(labels)
    frame = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n)],
            "label": labels,
            "group": [f"g{i // 3}" for i in range(n)],
            "score": np.round(rng.uniform(0, 1, n), 3),
        }
    )
    frame.to_csv(path, index=False)
    return path


def test_cli_evaluate_writes_three_formats(tmp_path: Path) -> None:
    src = _scores_csv(tmp_path / "s.csv", ["SUPPORTS", "REFUTES", "NOT_ENOUGH_INFO"] * 10)
    prefix = tmp_path / "rep" / "ev"
    args = ["guard", "evaluate", str(src), "--n-boot", "100", "--tau", "0.4", "--out", str(prefix)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert "cluster bootstrap over 10 group values" in r.output
    assert "auc entailment vs contradiction" in r.output
    for suffix in (".csv", ".md", ".tex"):
        assert (tmp_path / "rep" / f"ev{suffix}").is_file()
    table = pd.read_csv(tmp_path / "rep" / "ev.csv")
    assert set(table["metric"]) == {"auc", "recall", "specificity", "kappa", "flag_rate"}
    assert (table.loc[table["metric"] != "auc", "tau"] == 0.4).all()
    (tmp_path / "dir").mkdir()
    r = CliRunner().invoke(cli, [*args[:-1], str(tmp_path / "dir")])
    assert r.exit_code == 0 and (tmp_path / "dir" / "evaluation.tex").is_file()
    # a folder that does not exist yet, named with a trailing '/': created, never 'new.csv'
    r = CliRunner().invoke(cli, [*args[:-1], str(tmp_path / "new") + "/"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "new" / "evaluation.csv").is_file()
    assert not (tmp_path / "new.csv").exists()
    r = CliRunner().invoke(cli, args[:-2])  # no --out: printed
    assert r.exit_code == 0 and "ci_method" in r.output


def test_cli_evaluate_unknown_label_and_label_map(tmp_path: Path) -> None:
    src = _scores_csv(tmp_path / "s.csv", ["yes", "no", "yes", "maybe"] * 3)
    base = ["guard", "evaluate", str(src), "--n-boot", "50"]
    r = CliRunner().invoke(cli, base)
    assert r.exit_code == 2 and "row 2, column 'label': unknown label 'yes'" in r.output
    assert "Traceback" not in r.output
    r = CliRunner().invoke(cli, [*base, "--label-map", "yes=SUPPORT,no=contradiction,maybe=NEI"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, [*base, "--label-map", "yes=perhaps"])
    assert r.exit_code == 2 and "destinations" in r.output


def test_cli_evaluate_needs_label_and_score(tmp_path: Path) -> None:
    p = tmp_path / "s.csv"
    p.write_text("pair_id,score\na,0.5\n")
    r = CliRunner().invoke(cli, ["guard", "evaluate", str(p)])
    assert r.exit_code == 2 and "label" in r.output
    p.write_text("pair_id,label,score\na,SUPPORT,1.5\n")
    r = CliRunner().invoke(cli, ["guard", "evaluate", str(p)])
    assert r.exit_code == 2 and "row 2" in r.output and "score" in r.output
