"""Verifier panel: pairwise agreement of flag decisions (seed 001 Table S3) and `kit guard panel`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

from kit.cli import cli
from kit.guard.evaluation.evaluate import panel_agreement


def _counts(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int, int]:
    a = sum(1 for p, q in zip(x, y, strict=True) if p and q)
    b = sum(1 for p, q in zip(x, y, strict=True) if p and not q)
    c = sum(1 for p, q in zip(x, y, strict=True) if not p and q)
    d = sum(1 for p, q in zip(x, y, strict=True) if not p and not q)
    return a, b, c, d


def test_panel_agreement_matches_hand_counts() -> None:
    rng = np.random.default_rng(0)
    passed = rng.random((3, 150)) < np.array([[0.9], [0.8], [0.7]])
    rows = panel_agreement(["A", "B", "C"], passed, np.random.default_rng(1), n_boot=200)
    assert [(r.verifier_a, r.verifier_b) for r in rows] == [("A", "B"), ("A", "C"), ("B", "C")]
    for r, (i, j) in zip(rows, [(0, 1), (0, 2), (1, 2)], strict=True):
        a, b, c, d = _counts(passed[i], passed[j])
        n = a + b + c + d
        assert r.n == n and r.observed == pytest.approx((a + d) / n)
        assert r.positive_specific == pytest.approx(2 * a / (2 * a + b + c))
        assert r.negative_specific == pytest.approx(2 * d / (2 * d + b + c))
        assert r.kappa == pytest.approx(sm_kappa(np.array([[a, b], [c, d]])).kappa)
        pi = ((a + b) + (a + c)) / (2 * n)
        pe = 2 * pi * (1 - pi)
        assert r.ac1 == pytest.approx(((a + d) / n - pe) / (1 - pe))
        assert r.flag_rate_a == pytest.approx(np.mean(~passed[i]))
        assert r.kappa_lo <= r.kappa <= r.kappa_hi
        assert r.negative_specific_lo <= r.negative_specific <= r.negative_specific_hi
        assert r.ci_method == "bootstrap" and r.note == ""


def test_panel_agreement_undefined_is_nan_with_note() -> None:
    passed = np.ones((2, 20), dtype=bool)  # nobody flags anything
    (r,) = panel_agreement(["A", "B"], passed, np.random.default_rng(0), n_boot=50)
    assert np.isnan(r.negative_specific) and np.isnan(r.kappa) and np.isnan(r.kappa_lo)
    assert "negative-specific undefined" in r.note and "kappa undefined" in r.note
    assert r.positive_specific == 1.0 and r.observed == 1.0


def test_panel_agreement_clustered() -> None:
    rng = np.random.default_rng(3)
    passed = rng.random((2, 60)) < 0.7
    groups = np.repeat(np.arange(20), 3)
    (r,) = panel_agreement(["A", "B"], passed, rng, groups=groups, n_boot=100)
    assert r.ci_method == "cluster-bootstrap"


PAIRS = pd.DataFrame(
    {
        "claim": [
            "Aspirin lowers stroke risk.",
            "The drug failed.",
            "Cats are dogs.",
            "Rain is wet.",
            "Statins reduce LDL.",
            "Coffee cures cancer.",
        ],
        "passage": [
            "Aspirin reduced the risk of stroke in adults.",
            "No effect was seen in the trial.",
            "Cats are not dogs.",
            "Rain is wet indeed.",
            "Statins lowered LDL cholesterol.",
            "Coffee was not associated with cancer.",
        ],
        "label": ["SUPPORT", "NEI", "CONTRADICT", "SUPPORT", "SUPPORT", "CONTRADICT"],
        "group": ["g1", "g1", "g2", "g2", "g3", "g3"],
    }
)


def test_cli_panel_with_labels(tmp_path: Path, tiny_cross_dir: Path, verifier_dir: Path) -> None:
    src = tmp_path / "pairs.csv"
    PAIRS.to_csv(src, index=False)
    out = tmp_path / "panel"
    args = [
        "guard",
        "panel",
        str(src),
        "--verifier",
        str(tiny_cross_dir),
        "--verifier",
        str(verifier_dir),
        "--verifier",
        str(tiny_cross_dir),
        "--tau",
        "0.4",
        "--tau",
        "0.7",
        "--tau",
        "0.45",
        "--n-boot",
        "50",
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert "negative-specific" in r.output and "cluster bootstrap over group" in r.output
    for name in ("agreement", "verifiers"):
        for suffix in (".csv", ".md", ".tex"):
            assert (out / f"{name}{suffix}").is_file()
    agree = pd.read_csv(out / "agreement.csv")
    assert len(agree) == 3  # 3 verifiers -> 3 pairs
    scores = pd.read_csv(out / "scores.csv", dtype={"pair_id": str})
    t, b, t2 = "tiny-cross", "verifier", "tiny-cross_2"
    assert list(scores.columns) == [
        "pair_id",
        "label",
        "group",
        f"score_{t}",
        f"flag_{t}",
        f"score_{b}",
        f"flag_{b}",
        f"score_{t2}",
        f"flag_{t2}",
    ]
    assert (scores[f"flag_{t}"] == (scores[f"score_{t}"] <= 0.4)).all()
    assert (scores[f"flag_{b}"] == (scores[f"score_{b}"] <= 0.7)).all()
    row = agree[(agree["verifier_a"] == t) & (agree["verifier_b"] == t2)].iloc[0]
    ft, ft2 = scores[f"flag_{t}"].to_numpy(), scores[f"flag_{t2}"].to_numpy()
    assert row["observed"] == pytest.approx(np.mean(ft == ft2))
    ver = pd.read_csv(out / "verifiers.csv")
    assert set(ver["verifier"]) == {t, b, t2}
    assert set(ver.loc[ver["verifier"] == b, "metric"]) >= {"auc", "recall", "kappa"}


def test_cli_panel_without_labels_and_refusals(tmp_path: Path, tiny_cross_dir: Path) -> None:
    src = tmp_path / "pairs.jsonl"
    PAIRS.drop(columns=["label", "group"]).to_json(src, orient="records", lines=True)
    out = tmp_path / "panel"
    base = ["guard", "panel", str(src), "--n-boot", "20", "--out", str(out)]
    v = ["--verifier", str(tiny_cross_dir)]
    r = CliRunner().invoke(cli, [*base, *v, *v, "--tau", "0.42"])  # one tau for all
    assert r.exit_code == 0, r.output
    ver = pd.read_csv(out / "verifiers.csv")
    assert set(ver["metric"]) == {"flag_rate"} and (ver["tau"] == 0.42).all()
    r = CliRunner().invoke(cli, [*base, *v, "--tau", "0.4"])
    assert r.exit_code == 2 and "two or more" in r.output
    r = CliRunner().invoke(cli, [*base, *v, *v, *v, "--tau", "0.4", "--tau", "0.5"])
    assert r.exit_code == 2 and "one per --verifier" in r.output
