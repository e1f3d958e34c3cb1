"""The two_signal scoring rule: (P(entailment) + relatedness) / 2 per (claim, window), max over
windows, with the relatedness bi-encoder travelling inside the cross-encoder's card folder.

Checked against the two models scored separately (the tiny random cross-encoder and the real
minilm-bi), so the rule is verified by recomputation, not by its own code path.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from kit.core.errors import InputError, IntegrityError
from kit.guard.scoring import score_store as ss
from kit.guard.verifiers.load import load_verifier
from kit.guard.verifiers.rules import two_signal_score
from kit.guard.verifiers.session import OnnxCrossEncoder
from kit.guard.verifiers.two_stage import TwoStageVerifier
from tests.guard.tiny_model import CLAIM, PASSAGE, build_tiny_cross_encoder


@pytest.fixture(scope="module")
def two_signal_dir(tmp_path_factory: pytest.TempPathFactory, verifier_dir: Path) -> Path:
    out = tmp_path_factory.mktemp("two") / "two-signal"
    return build_tiny_cross_encoder(out, scoring="two_signal", relatedness=verifier_dir)


def test_formula_is_the_mean_of_the_two_signals() -> None:
    got = two_signal_score(np.array([0.0, 1.0, 0.3]), np.array([0.0, 1.0, 0.9]))
    assert np.allclose(got, [0.0, 1.0, 0.6])


def test_window_scores_recomputed_from_the_two_models(
    two_signal_dir: Path, verifier_dir: Path
) -> None:
    v = load_verifier(two_signal_dir)
    assert isinstance(v, OnnxCrossEncoder) and v.relatedness is not None
    wins, s = v.window_scores(CLAIM, PASSAGE)
    assert len(wins) >= 2  # the passage spans several windows
    v.scoring = "entailment"
    _, pe = v.window_scores(CLAIM, PASSAGE)
    _, rel = load_verifier(verifier_dir).window_scores(CLAIM, PASSAGE)
    assert np.allclose(s, (pe + rel) / 2, atol=1e-12)
    v.scoring = "two_signal"
    score, probs = v.score_classes([CLAIM, CLAIM], [PASSAGE, ""])
    assert score[0] == pytest.approx(s.max()) and score[1] == 0.0
    assert np.isnan(probs[1]).all() and probs[0].sum() == pytest.approx(1.0)
    assert set(v.rules()) == {"entailment", "entailment_minus_contradiction", "two_signal"}


def test_card_pins_the_relatedness_folder(two_signal_dir: Path, verifier_dir: Path) -> None:
    card = json.loads((two_signal_dir / "card.json").read_text())
    rel = card["extra"]["relatedness"]
    bi_card = json.loads((verifier_dir / "card.json").read_text())
    assert rel["folder"] == "relatedness" and rel["onnx_sha256"] == bi_card["onnx_sha256"]
    assert "relatedness bi-encoder" in card["scoring_rule"]


def test_tampered_or_missing_relatedness_is_refused(tmp_path: Path, two_signal_dir: Path) -> None:
    bad = tmp_path / "tampered"
    shutil.copytree(two_signal_dir, bad)
    card = bad / "relatedness" / "card.json"
    card.write_text(card.read_text().replace('"name"', '"name" ', 1))
    with pytest.raises(IntegrityError, match="sha256"):
        load_verifier(bad)
    gone = tmp_path / "gone"
    shutil.copytree(two_signal_dir, gone)
    d = json.loads((gone / "card.json").read_text())
    del d["extra"]["relatedness"]
    (gone / "card.json").write_text(json.dumps(d))
    with pytest.raises(InputError, match="names no relatedness"):
        load_verifier(gone)
    escape = tmp_path / "escape"
    shutil.copytree(two_signal_dir, escape)
    d = json.loads((escape / "card.json").read_text())
    d["extra"]["relatedness"]["folder"] = "../two-signal/relatedness"
    (escape / "card.json").write_text(json.dumps(d))
    with pytest.raises(InputError, match="subfolder"):
        load_verifier(escape)


def test_cards_without_relatedness_offer_only_class_rules(tiny_cross_dir: Path) -> None:
    v = load_verifier(tiny_cross_dir)
    assert v.relatedness is None and "two_signal" not in v.rules()


def test_two_stage_all_windows_equals_two_signal(two_signal_dir: Path, verifier_dir: Path) -> None:
    cross = load_verifier(two_signal_dir)
    two = TwoStageVerifier(load_verifier(verifier_dir), cross, top_k=None)
    claims, passages = [CLAIM, "Unrelated."], [PASSAGE, PASSAGE]
    assert np.allclose(two.score(claims, passages), cross.score(claims, passages))


def test_store_key_names_the_relatedness_model(two_signal_dir: Path, tiny_cross_dir: Path) -> None:
    with_rel = ss.scoring_mode(load_verifier(two_signal_dir))
    without = ss.scoring_mode(load_verifier(tiny_cross_dir))
    assert len(with_rel["relatedness_onnx_sha256"]) == 64
    assert "relatedness_onnx_sha256" not in without
