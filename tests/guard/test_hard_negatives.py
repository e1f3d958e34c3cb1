"""Hard NEI pair construction: nearest other-claim passage by content-word overlap."""

from __future__ import annotations

import pandas as pd
import pytest

from kit.guard.hard_negatives import SUFFIX, content_words, hard_nei_pairs, word_jaccard


def _pairs() -> pd.DataFrame:
    rows = [
        (
            "a1",
            "Aspirin lowers stroke risk in adults",
            "Aspirin lowered stroke risk in adults.",
            "entailment",
            "s",
        ),
        (
            "a2",
            "Aspirin raises stroke risk in adults",
            "Aspirin lowered stroke risk in adults.",
            "contradiction",
            "s",
        ),
        (
            "b1",
            "Statins lower cholesterol in adults",
            "Statins lowered cholesterol levels.",
            "entailment",
            "s",
        ),
        (
            "c1",
            "Vitamin D prevents fractures",
            "Vitamin D did not prevent fractures.",
            "contradiction",
            "s",
        ),
        (
            "e1",
            "Aspirin treats migraine",
            "Aspirin dose in adults with migraine.",
            "entailment",
            "s",
        ),
        ("d1", "A dog runs in the park", "A dog is running outside.", "entailment", "t"),
    ]
    return pd.DataFrame(rows, columns=["pair_id", "claim", "passage", "label", "source"])


def test_content_words_drop_stop_words_and_short_words() -> None:
    assert content_words("The dose of Aspirin is 81 mg") == {"dose", "aspirin"}


def test_word_jaccard_matches_the_set_definition() -> None:
    left = ["aspirin lowers stroke risk", "nothing shared here"]
    right = ["stroke risk and aspirin dose", "aspirin"]
    sim = word_jaccard(left, right)
    for i, a in enumerate(left):
        for j, b in enumerate(right):
            sa, sb = content_words(a), content_words(b)
            want = len(sa & sb) / len(sa | sb) if sa | sb else 0.0
            assert sim[i, j] == pytest.approx(want)


def test_pairs_take_the_nearest_passage_of_another_claim() -> None:
    out = hard_nei_pairs(_pairs(), fraction=1.0, seed=0, sources=("s",))
    assert set(out["label"]) == {"neutral"} and set(out["source"]) == {"s"}
    assert all(pid.endswith(SUFFIX) for pid in out["pair_id"])
    got = dict(zip(out["pair_id"], out["passage"], strict=True))
    # b1 shares "adults" with two passages: Jaccard 1/7 beats 1/8; never its own passage
    assert got["b1" + SUFFIX] == "Aspirin dose in adults with migraine."
    # a1 is already paired with the nearest passage (its own; a2 shares it): it takes the next
    assert got["a1" + SUFFIX] == "Aspirin dose in adults with migraine."
    # c1 shares no content word with any other passage: it is skipped
    assert "c1" + SUFFIX not in got
    paired = set(zip(_pairs()["claim"], _pairs()["passage"], strict=True))
    assert not paired & set(zip(out["claim"], out["passage"], strict=True))


def test_fraction_and_seed_decide_which_claims_and_reproduce() -> None:
    frame = _pairs()
    a = hard_nei_pairs(frame, 0.5, seed=3, sources=("s", "t"))
    b = hard_nei_pairs(frame, 0.5, seed=3, sources=("s", "t"))
    pd.testing.assert_frame_equal(a, b)
    assert len(a) <= 3 and not (a["source"] == "t").any()  # one pair in t: no other passage
    assert hard_nei_pairs(frame, 0.0, seed=0, sources=("s",)).empty
    with pytest.raises(ValueError, match="fraction"):
        hard_nei_pairs(frame, 1.5, seed=0, sources=("s",))
    seeds = {tuple(hard_nei_pairs(frame, 0.5, seed=s, sources=("s",))["pair_id"]) for s in range(8)}
    assert len(seeds) > 1
