"""Hard NEI pair construction: nearest other-claim passage by content-word overlap."""

from __future__ import annotations

import pandas as pd
import pytest

from kit.guard.training.hard_negatives import SUFFIX, content_words, hard_nei_pairs, word_jaccard


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


def test_known_pairs_are_never_written_as_neutral() -> None:
    frame = _pairs()
    first = hard_nei_pairs(frame, 1.0, seed=0, sources=("s",))
    b1 = first[first["pair_id"] == "b1" + SUFFIX].iloc[0]
    # the whole source says b1's claim is also evidenced by that passage: it must not be reused
    known = pd.DataFrame({"claim": [b1["claim"]], "passage": [b1["passage"]]})
    again = hard_nei_pairs(frame, 1.0, seed=0, sources=("s",), known=known)
    row = again[again["pair_id"] == "b1" + SUFFIX]
    assert row.empty or row["passage"].iloc[0] != b1["passage"]


def dev_pair_text() -> tuple[str, str]:
    return ("Aspirin lowers stroke risk in adults", "Aspirin dose for migraine.")


def test_training_pairs_add_hard_nei_for_claim_sources_but_not_the_left_out_one() -> None:
    from dataclasses import replace

    from kit.guard.training.train_data import Recipe, training_pairs

    rows = []
    for src in ("scifact", "check_covid", "snli"):
        for k, (claim, passage) in enumerate(
            [
                ("Aspirin lowers stroke risk in adults", "Aspirin lowered stroke risk."),
                ("Statins lower cholesterol in adults", "Statins lowered cholesterol in adults."),
                ("Aspirin treats migraine in adults", "Aspirin dose for migraine."),
                ("Vitamin D prevents fractures in adults", "Vitamin D and fractures in adults."),
            ]
        ):
            rows.append((f"{src}-{k}", claim, passage, "entailment", src, "train"))
    rows.append(("scifact-dev", *dev_pair_text(), "entailment", "scifact", "dev"))
    all_pairs = pd.DataFrame(
        rows, columns=["pair_id", "claim", "passage", "label", "source", "split"]
    )
    recipe = replace(Recipe(), sources=("scifact", "check_covid", "snli"), hard_nei_fraction=1.0)
    out = training_pairs(all_pairs, recipe)
    hard = out[out["pair_id"].str.endswith(SUFFIX)]
    assert set(hard["source"]) == {"scifact", "check_covid"}  # snli is not a claim source
    assert set(hard["label"]) == {"neutral"}
    # a dev-split pair of the source counts as known: never relabelled neutral in training
    dev_pair = dev_pair_text()
    assert dev_pair not in set(zip(hard["claim"], hard["passage"], strict=True))
    train_only = training_pairs(all_pairs[all_pairs["split"] == "train"], recipe)
    hard_t = train_only[train_only["pair_id"].str.endswith(SUFFIX)]
    assert dev_pair in set(zip(hard_t["claim"], hard_t["passage"], strict=True))
    loso = training_pairs(all_pairs, recipe, leave_out="check_covid")
    assert "check_covid" not in set(loso["source"])
    assert set(loso.loc[loso["pair_id"].str.endswith(SUFFIX), "source"]) == {"scifact"}
    off = training_pairs(all_pairs, replace(recipe, hard_nei_fraction=0.0))
    assert not off["pair_id"].str.endswith(SUFFIX).any()
