"""The ONNX verifier: sha pin, numpy parity (fp32 and int8), windows, providers, cross-encoder."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from kit.core.errors import ConfigError, IntegrityError
from kit.guard.scoring.windows import WindowSpec, passage_windows
from kit.guard.verifiers.card import ModelCard, Verifier
from kit.guard.verifiers.export import load_weights, package_model_dir, sha256_bytes
from kit.guard.verifiers.load import load_verifier
from kit.guard.verifiers.session import OnnxCrossEncoder, providers_for
from kit.runs.sentences import split_sentences

sys.path.insert(0, str(Path(__file__).parents[1]))
from _numpy_minilm import embed_one

FP32_SHA256 = "db897c5cabdb5cec6d0bad4b69faddc7e1e8f405b152872f59e3ac3d43fa7504"

TEXTS = [
    "Aspirin reduces the risk of myocardial infarction in adults over 50.",
    "short",
    "",
    "Résumé naïve café — ünïcödé ≥ 5 µg/mL [1] (PMID 12345).",
    "In a randomized controlled trial of 412 patients, adjuvant chemotherapy did not improve "
    "overall survival compared with observation alone (hazard ratio 0.97; 95% CI 0.78-1.21).",
    "The guideline recommends screening colonoscopy every ten years starting at age 45.",
    "Mice lacking the gene developed insulin resistance and hepatic steatosis.",
    "No association was found between coffee intake and pancreatic cancer.",
]


def test_fp32_sha256_pinned_and_card(verifier_dir: Path) -> None:
    data = (verifier_dir / "minilm-fp32.onnx").read_bytes()
    assert sha256_bytes(data) == FP32_SHA256
    card = json.loads((verifier_dir / "card.json").read_text())
    assert card["onnx_sha256"] == FP32_SHA256
    assert card["max_length"] == 256 and "max over windows" in card["scoring_rule"]
    assert (
        sha256_bytes((verifier_dir / "minilm-int8.onnx").read_bytes())
        == card["extra"]["int8_sha256"]
    )
    tok = json.loads((verifier_dir / "tokenizer.json").read_text())
    assert tok["truncation"]["max_length"] == 256 and tok["padding"]["strategy"] == "BatchLongest"


@pytest.fixture(scope="module")
def weights() -> dict[str, np.ndarray]:
    return load_weights(package_model_dir())[0]


@pytest.mark.parametrize(("variant", "check"), [("fp32", "maxabs"), ("int8", "cosine")])
def test_parity_with_numpy_forward(
    verifier_dir: Path, weights: dict, variant: str, check: str
) -> None:
    v = load_verifier(verifier_dir, variant)
    got = v.embed(TEXTS)  # batched: padded to the longest, so this also checks the mask
    ref = np.stack([embed_one(weights, v.tokenizer.encode(t).ids) for t in TEXTS])
    if check == "maxabs":
        assert np.abs(got - ref).max() < 1e-5
    else:
        cos = np.sum(got * ref, axis=1)
        assert cos.min() >= 0.97


def test_sha_mismatch_refused(verifier_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "v"
    shutil.copytree(verifier_dir, bad)  # the card folder, its receipts/ included
    card = json.loads((bad / "card.json").read_text())
    card["onnx_sha256"] = "0" * 64
    (bad / "card.json").write_text(json.dumps(card))
    with pytest.raises(IntegrityError):
        load_verifier(bad)


def test_score_reads_full_passage_not_prefix(verifier_dir: Path) -> None:
    v = load_verifier(verifier_dir)
    assert isinstance(v, Verifier)
    filler = " ".join(f"The weather on day {i} was mild and unremarkable." for i in range(80))
    claim = "Metformin lowered HbA1c by 1.2 percentage points in type 2 diabetes."
    passage = filler + " " + claim
    far = v.score([claim], [passage])[0]
    none = v.score([claim], [filler])[0]
    # the claim sits in the last sentence, far past any 256-token prefix
    assert far > 0.7 and far - none > 0.2
    assert v.score([claim], [""])[0] == 0.0
    assert 0.0 <= none <= 1.0


def test_windows_cover_every_word() -> None:
    text = " ".join(f"Sentence number {i} says thing {i}." for i in range(40))
    text += " " + " ".join(f"w{i}" for i in range(500)) + "."  # one 500-word sentence
    wins = passage_windows(text, WindowSpec(3, 1, 120))
    assert all(len(w.split()) <= 120 for w in wins)
    covered = set(" ".join(wins).split())
    assert set(text.split()) <= covered
    assert passage_windows("   ") == []


def test_sentence_split_abbreviations() -> None:
    s = split_sentences("Smith et al. found X in Fig. 2. The effect was large! Was it? Yes.")
    assert s == ["Smith et al. found X in Fig. 2.", "The effect was large!", "Was it?", "Yes."]


def test_device_choice() -> None:
    import onnxruntime as ort

    assert providers_for("cpu") == ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" in ort.get_available_providers():
        assert providers_for("cuda")[0] == "CUDAExecutionProvider"
    else:
        with pytest.raises(ConfigError) as exc:
            providers_for("cuda")
        assert "CUDAExecutionProvider" in exc.value.message
    with pytest.raises(ConfigError):
        providers_for("tpu")


def _tiny_cross_encoder(path: Path, vocab: int, rng: np.random.Generator) -> None:
    """A randomly initialised 3-class cross-encoder: embed, add segment, mean-pool, project."""
    e = rng.normal(0, 1, (vocab, 8)).astype(np.float32)
    seg = rng.normal(0, 1, (2, 8)).astype(np.float32)
    proj = rng.normal(0, 1, (8, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Gather", ["E", "input_ids"], ["x"], axis=0),
        helper.make_node("Gather", ["S", "token_type_ids"], ["t"], axis=0),
        helper.make_node("Add", ["x", "t"], ["xt"]),
        helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["m", "ax"], ["m3"]),
        helper.make_node("Mul", ["xt", "m3"], ["xm"]),
        helper.make_node("ReduceSum", ["xm", "ax1"], ["pooled"], keepdims=0),
        helper.make_node("MatMul", ["pooled", "P"], ["logits"]),
    ]
    inits = [
        numpy_helper.from_array(e, "E"),
        numpy_helper.from_array(seg, "S"),
        numpy_helper.from_array(proj, "P"),
        numpy_helper.from_array(np.array([-1], np.int64), "ax"),
        numpy_helper.from_array(np.array([1], np.int64), "ax1"),
    ]
    ins = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["b", "t"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    out = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["b", 3])]
    model = helper.make_model(
        helper.make_graph(nodes, "tiny", ins, out, inits),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def test_cross_encoder_plugs_into_same_interface(verifier_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "tiny.onnx"
    _tiny_cross_encoder(path, 30522, np.random.default_rng(0))
    card = ModelCard(
        name="tiny random cross-encoder",
        kind="cross-encoder",
        onnx_file=path.name,
        onnx_sha256=sha256_bytes(path.read_bytes()),
        tokenizer="tokenizer.json",
        tokenizer_sha256="",
        max_length=256,
        scoring_rule="softmax[0]",
        window_rule=WindowSpec().describe(),
        validated_on="nothing (plumbing test)",
    )
    v = OnnxCrossEncoder(
        path,
        verifier_dir / "tokenizer.json",
        card,
        labels=("entailment", "neutral", "contradiction"),
    )
    assert isinstance(v, Verifier)
    claims = ["Aspirin helps.", "Aspirin helps.", "Nothing here."]
    passages = ["Aspirin helps. It is cheap. It is old. It works.", "", "Short text."]
    s = v.score(claims, passages)
    assert s.shape == (3,) and s[1] == 0.0 and np.all((s >= 0) & (s <= 1))
    wins, ws = v.window_scores(claims[0], passages[0])
    assert s[0] == pytest.approx(ws.max())
    # reference: softmax of the same tiny network in numpy for one window
    enc = v.tokenizer.encode(claims[0], wins[0])
    m = onnx.load(str(path))
    init = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    pooled = (init["E"][enc.ids] + init["S"][enc.type_ids]).sum(0)
    logits = pooled @ init["P"]
    p = np.exp(logits - logits.max())
    assert ws[0] == pytest.approx(p[0] / p.sum(), rel=1e-5)
