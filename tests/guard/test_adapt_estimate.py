"""Issue 42: the AUC `kit guard adapt` prints for the adapted card foretells that card on claims
it never saw -- within the printed CI -- where one AUC over the pooled out-of-fold scores did not.

A tiny trainable cross-encoder (tests/guard/tiny_model.py: random weights, so the parent ranks
near chance) is adapted on half the claims of a construction-labelled set and scored on the
other half. Labels are by construction: a passage saying the claim's drug lowered the outcome
supports it; one saying it did not change or raised it does not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from kit.guard import train as tr
from kit.guard.adapt import adapt_verifier
from kit.guard.cross_export import write_cross_encoder
from kit.guard.export import package_model_dir, tokenizer_json
from kit.guard.verifier import load_verifier
from kit.guard.windows import WindowSpec
from kit.stats.roc import auc_score
from tests.guard.tiny_model import TINY_CONFIG, tiny_weights

DRUGS = ("aspirin", "statin", "metformin", "heparin", "insulin", "warfarin", "ibuprofen", "zinc")
OUTCOMES = ("mortality", "stroke", "infection", "pain", "fever", "relapse")
SUPPORTS = ("reduced", "lowered", "cut", "decreased")
DOES_NOT = ("did not change", "had no effect on", "increased", "raised")


def construction_labelled(n_claims: int, seed: int) -> pd.DataFrame:
    """One claim per cohort, with a supporting and/or a non-supporting passage (each kept with
    probability 0.7, so claims hold one or two pairs)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_claims):
        d, o = DRUGS[rng.integers(len(DRUGS))], OUTCOMES[rng.integers(len(OUTCOMES))]
        claim = f"{d} reduced {o} in cohort {i}"
        for label, verbs in (("SUPPORT", SUPPORTS), ("NEI", DOES_NOT)):
            if rng.uniform() < 0.7:
                verb = verbs[rng.integers(len(verbs))]
                rows.append(
                    {"claim": claim, "passage": f"In cohort {i}, {d} {verb} {o}.", "label": label}
                )
    return pd.DataFrame(rows)


def trainable_tiny_parent(out: Path) -> Path:
    """A kit-trainable card folder (weights + config beside the ONNX) with random weights."""
    w = tiny_weights(0)
    write_cross_encoder(
        out,
        w,
        TINY_CONFIG,
        tokenizer_json(package_model_dir(), max_length=64),
        name="tiny random cross-encoder (tests only)",
        scoring="entailment",
        window=WindowSpec(),
    )
    tr.save_weights(out, w, TINY_CONFIG)
    return out


@pytest.mark.slow  # 72 s of CPU (6 min wall on 2 loaded cores): six tiny fine-tunings
def test_the_printed_estimate_covers_the_adapted_card_on_held_out_claims(tmp_path: Path) -> None:
    frame = construction_labelled(120, seed=0)
    cohort = frame["claim"].str.rsplit(" ", n=1).str[1].astype(int)
    mine = cohort.isin(np.random.default_rng(1).permutation(120)[:60])  # whole claims
    frame[mine].to_csv(tmp_path / "adapt.csv", index=False)
    held = frame[~mine]
    assert not set(held["claim"]) & set(frame[mine]["claim"])
    assert (mine.sum(), len(held)) == (85, 80)  # the README's worked example
    parent = trainable_tiny_parent(tmp_path / "parent")
    card = adapt_verifier(
        tmp_path / "adapt.csv", parent, tmp_path / "adapted", epochs=4, lr=5e-3, batch_size=8
    )
    a = card["extra"]["adaptation"]
    e = a["cv_estimate"]
    assert a["cv_folds"] == 5 and len(e["folds"]) == 5
    y = (held["label"] == "SUPPORT").to_numpy()
    claims, passages = held["claim"].tolist(), held["passage"].tolist()
    tested = auc_score(load_verifier(tmp_path / "adapted").score(claims, passages), y)
    tested_parent = auc_score(load_verifier(parent).score(claims, passages), y)
    print(
        f"adapt printed {e['auc_a']:.3f} [{e['auc_a_lo']:.3f}, {e['auc_a_hi']:.3f}], "
        f"{a['verdict']} ({e['diff']:+.3f} [{e['lo']:+.3f}, {e['hi']:+.3f}]); pooled "
        f"{a['cv_auc_after_pooled']:.3f}; on {len(held)} held-out pairs: adapted {tested:.3f}, "
        f"parent {tested_parent:.3f}"
    )
    # the issue's criterion: the estimate is within its own CI of the held-out AUC
    assert e["auc_a_lo"] <= tested <= e["auc_a_hi"]
    # the parent ranks near chance and the adapted card learns the verbs: the verdict says so,
    # and so do the held-out claims
    assert a["verdict"] == "improved" and a["improved"] is True
    assert tested > tested_parent


def test_adaptation_schema_reads_old_cards_and_ties_improved_to_the_verdict() -> None:
    """schemas/json/guard_adaptation.schema.json: a card written before the within-fold
    estimate (no verdict) still validates; a new one must carry its estimate, and its
    ``improved`` must be ``verdict == "improved"``."""
    from kit.errors import InputError
    from kit.schema import validate_json

    old = {
        "parent_card_sha256": "a" * 64,
        "sample_sha256": "b" * 64,
        "sample_n": 300,
        "method": "fine-tune",
        "chosen": "fine-tune:entailment",
        "fine_tuned": True,
        "cv_folds": 3,
        "cv_units": 120,
        "cv_auc_before": 0.657,
        "cv_auc_after": 0.602,
        "improved": False,
        "scoring": "entailment",
        "pair_sha256": ["c" * 64],
    }
    validate_json(old, "guard_adaptation")
    fold = {"train_pairs": 240, "train_units": 96, "test_pairs": 60, "test_units": 24}
    fold |= {"n_pos": 20, "n_neg": 40, "auc_a": 0.8, "auc_b": 0.7}
    estimate = {
        "auc_a": 0.78, "auc_a_lo": 0.74, "auc_a_hi": 0.82, "auc_b": 0.66, "auc_b_lo": 0.61,
        "auc_b_hi": 0.71, "diff": 0.12, "lo": 0.07, "hi": 0.17, "fold_sd_a": 0.03,
        "fold_sd_diff": 0.02, "verdict": "improved", "level": 0.95, "n_boot": 2000,
        "folds": [{"fold": f, **fold} for f in range(5)],
    }  # fmt: skip
    new = old | {"verdict": "improved", "improved": True, "cv_estimate": estimate}
    validate_json(new, "guard_adaptation")
    for bad in (
        new | {"improved": False},
        new | {"verdict": "no_evidence"},
        {k: v for k, v in new.items() if k != "cv_estimate"},
    ):
        with pytest.raises(InputError, match="guard_adaptation"):
            validate_json(bad, "guard_adaptation")
