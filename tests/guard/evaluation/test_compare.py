"""Paired comparison of two verifiers: the DeLong test, the cluster bootstrap, the command."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import norm

from kit.cli import cli
from kit.guard.evaluation.compare import compare_scores
from kit.stats.roc import paired_auc_difference, roc_auc


def _brute_delong(a: np.ndarray, b: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(diff, se) from the paper's definitions, pair by pair: psi(X, Y) = 1, 1/2, 0;
    V10 / V01 as row / column means of psi; S = S10 / m + S01 / n (2x2); var = c'Sc."""

    def comps(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos, neg = s[y], s[~y]
        psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
        return psi.mean(axis=1), psi.mean(axis=0)

    (v10a, v01a), (v10b, v01b) = comps(a), comps(b)
    s10 = np.cov(np.vstack([v10a, v10b]))
    s01 = np.cov(np.vstack([v01a, v01b]))
    cvec = np.array([1.0, -1.0])
    var = cvec @ (s10 / v10a.size + s01 / v01a.size) @ cvec
    return float(v10a.mean() - v10b.mean()), float(np.sqrt(var))


def _pair(seed: int, n: int = 150, gap: float = 0.0) -> tuple[np.ndarray, ...]:
    """Two correlated verifiers on the same items; ``gap`` makes A separate better."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.4
    shared = rng.normal(size=n)  # what both verifiers see: the source of the pairing
    a = np.round(shared + rng.normal(scale=0.7, size=n) + (0.8 + gap) * y, 1)  # ties happen
    b = np.round(shared + rng.normal(scale=0.7, size=n) + 0.8 * y, 1)
    return a, b, y


def test_paired_delong_matches_the_pairwise_definition() -> None:
    for seed in range(5):
        a, b, y = _pair(seed, gap=0.3 * seed)
        r = paired_auc_difference(a, b, y)
        diff, se = _brute_delong(a, b, y)
        assert r.diff == pytest.approx(diff, abs=1e-12)
        assert r.se == pytest.approx(se, rel=1e-10)
        assert r.auc_a == pytest.approx(roc_auc(a, y).auc)
        assert r.p_value == pytest.approx(2 * norm.sf(abs(diff) / se))
        assert r.lo < r.diff < r.hi


def test_against_a_constant_verifier_the_variance_is_the_single_auc_variance() -> None:
    a, _, y = _pair(7)
    r = paired_auc_difference(a, np.zeros_like(a), y)
    single = roc_auc(a, y)
    assert r.auc_b == 0.5 and r.diff == pytest.approx(single.auc - 0.5)
    assert r.se == pytest.approx(single.se, rel=1e-12)


def test_identical_verifiers_differ_by_nothing() -> None:
    a, _, y = _pair(2)
    r = paired_auc_difference(a, a.copy(), y)
    assert r.diff == 0 and r.se == 0 and r.p_value == 1.0


def test_paired_test_holds_its_level_and_finds_a_real_gap_in_simulation() -> None:
    rejections = [paired_auc_difference(*_pair(s)).p_value < 0.05 for s in range(400)]
    rate = float(np.mean(rejections))
    assert 0.02 <= rate <= 0.085, rate  # nominal 0.05; binomial sd over 400 runs ~0.011
    power = np.mean([paired_auc_difference(*_pair(s, gap=0.8)).p_value < 0.05 for s in range(100)])
    assert power >= 0.8, power
    # the pairing is what buys the power: the unpaired z test on the same data finds less
    unpaired = []
    for s in range(100):
        a, b, y = _pair(s, gap=0.8)
        ra, rb = roc_auc(a, y), roc_auc(b, y)
        unpaired.append(2 * norm.sf(abs(ra.auc - rb.auc) / np.hypot(ra.se, rb.se)) < 0.05)
    assert power > np.mean(unpaired)


def test_compare_rows_per_subset_and_the_cluster_bootstrap() -> None:
    rng = np.random.default_rng(0)
    n = 120
    cls = rng.choice(np.array(["entailment", "neutral", "contradiction"], dtype=object), n)
    a = np.round(rng.uniform(0, 1, n) + 0.4 * (cls == "entailment"), 2)
    b = np.round(rng.uniform(0, 1, n) + 0.2 * (cls == "entailment"), 2)
    rows = compare_scores(a, b, cls, np.random.default_rng(1))
    assert [r.subset for r in rows] == [
        "entailment vs unsupported",
        "entailment vs neutral",
        "entailment vs contradiction",
    ]
    keep = (cls == "entailment") | (cls == "neutral")
    ref = paired_auc_difference(a[keep], b[keep], cls[keep] == "entailment")
    assert rows[1].difference == pytest.approx(ref.diff) and rows[1].ci_method == "delong-paired"
    groups = np.repeat(np.arange(n // 4), 4).astype(str)
    rows_g = compare_scores(a, b, cls, np.random.default_rng(1), groups=groups, n_boot=300)
    assert {r.ci_method for r in rows_g} == {"cluster-bootstrap"}
    assert rows_g[0].difference == pytest.approx(rows[0].difference)
    assert rows_g[0].lo < rows_g[0].difference < rows_g[0].hi and 0 <= rows_g[0].p_value <= 1
    only_pos = compare_scores(a[:3], b[:3], np.array(["entailment"] * 3, dtype=object), rng)
    assert np.isnan(only_pos[0].difference) and "undefined" in only_pos[0].note


def _scores(path: Path, scores: np.ndarray, labels: list[str], order: list[int]) -> Path:
    frame = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in order],
            "label": [labels[i] for i in order],
            "score": [float(scores[i]) for i in order],
        }
    )
    frame.to_csv(path, index=False)
    return path


def test_cli_compare_aligns_by_pair_id_and_writes_three_formats(tmp_path: Path) -> None:
    a, b, y = _pair(3, n=60, gap=0.5)
    a, b = (a - a.min()) / np.ptp(a), (b - b.min()) / np.ptp(b)
    labels = ["SUPPORT" if v else "CONTRADICT" for v in y]
    fa = _scores(tmp_path / "adapted.csv", a, labels, list(range(60)))
    fb = _scores(tmp_path / "default.csv", b, labels, list(range(59, -1, -1)))  # reversed
    r = CliRunner().invoke(
        cli, ["guard", "compare", str(fa), str(fb), "--out", str(tmp_path / "c")]
    )
    assert r.exit_code == 0, r.output
    assert "adapted (A) vs default (B) on 60 pairs; CIs: paired DeLong" in r.output
    table = pd.read_csv(tmp_path / "c.csv")
    ref = paired_auc_difference(a, b, y)
    row = table[table["subset"] == "entailment vs unsupported"].iloc[0]
    assert row["difference"] == pytest.approx(ref.diff, abs=1e-6)  # tables are written to 6 dp
    assert row["p_value"] == pytest.approx(ref.p_value, abs=1e-6)
    assert (tmp_path / "c.md").is_file() and (tmp_path / "c.tex").is_file()
    assert (tmp_path / "c.csv.receipt.json").is_file()


def test_cli_compare_refuses_unmatched_pairs_and_disagreeing_labels(tmp_path: Path) -> None:
    a, b, y = _pair(4, n=20)
    a, b = (a - a.min()) / np.ptp(a), (b - b.min()) / np.ptp(b)
    labels = ["SUPPORT" if v else "NEI" for v in y]
    fa = _scores(tmp_path / "a.csv", a, labels, list(range(20)))
    fb = _scores(tmp_path / "b.csv", b, labels, list(range(19)))
    r = CliRunner().invoke(cli, ["guard", "compare", str(fa), str(fb)])
    assert r.exit_code == 2 and "missing from B" in r.output and "'p19'" in r.output
    assert "b.csv" in r.output and "Traceback" not in r.output
    flipped = [
        ("NEI" if v == "SUPPORT" else "SUPPORT") if i == 5 else v for i, v in enumerate(labels)
    ]
    fb = _scores(tmp_path / "b.csv", b, flipped, list(range(20)))
    r = CliRunner().invoke(cli, ["guard", "compare", str(fa), str(fb)])
    assert r.exit_code == 2 and "different labels" in r.output and "'p5'" in r.output
    r = CliRunner().invoke(cli, ["guard", "compare", str(fa), str(fa), "--name", "x"])
    assert r.exit_code == 2 and "--name twice" in r.output


def test_row_line_says_below_the_cards_precision_not_zero() -> None:
    from kit.guard.evaluation.compare import row_line

    row = {"subset": "entailment vs neutral", "auc_a": 0.78, "auc_b": 0.83, "difference": -0.05}
    row.update(lo=-0.067, hi=-0.032, note="")
    assert row_line({**row, "p_value": 0.0}).endswith("p < 0.0001")  # a card's 4-decimal 0
    assert row_line({**row, "p_value": 0.0043}).endswith("p = 0.0043")
    assert row_line({**row, "p_value": None}).endswith("p = nan")
