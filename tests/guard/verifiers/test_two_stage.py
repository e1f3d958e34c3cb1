"""Two-stage verification: plumbing only (the cross-encoder here has random weights)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kit.core.errors import ConfigError
from kit.guard.verifiers.card import ModelCard
from kit.guard.verifiers.load import load_verifier
from kit.guard.verifiers.two_stage import TwoStageVerifier, auc_cost

SENTS = [
    "Metformin lowered HbA1c by 0.8 percent in adults with type 2 diabetes.",
    "The trial enrolled 412 patients across nine sites.",
    "Adverse events were mild and mostly gastrointestinal.",
    "No change in body weight was observed after 24 weeks.",
    "Statin therapy did not reduce the incidence of dementia.",
    "Sleep duration was associated with lower blood pressure.",
    "The cohort was followed for a median of 6.2 years.",
    "Vitamin D supplementation had no effect on fracture risk.",
]
PASSAGES = [
    " ".join(SENTS),
    " ".join(SENTS[3:] + SENTS[:2]),
    "One short sentence only.",
    "",
    " ".join(reversed(SENTS)),
]
CLAIMS = [
    "Metformin reduced HbA1c in type 2 diabetes.",
    "Statins prevent dementia.",
    "A short sentence.",
    "Nothing to read.",
    "Vitamin D prevents fractures.",
]


def _pair(verifier_dir: Path, tiny_cross_dir: Path):  # type: ignore[no-untyped-def]
    return load_verifier(verifier_dir), load_verifier(tiny_cross_dir)


def test_top_k_all_equals_full_cross_encoder(verifier_dir: Path, tiny_cross_dir: Path) -> None:
    full_s, full_p = load_verifier(tiny_cross_dir).score_classes(CLAIMS, PASSAGES)
    for k in (None, 1000):
        bi, cross = _pair(verifier_dir, tiny_cross_dir)
        ts = TwoStageVerifier(bi, cross, top_k=k)
        s, p = ts.score_classes(CLAIMS, PASSAGES)
        assert np.array_equal(s, full_s)
        assert np.array_equal(p, full_p, equal_nan=True)
        assert ts.last_stats["judged"] == ts.last_stats["windows"]
    assert full_s[3] == 0.0 and np.all(np.isnan(full_p[3]))  # empty passage: s = 0


def test_top_1_judges_at_most_one_window_per_pair(verifier_dir: Path, tiny_cross_dir: Path) -> None:
    bi, cross = _pair(verifier_dir, tiny_cross_dir)
    calls: list[tuple[str, str]] = []
    orig = cross._pair_probs

    def spy(claims: list[str], windows: list[str]) -> np.ndarray:
        calls.extend(zip(claims, windows, strict=True))
        return orig(claims, windows)

    cross._pair_probs = spy
    ts = TwoStageVerifier(bi, cross, top_k=1)
    s = ts.score(CLAIMS, PASSAGES)
    per_claim = {c: sum(1 for cc, _ in calls if cc == c) for c in CLAIMS}
    assert all(n <= 1 for n in per_claim.values()), per_claim
    assert per_claim["Nothing to read."] == 0 and s[3] == 0.0
    assert ts.last_stats["judged"] == len(calls) == 4
    assert ts.last_stats["windows"] > 8
    # the kept window is the bi-encoder's best window
    wins, sims = bi.window_scores(CLAIMS[0], PASSAGES[0])
    assert ts.kept_windows(CLAIMS[:1], PASSAGES[:1]) == [[wins[int(np.argmax(sims))]]]
    # two-stage never exceeds the full max over windows
    full = load_verifier(tiny_cross_dir).score(CLAIMS, PASSAGES)
    assert np.all(s <= full + 1e-12)


def test_deterministic_and_card(verifier_dir: Path, tiny_cross_dir: Path) -> None:
    runs = []
    for _ in range(2):
        bi, cross = _pair(verifier_dir, tiny_cross_dir)
        ts = TwoStageVerifier(bi, cross, top_k=2)
        runs.append(ts.score(CLAIMS, PASSAGES))
    assert np.array_equal(runs[0], runs[1])
    card = ts.card
    assert isinstance(card, ModelCard) and card.kind == "cross-encoder"
    assert card.onnx_sha256 == cross.card.onnx_sha256
    assert "top 2" in card.scoring_rule and card.scoring_rule.startswith(cross.card.scoring_rule)
    assert card.window_rule.startswith(cross.card.window_rule) and "bi-encoder" in card.window_rule
    assert card.extra["two_stage"]["top_k"] == 2
    assert card.extra["two_stage"]["bi_onnx_sha256"] == bi.card.onnx_sha256


def test_bad_arguments(verifier_dir: Path, tiny_cross_dir: Path) -> None:
    bi, cross = _pair(verifier_dir, tiny_cross_dir)
    with pytest.raises(ConfigError):
        TwoStageVerifier(bi, cross, top_k=0)
    with pytest.raises(ConfigError):
        TwoStageVerifier(cross, bi, top_k=1)
    with pytest.raises(ConfigError):
        TwoStageVerifier(bi, cross).score(["a"], ["b", "c"])


def test_auc_cost(verifier_dir: Path, tiny_cross_dir: Path) -> None:
    bi, cross = _pair(verifier_dir, tiny_cross_dir)
    claims = CLAIMS[:3] + CLAIMS[4:]
    passages = PASSAGES[:3] + PASSAGES[4:]
    y = [True, False, True, False]
    res = auc_cost(bi, cross, claims, passages, y, top_k=1)
    full = load_verifier(tiny_cross_dir).score(claims, passages)
    pos, neg = full[[0, 2]], full[[1, 3]]
    brute = np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg])
    assert res.full.auc == pytest.approx(brute)
    assert res.delta == pytest.approx(res.two_stage.auc - res.full.auc)
    assert res.judged < res.windows
    same = auc_cost(bi, cross, claims, passages, y, top_k=None)
    assert same.delta == 0.0
    with pytest.raises(ConfigError):
        auc_cost(bi, cross, claims, passages, y[:2])
