"""Issue 38: each distinct text tokenized once (shared by a cross-encoder and its relatedness
bi-encoder), batches padded as the tokenizer pads, ordered by token length where the graph
allows -- and the scores of the old batching (tests/guard/old_batching.py) kept: int8 byte for
byte, fp32 within 1e-6."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from kit.guard.scoring.windows import WindowSpec
from kit.guard.verifiers.batching import (
    Tokens,
    batch_order,
    bert_pair_template,
    chunked,
    graph_op_types,
    pad_feed,
    scales_per_batch,
)
from kit.guard.verifiers.cross_export import write_cross_encoder
from kit.guard.verifiers.export import package_model_dir, tokenizer_json
from kit.guard.verifiers.load import load_verifier
from kit.guard.verifiers.session import flatten_windows, pair_feed
from tests.guard.old_batching import old_embed, old_pair_feeds, old_pair_probs, old_scores
from tests.guard.tiny_model import CLAIM, PASSAGE, TINY_CONFIG, tiny_weights

TEXTS = [
    "Aspirin reduces the risk of myocardial infarction in adults over 50.",
    "short",
    "",
    "Résumé naïve café — ünïcödé ≥ 5 µg/mL [1] (PMID 12345).",
    "In a randomized controlled trial of 412 patients, adjuvant chemotherapy did not improve "
    "overall survival compared with observation alone (hazard ratio 0.97; 95% CI 0.78-1.21).",
    "No association was found between coffee intake and pancreatic cancer.",
    "BRCA1/2 carriers: 60–70% lifetime risk; p<0.001 (n=1,024) [[CLS]] [SEP] [PAD]",
]
LONG = " ".join(["Interleukin-6 signalling modulates hepatic acute-phase responses."] * 40)
CLAIMS = [CLAIM, "Aspirin lowers stroke risk.", "No effect on bleeding was seen.", "x"]
PASSAGES = [PASSAGE, PASSAGE, "Bleeding was more common with aspirin. Costs were not measured.", ""]


def _tok(max_length: int = 256) -> Tokenizer:
    return Tokenizer.from_str(tokenizer_json(package_model_dir(), max_length))


def _same_feed(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return all(a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in b)


# ----------------------------------------------------------------------------- tokens, padding


@pytest.mark.parametrize(
    "padding",
    [
        {},
        {"direction": "left"},
        {"pad_to_multiple_of": 8},
        {"length": 80, "pad_id": 7, "pad_type_id": 1},
    ],
)
def test_pad_feed_pads_as_the_tokenizer_pads(padding: dict) -> None:
    tok = _tok(64)
    tok.enable_padding(**{"pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]", **padding})
    tokens = Tokens(tok)
    texts = [*TEXTS, LONG]
    assert _same_feed(
        pad_feed(tokens.texts(texts), tokens.padding), pair_feed(tok.encode_batch(texts))
    )
    pairs = [(c, t) for c in CLAIMS for t in [*TEXTS, LONG]]
    assert _same_feed(
        pad_feed(tokens.pairs(pairs), tokens.padding), pair_feed(tok.encode_batch(pairs))
    )


@pytest.mark.parametrize("max_length", [256, 24])
def test_pairs_joined_from_texts_equal_the_tokenizers_pair_encoding(max_length: int) -> None:
    tok = _tok(max_length)
    tok.no_padding()
    tokens = Tokens(_tok(max_length))
    assert tokens.joins_pairs
    pairs = [(a, b) for a in [*TEXTS, LONG] for b in [*TEXTS, LONG]]
    for (ids, types), e in zip(tokens.pairs(pairs), tok.encode_batch(pairs), strict=True):
        assert ids.tolist() == e.ids and types.tolist() == e.type_ids


def test_each_distinct_text_is_tokenized_once() -> None:
    tokens = Tokens(_tok())
    tokens.pairs([(CLAIMS[0], t) for t in TEXTS] + [(CLAIMS[1], t) for t in TEXTS])
    assert tokens.tokenized == len(set(TEXTS)) + 2  # the texts once, the two claims once
    tokens.texts([*TEXTS, CLAIMS[0]])  # all remembered
    assert tokens.tokenized == len(set(TEXTS)) + 2
    tokens.pairs([(LONG, LONG)])  # truncated: encoded as a pair by the tokenizer
    assert tokens.tokenized == len(set(TEXTS)) + 2 + 1 + 1


def test_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import kit.guard.verifiers.batching as b

    monkeypatch.setattr(b, "MEMO_TEXTS", 4)
    tokens = Tokens(_tok())
    first = tokens.texts(TEXTS[:3])
    assert len(tokens._memo) == 3
    again = tokens.texts(TEXTS[3:6])  # 3 + 3 > 4: starts afresh
    assert len(tokens._memo) == 3 and tokens.tokenized == 6
    assert [x.tolist() for x, _ in tokens.texts(TEXTS[:3])] == [x.tolist() for x, _ in first]
    assert len(again) == 3


def test_template_check() -> None:
    pp = json.loads(_tok().to_str())["post_processor"]
    assert bert_pair_template(pp) and bert_pair_template({"type": "BertProcessing"})
    assert not bert_pair_template(None)
    assert not bert_pair_template({"type": "RobertaProcessing"})
    swapped = {**pp, "pair": [pp["pair"][i] for i in (0, 3, 2, 1, 4)]}
    assert not bert_pair_template(swapped)


def test_batch_order_by_tokens_or_characters() -> None:
    keys = ["d", "c", "b", "a"]
    assert batch_order([3, 1, 2, 1], [10, 40, 30, 20], keys, by_tokens=True) == [3, 1, 2, 0]
    assert batch_order([3, 1, 2, 1], [10, 40, 30, 20], keys, by_tokens=False) == [0, 3, 2, 1]
    assert chunked([3, 1, 2, 0], 3) == [[3, 1, 2], [0]]


def test_dynamic_quantisation_is_detected(verifier_dir: Path) -> None:
    fp32 = graph_op_types(verifier_dir / "minilm-fp32.onnx")
    int8 = graph_op_types((verifier_dir / "minilm-int8.onnx").read_bytes())
    assert not scales_per_batch(fp32) and scales_per_batch(int8)
    assert load_verifier(verifier_dir, "fp32").by_tokens
    assert not load_verifier(verifier_dir, "int8").by_tokens


# ----------------------------------------------------------------------------- the verifiers


def _cross(folder: Path, max_length: int, relatedness: Path | None, scoring: str) -> Path:
    write_cross_encoder(
        folder,
        tiny_weights(5),
        TINY_CONFIG,
        tokenizer_json(package_model_dir(), max_length),
        name="tiny (tests)",
        scoring=scoring,
        window=WindowSpec(),
        relatedness=relatedness,
    )
    return folder


@pytest.fixture(scope="module")
def shared_cross(tmp_path_factory: pytest.TempPathFactory, verifier_dir: Path) -> Path:
    """A tiny two_signal cross-encoder whose tokenizer is its relatedness bi-encoder's (256)."""
    return _cross(tmp_path_factory.mktemp("shared") / "c", 256, verifier_dir, "two_signal")


