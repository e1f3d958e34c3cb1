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

from kit.guard.scoring.windows import WindowSpec
from kit.guard.training import train as tr
from kit.guard.training.adapt import adapt_verifier
from kit.guard.verifiers.cross_export import write_cross_encoder
from kit.guard.verifiers.export import package_model_dir, tokenizer_json
from kit.guard.verifiers.load import load_verifier
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


def adapt_and_hold_out(
    tmp: Path, n_claims: int, data_seed: int, split_seed: int, seed: int
) -> dict[str, float | str]:
    """Adapt the tiny parent on 60 of ``n_claims`` claims (whole claims), score the rest:
    what adapt printed beside the AUCs on the held-out claims."""
    frame = construction_labelled(n_claims, seed=data_seed)
    cohort = frame["claim"].str.rsplit(" ", n=1).str[1].astype(int)
    mine = cohort.isin(np.random.default_rng(split_seed).permutation(n_claims)[:60])
    frame[mine].to_csv(tmp / "adapt.csv", index=False)
    held = frame[~mine]
    assert not set(held["claim"]) & set(frame[mine]["claim"])
    parent = trainable_tiny_parent(tmp / "parent")
    card = adapt_verifier(
        tmp / "adapt.csv", parent, tmp / "adapted", epochs=4, lr=5e-3, batch_size=8, seed=seed
    )
    a = card["extra"]["adaptation"]
    e = a["cv_estimate"]
    assert a["cv_folds"] == 5 and len(e["folds"]) == 5
    y = (held["label"] == "SUPPORT").to_numpy()
    claims, passages = held["claim"].tolist(), held["passage"].tolist()
    tested = auc_score(load_verifier(tmp / "adapted").score(claims, passages), y)
    tested_parent = auc_score(load_verifier(parent).score(claims, passages), y)
    print(
        f"{int(mine.sum())} pairs to adapt, {len(held)} held out: adapt printed "
        f"{e['auc_a']:.3f} [{e['auc_a_lo']:.3f}, {e['auc_a_hi']:.3f}], {a['verdict']} "
        f"({e['diff']:+.3f} [{e['lo']:+.3f}, {e['hi']:+.3f}]); pooled "
        f"{a['cv_auc_after_pooled']:.3f}; held out: adapted {tested:.3f}, parent "
        f"{tested_parent:.3f} ({tested - tested_parent:+.3f})"
    )
    return {
        **{k: e[k] for k in ("auc_a", "auc_a_lo", "auc_a_hi", "diff", "lo", "hi")},
        "pooled": a["cv_auc_after_pooled"],
        "verdict": a["verdict"],
        "improved": a["improved"],
        "n_adapt": int(mine.sum()),
        "n_held": len(held),
        "tested": tested,
        "tested_diff": tested - tested_parent,
    }


@pytest.mark.slow  # 33 s on 2 cores (6 min when 6 sessions share them): six tiny fine-tunings
def test_the_printed_estimate_covers_the_adapted_card_on_held_out_claims(tmp_path: Path) -> None:
    r = adapt_and_hold_out(tmp_path, 120, data_seed=0, split_seed=1, seed=0)
    assert (r["n_adapt"], r["n_held"]) == (85, 80)  # the README's worked example
    # the issue's criterion: the estimate is within its own CI of the held-out AUC
    assert r["auc_a_lo"] <= r["tested"] <= r["auc_a_hi"]
    # the parent ranks near chance and the adapted card learns the verbs: the verdict says so,
    # and so do the held-out claims
    assert r["verdict"] == "improved" and r["improved"] is True and r["tested_diff"] > 0


@pytest.mark.slow  # 68 s on 2 cores: six samples, six tiny fine-tunings each
def test_over_six_samples_the_estimate_tracks_held_out_claims_and_pooling_does_not(
    tmp_path: Path,
) -> None:
    """Six construction-labelled sets (60 claims to adapt on, about 420 pairs of 300 other
    claims held out, as a lab with a large held-out set would): the printed CIs hold the
    held-out AUC and the held-out adapted - parent on most; the pooled figure reads low."""
    rows = []
    for seed in range(6):
        (tmp_path / str(seed)).mkdir()
        rows.append(adapt_and_hold_out(tmp_path / str(seed), 360, seed, seed + 100, seed))
    inside = sum(r["auc_a_lo"] <= r["tested"] <= r["auc_a_hi"] for r in rows)
    inside_diff = sum(r["lo"] <= r["tested_diff"] <= r["hi"] for r in rows)
    err = np.array([r["auc_a"] - r["tested"] for r in rows])
    err_pooled = np.array([r["pooled"] - r["tested"] for r in rows])
    print(
        f"after-CI holds the held-out AUC {inside}/6, difference CI holds the held-out "
        f"difference {inside_diff}/6; mean error within folds {err.mean():+.3f}, "
        f"pooled {err_pooled.mean():+.3f}"
    )
    assert inside >= 4 and inside_diff >= 5
    assert all(r["verdict"] == "improved" for r in rows)
    assert abs(err.mean()) < 0.05 and err_pooled.mean() < -0.08
    assert np.abs(err).mean() < np.abs(err_pooled).mean()


def test_adaptation_schema_reads_old_cards_and_ties_improved_to_the_verdict() -> None:
    """schemas/json/guard_adaptation.schema.json: a card written before the within-fold
    estimate (no verdict) still validates; a new one must carry its estimate, and its
    ``improved`` must be ``verdict == "improved"``."""
    from kit.core.errors import InputError
    from kit.core.schema import validate_json

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
