"""The ``fitted`` scoring rule: a ridge-penalised logistic combination of P(entailment),
P(contradiction) and relatedness, fitted by ``kit guard adapt --method recombine``.

The fit is checked against an independent optimiser (scipy) on the same objective and against
statsmodels' unpenalised logistic regression; the card's window scores are recomputed from the
models scored separately.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize

from kit.core.errors import InputError
from kit.guard.scoring import score_store as ss
from kit.guard.scoring.windows import WindowSpec
from kit.guard.verifiers.cross_export import write_cross_encoder
from kit.guard.verifiers.export import package_model_dir, tokenizer_json
from kit.guard.verifiers.fitted_rule import (
    FittedRule,
    best_rows,
    cross_validated,
    fit_rule,
    fitted_score,
    pair_scores,
    rule_from_dict,
)
from kit.guard.verifiers.load import load_verifier
from tests.guard.tiny_model import CLAIM, PASSAGE, TINY_CONFIG, tiny_weights

FEATS = ("entailment", "contradiction", "relatedness")


def _data(n: int = 300, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, size=(n, 3))
    z = -1.0 + 3.0 * x[:, 0] - 2.0 * x[:, 1] + 1.0 * x[:, 2]
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-z))).astype(float)
    return x, y


def test_fit_matches_scipy_on_the_penalised_likelihood() -> None:
    x, y = _data()
    ridge = 1.0
    rule = fit_rule(x, y, FEATS, ridge=ridge)

    def objective(beta: np.ndarray) -> float:
        z = beta[0] + x @ beta[1:]
        return float(np.sum(np.logaddexp(0, z) - y * z) + ridge / 2 * beta[1:] @ beta[1:])

    ref = minimize(objective, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    assert rule.intercept == pytest.approx(ref[0], abs=1e-4)
    assert np.allclose(rule.weights, ref[1:], atol=1e-4)
    # the planted signs come back: entailment up, contradiction down
    assert rule.weights[0] > 0 > rule.weights[1]


def test_fit_without_penalty_matches_statsmodels() -> None:
    sm = pytest.importorskip("statsmodels.api")
    x, y = _data(n=800, seed=2)
    rule = fit_rule(x, y, FEATS, ridge=0.0)
    ref = sm.Logit(y, sm.add_constant(x)).fit(disp=0).params
    assert rule.intercept == pytest.approx(ref[0], abs=1e-4)
    assert np.allclose(rule.weights, ref[1:], atol=1e-4)


def test_separable_classes_stay_finite_and_one_class_is_refused() -> None:
    x = np.array([[0.1, 0.9, 0.2], [0.2, 0.8, 0.1], [0.9, 0.1, 0.8], [0.8, 0.0, 0.9]])
    rule = fit_rule(x, np.array([0, 0, 1, 1.0]), FEATS)
    assert np.all(np.isfinite(rule.weights)) and rule.weights[0] > 0
    with pytest.raises(ValueError, match="both"):
        fit_rule(x, np.ones(4), FEATS)


def test_score_formula_and_card_round_trip() -> None:
    rule = FittedRule(FEATS, (2.0, -1.0, 0.5), -0.25)
    x = np.array([[0.5, 0.2, 0.9], [0.0, 1.0, 0.0]])
    z = -0.25 + x @ np.array([2.0, -1.0, 0.5])
    assert np.allclose(fitted_score(rule, x), 1 / (1 + np.exp(-z)), atol=1e-12)
    assert rule_from_dict(rule.to_dict()) == rule
    for bad, msg in (
        ({"features": ["entailment", "cosine"], "weights": [1, 1], "intercept": 0}, "among"),
        ({"features": ["entailment"], "weights": [1, 2], "intercept": 0}, "need 1 weights"),
        ({"features": ["entailment"], "weights": [float("nan")], "intercept": 0}, "finite"),
    ):
        with pytest.raises(ValueError, match=msg):
            rule_from_dict(bad)


def test_pair_score_is_the_max_over_windows_and_best_rows() -> None:
    rule = FittedRule(("entailment",), (4.0,), -2.0)
    x = np.array([[0.1], [0.9], [0.5], [0.3]])
    owner = np.array([0, 0, 1, 1])
    got = pair_scores(rule, x, owner, 3)
    assert got[0] == pytest.approx(fitted_score(rule, x[1:2])[0])
    assert got[1] == pytest.approx(fitted_score(rule, x[2:3])[0]) and got[2] == 0.0
    assert best_rows(np.array([0.2, 0.7, 0.4, 0.4]), owner, 3).tolist() == [1, 2, -1]


def test_cross_validated_scores_never_see_their_own_labels() -> None:
    x, y = _data(n=120, seed=3)
    owner = np.arange(120)
    rows = np.arange(120)
    folds = np.arange(120) % 3
    a = cross_validated(x, owner, rows, y, folds, FEATS)
    flipped = y.copy()
    flipped[folds == 0] = 1 - flipped[folds == 0]  # change fold 0's labels only
    b = cross_validated(x, owner, rows, flipped, folds, FEATS)
    assert np.array_equal(a[folds == 0], b[folds == 0])  # fold 0 was fitted without them
    assert not np.array_equal(a[folds == 1], b[folds == 1])  # the others were fitted with them


@pytest.fixture(scope="module")
def fitted_dir(tmp_path_factory: pytest.TempPathFactory, verifier_dir: Path) -> Path:
    out = tmp_path_factory.mktemp("fit") / "fitted"
    rule = FittedRule(FEATS, (3.0, -2.0, 1.5), -1.0)
    write_cross_encoder(
        out,
        tiny_weights(0),
        TINY_CONFIG,
        tokenizer_json(package_model_dir(), max_length=128),
        name="tiny fitted (tests only)",
        scoring="fitted",
        window=WindowSpec(),
        relatedness=verifier_dir,
        extra={"fitted": rule.to_dict()},
    )
    return out


def test_card_window_scores_recomputed_from_the_two_models(
    fitted_dir: Path, verifier_dir: Path
) -> None:
    v = load_verifier(fitted_dir)
    assert v.fitted is not None and "fitted" in v.rules()
    wins, s = v.window_scores(CLAIM, PASSAGE)
    assert len(wins) >= 2
    probs = v._pair_probs([CLAIM] * len(wins), wins)
    _, rel = load_verifier(verifier_dir).window_scores(CLAIM, PASSAGE)
    z = -1.0 + 3.0 * probs[:, 0] - 2.0 * probs[:, 2] + 1.5 * rel
    assert np.allclose(s, 1 / (1 + np.exp(-z)), atol=1e-9)
    assert v.score([CLAIM], [PASSAGE])[0] == pytest.approx(s.max())
    # the weights are part of the score store's key
    other = load_verifier(fitted_dir)
    other.fitted = FittedRule(FEATS, (3.0, -2.0, 1.0), -1.0)
    assert ss.mode_sha256(ss.scoring_mode(v)) != ss.mode_sha256(ss.scoring_mode(other))


def test_card_without_weights_is_refused(fitted_dir: Path, tmp_path: Path) -> None:
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(fitted_dir, bad)
    card = json.loads((bad / "card.json").read_text())
    del card["extra"]["fitted"]
    (bad / "card.json").write_text(json.dumps(card))
    with pytest.raises(InputError, match=r"extra\.fitted"):
        load_verifier(bad)