def test_cross_and_relatedness_share_tokens_when_the_tokenizer_is_the_same(
    shared_cross: Path, tiny_cross_dir: Path, verifier_dir: Path, tmp_path: Path
) -> None:
    v = load_verifier(shared_cross, "int8")
    assert v.relatedness.tokens is v.tokens
    v.score(CLAIMS, PASSAGES)
    flat_c, flat_w, _ = flatten_windows(CLAIMS, PASSAGES, v.window)
    distinct = {*flat_c, *flat_w}  # "x" cites an empty passage: no window, nothing to encode
    assert v.tokens.tokenized == len(distinct)  # once for the pairs and the relatedness
    other = load_verifier(_cross(tmp_path / "c128", 128, verifier_dir, "two_signal"))
    assert other.relatedness.tokens is not other.tokens  # truncation 128 vs 256: not shared


@pytest.mark.parametrize("variant", ["fp32", "int8"])
def test_scores_match_the_old_batching(shared_cross: Path, variant: str) -> None:
    """int8: byte-identical (the old batches, fed byte-identical inputs); fp32: batched by
    token length, within 1e-6 of the old batches (measured ~1e-8)."""
    claims = [c for c in CLAIMS for _ in range(3)] + TEXTS
    passages = PASSAGES * 3 + [PASSAGE + " " + t for t in TEXTS]
    v = load_verifier(shared_cross, variant, batch_size=4)
    new = v.score(claims, passages)
    old = old_scores(load_verifier(shared_cross, variant, batch_size=4), claims, passages)
    if variant == "int8":
        assert np.array_equal(new, old)
    else:
        assert np.max(np.abs(new - old)) <= 1e-6


@pytest.mark.parametrize("variant", ["fp32", "int8"])
def test_minilm_embeddings_match_the_old_batching(verifier_dir: Path, variant: str) -> None:
    texts = [*TEXTS, LONG, *CLAIMS, PASSAGE]
    new = load_verifier(verifier_dir, variant, batch_size=3).embed(texts)
    old = old_embed(load_verifier(verifier_dir, variant, batch_size=3), texts)
    if variant == "int8":
        assert np.array_equal(new, old)
    else:
        assert np.max(np.abs(new - old)) <= 1e-6


def test_fp32_batches_pad_less(shared_cross: Path) -> None:
    """The fp32 cross-encoder's batches hold rows of similar token length: its padded tokens are
    at most those of the character-length order (the old one), here strictly fewer."""
    v = load_verifier(shared_cross, "fp32", batch_size=2)
    seen: list[dict[str, np.ndarray]] = []
    run = v.runner.run

    def recording(feeds):
        for f in feeds:
            seen.append(f)
            yield from run([f])

    v.runner.run = recording  # type: ignore[method-assign]
    # characters and tokens disagree: "x x x ..." is a token per 2 characters, a long word
    # a token per 5 or more
    passages = ["x " * 40, "Internationalization " * 4, "y " * 45, "Hepatocellular " * 6]
    passages += ["z " * 5, "q " * 6]
    claims = ["Claim."] * len(passages)
    probs = v._pair_probs(claims, passages)
    padded = sum(f["input_ids"].size for f in seen)
    real = sum(int(f["attention_mask"].sum()) for f in seen)
    old = load_verifier(shared_cross, "fp32", batch_size=2)
    old_padded = sum(f["input_ids"].size for f in old_pair_feeds(old, claims, passages))
    assert real < padded < old_padded
    assert np.max(np.abs(probs - old_pair_probs(old, claims, passages))) <= 1e-6
