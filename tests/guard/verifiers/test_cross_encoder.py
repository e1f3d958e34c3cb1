"""The cross-encoder path: graph, card, load by card, class probabilities, sha256 check."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from kit.core.errors import ConfigError, InputError, IntegrityError
from kit.guard.verifiers.load import load_verifier, resolve_verifier
from kit.guard.verifiers.rules import class_score
from kit.guard.verifiers.session import OnnxCrossEncoder


def test_tiny_card_loads_as_cross_encoder(tiny_cross_dir: Path) -> None:
    v = load_verifier(tiny_cross_dir)
    assert isinstance(v, OnnxCrossEncoder)
    assert v.labels == ["entailment", "neutral", "contradiction"]
    s, probs = v.score_classes(["a claim", "another"], ["One. Two sentences here.", ""])
    assert s.shape == (2,) and probs.shape == (2, 3)
    assert 0 <= s[0] <= 1 and s[1] == 0  # empty passage supports nothing
    assert np.isclose(probs[0].sum(), 1.0) and np.isnan(probs[1]).all()
    # score() is the same max-over-windows number
    assert np.allclose(v.score(["a claim"], ["One. Two sentences here."]), s[:1])


def test_int8_variant_close_to_fp32(tiny_cross_dir: Path) -> None:
    claims = ["aspirin lowers risk", "the drug failed"] * 3
    passages = ["Aspirin reduced the risk of stroke in adults.", "No effect was seen."] * 3
    a = load_verifier(tiny_cross_dir, "fp32").score(claims, passages)
    b = load_verifier(tiny_cross_dir, "int8").score(claims, passages)
    assert np.max(np.abs(a - b)) < 0.05


def test_rebuild_is_byte_identical(tmp_path: Path, tiny_cross_dir: Path) -> None:
    from tests.guard.tiny_model import build_tiny_cross_encoder

    again = build_tiny_cross_encoder(tmp_path / "again")
    assert (again / "cross-fp32.onnx").read_bytes() == (
        tiny_cross_dir / "cross-fp32.onnx"
    ).read_bytes()
    assert (again / "card.json").read_text() == (tiny_cross_dir / "card.json").read_text()


def test_class_score_rules() -> None:
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    labels = ["entailment", "neutral", "contradiction"]
    assert np.allclose(class_score(p, labels, "entailment"), [0.7, 0.1])
    assert np.allclose(class_score(p, labels, "entailment_minus_contradiction"), [0.8, 0.15])


def test_tampered_model_is_refused(tmp_path: Path, tiny_cross_dir: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(tiny_cross_dir, bad)
    data = bytearray((bad / "cross-fp32.onnx").read_bytes())
    data[-1] ^= 1
    (bad / "cross-fp32.onnx").write_bytes(bytes(data))
    with pytest.raises(IntegrityError):
        load_verifier(bad)


def test_card_without_entailment_label_is_refused(tmp_path: Path, tiny_cross_dir: Path) -> None:
    bad = tmp_path / "nolabel"
    shutil.copytree(tiny_cross_dir, bad)
    card = json.loads((bad / "card.json").read_text())
    card["extra"]["labels"] = ["yes", "maybe", "no"]
    (bad / "card.json").write_text(json.dumps(card))
    with pytest.raises(InputError, match="entailment"):
        load_verifier(bad)


def test_unknown_verifier_name_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="neither a built-in name"):
        resolve_verifier(tmp_path / "nowhere")
