"""Training, adapting and importing verifiers, on the tiny random model (plumbing, not accuracy).

The full default verifier is never trained here: `make reproduce` does that (dvc stage
`train-verifier`); these tests build a 2-layer, hidden-16 BERT from numpy in milliseconds.
"""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip("torch")

from kit.cli import cli
from kit.core.errors import ConfigError, InputError
from kit.guard.training import train as tr
from kit.guard.training.adapt import adapt_verifier
from kit.guard.training.nli_verifier import train_verifier
from kit.guard.training.train_data import Recipe
from kit.guard.verifiers.build_record import read_build_record
from kit.guard.verifiers.card import default_card
from kit.guard.verifiers.export import package_model_dir, tokenizer_json
from kit.guard.verifiers.import_card import import_verifier
from kit.guard.verifiers.load import load_verifier
from kit.guard.verifiers.session import OnnxCrossEncoder
from kit.stats.crossval_auc import verdict_of
from tests.guard.tiny_model import TINY_CONFIG, build_tiny_base, tiny_weights
from tests.release.sealing import check_sealed_folder

SOURCES = ("check_covid", "sick", "pubmedqa")


@pytest.fixture(scope="module", autouse=True)
def registry_pairs_once() -> Iterator[None]:
    """Every training here reads the same registry pairs (the PubMedQA pairs' BM25 neighbours
    alone take ~8 s a training on 2 cores): read once per (raw, seed, sources) for the module,
    each training given its own copy."""
    import kit.guard.training.nli_verifier as nv

    real = nv.registry_pairs
    memo: dict[tuple, pd.DataFrame] = {}

    def once(raw: Path, seed: int, sources: tuple[str, ...] = real.__defaults__[0]):
        key = (str(raw), seed, tuple(sources))
        if key not in memo:
            memo[key] = real(raw, seed, sources)
        return memo[key].copy()

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nv, "registry_pairs", once)
        yield


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BERT folder like the MiniLM package's, with tiny weights and no classifier head."""
    return build_tiny_base(tmp_path_factory.mktemp("base"))


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, tiny_base: Path, registry_raw: Path) -> Path:
    """Trained by the command, `kit guard train` (a sealed card folder), on the tiny base; the
    validation sample is cut to 12 pairs a source (the one setting the command does not take)."""
    import kit.guard.training.nli_verifier as nv

    out = tmp_path_factory.mktemp("trained") / "nli"
    args = ["guard", "train", "--base", str(tiny_base), "--epochs", "1", "--cap-per-source", "8"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nv, "train_verifier", functools.partial(train_verifier, val_per_source=12))
        res = CliRunner().invoke(cli, [*args, "--raw", str(registry_raw), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "sealed in receipts/guard-train.receipt.json" in res.output
    return out


def _tiny_fit(seed: int) -> dict[str, np.ndarray]:
    claims = ["a dog runs", "the drug works", "no effect was seen", "cells grew"] * 4
    passages = ["A dog is running.", "The drug failed.", "An effect was seen.", "Cells grew."] * 4
    return tr.fit(
        tiny_weights(2),
        TINY_CONFIG,
        tokenizer_json(package_model_dir(), 64),
        claims,
        passages,
        np.array([0, 2, 2, 0] * 4),
        epochs=1,
        batch_size=4,
        lr=1e-3,
        warmup=0.1,
        weight_decay=0.01,
        max_length=64,
        seed=seed,
    ).weights


def test_fit_is_deterministic_for_a_seed_and_moves_the_weights() -> None:
    a, b, c = _tiny_fit(0), _tiny_fit(0), _tiny_fit(1)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert any(not np.array_equal(a[k], c[k]) for k in a)
    assert not np.array_equal(a["classifier.weight"], tiny_weights(2)["classifier.weight"])


def test_torch_and_onnx_agree(tmp_path: Path) -> None:
    from kit.guard.scoring.windows import WindowSpec
    from kit.guard.verifiers.cross_export import write_cross_encoder

    w = tiny_weights(3)
    tok = tokenizer_json(package_model_dir(), 64)
    write_cross_encoder(
        tmp_path / "m", w, TINY_CONFIG, tok, name="t", scoring="entailment", window=WindowSpec()
    )
    claims = ["aspirin lowers stroke risk", "x"]
    passages = ["In adults, aspirin reduced the risk of stroke by a third.", "y z"]
    ref = tr.torch_logits(w, TINY_CONFIG, tok, claims, passages, 64)
    got = tr.onnx_logits(tmp_path / "m", claims, passages)
    assert np.max(np.abs(ref - got)) < 1e-5


def test_train_writes_a_validated_card(trained: Path) -> None:
    card = json.loads((trained / "card.json").read_text())
    assert card["kind"] == "cross-encoder"
    extra = card["extra"]
    assert extra["labels"] == ["entailment", "neutral", "contradiction"]
    t, v = extra["training"], extra["validation"]
    assert t["recipe"]["batch_size"] == Recipe().batch_size == 16  # the recipe's, on the card
    assert set(t["train_pairs"]) == {
        "check_covid",
        "climate_fever",
        "covidfact",
        "pubmedqa",
        "scifact",
        "sick",
        "snli",
    }
    assert set(t["data_sha256"]) >= {"nli/scifact.jsonl", "pubmedqa/ori_pqal.json"}
    assert {"pubmedqa:negated", "pubmedqa:mesh", "check_covid", "sick"} <= set(v["groups"])
    assert v["scoring_rule_choice"]["chosen"] == extra["scoring"]
    assert v["parity"]["max_abs_logit_diff_torch_vs_onnx_fp32"] < 1e-4
    # machine readings live in build.json, not in the card DVC locks (kit.guard.verifiers.build_record)
    assert "speed" not in extra and "total_seconds" not in extra
    assert "train_seconds" not in t
    build = read_build_record(trained)
    assert build["train_seconds"] > 0 and build["total_seconds"] >= build["train_seconds"]
    speed = build["speed"]  # measured on this machine, under the card's own rule
    assert speed["pairs"] > 0 and all(speed["pairs_per_s"][k] > 0 for k in ("fp32", "int8"))
    assert speed["int8_meets_target"] == (speed["pairs_per_s"]["int8"] >= 100)
    assert speed["machine_detail"]["cpu_model"] and "?" not in speed["machine"]
    assert len(speed["machine_detail"]["load_average_1_5_15_min"]) == 3
    assert speed["machine_detail"]["others_busy_cpus"] is not None
    g = v["groups"]["check_covid"]
    assert set(g["per_class"]) == {"entailment", "neutral", "contradiction"}
    assert 0 <= g["auc_unsupported"]["auc"] <= 1 and "kappa" in g
    assert set(v["bi_encoder_same_pairs"]) == set(v["groups"])
    assert isinstance(load_verifier(trained), OnnxCrossEncoder)
    assert (trained / "weights.safetensors").is_file()


@pytest.mark.slow  # two tiny trainings: 32-47 s on 2 cores
def test_batch_size_option_trains_and_is_recorded(
    tmp_path: Path, tiny_base: Path, registry_raw: Path
) -> None:
    """`kit guard train --batch-size N`: N pairs per optimiser step (steps = ceil(pairs / N) in
    one epoch of fewer than 50 N pairs), N on the card, other weights for another N."""
    import math

    import kit.guard.training.nli_verifier as nv

    cards = {}
    for size in (4, 8):
        out = tmp_path / f"b{size}"
        args = ["guard", "train", "--base", str(tiny_base), "--epochs", "1"]
        args += ["--cap-per-source", "8", "--batch-size", str(size)]
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(nv, "train_verifier", functools.partial(train_verifier, val_per_source=4))
            mp.setattr(nv, "SPEED_PAIRS", 4)
            res = CliRunner().invoke(cli, [*args, "--raw", str(registry_raw), "--out", str(out)])
        assert res.exit_code == 0, res.output
        cards[size] = json.loads((out / "card.json").read_text())
    t4, t8 = (cards[k]["extra"]["training"] for k in (4, 8))
    assert t4["recipe"]["batch_size"] == 4 and t8["recipe"]["batch_size"] == 8
    n = sum(t4["train_pairs"].values())
    assert n == sum(t8["train_pairs"].values()) < 200  # the same pairs (same seed rules)
    assert t4["train_steps"] == math.ceil(n / 4) and t8["train_steps"] == math.ceil(n / 8)
    assert cards[4]["onnx_sha256"] != cards[8]["onnx_sha256"]
    bad = CliRunner().invoke(cli, ["guard", "train", "--batch-size", "0", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "--batch-size" in bad.output


def test_leave_out_drops_the_source(tmp_path: Path, tiny_base: Path, registry_raw: Path) -> None:
    with pytest.raises(ConfigError, match="leave-out"):
        train_verifier(
            registry_raw,
            tmp_path / "x",
            Recipe(cap_per_source=4, epochs=1),
            base=tiny_base,
            leave_out="nope",
        )


def test_left_out_group_takes_every_split_stratified() -> None:
    from kit.guard.training.nli_verifier import left_out_group

    rows = [
        {
            "pair_id": f"s{i:03d}",
            "source": "scifact",
            "split": ("train", "dev")[i % 2],
            "label": ("entailment", "entailment", "contradiction")[i % 3],
        }
        for i in range(90)
    ] + [{"pair_id": "o1", "source": "sick", "split": "test", "label": "neutral"}]
    pairs = pd.DataFrame(rows)
    whole = left_out_group(pairs, "scifact", seed=0, cap=1000)["left_out:scifact"]
    assert len(whole) == 90 and set(whole["split"]) == {"train", "dev"}
    cut = left_out_group(pairs, "scifact", seed=0, cap=30)["left_out:scifact"]
    assert cut["label"].value_counts().to_dict() == {"entailment": 20, "contradiction": 10}
    assert cut.equals(left_out_group(pairs, "scifact", seed=0, cap=30)["left_out:scifact"])
    assert left_out_group(pairs, "pubmedqa", seed=0) == {}


@pytest.mark.slow  # a tiny training and its left-out validation: 34-39 s on 2 cores
def test_leave_out_card_is_scored_on_the_left_out_source(
    tmp_path: Path, tiny_base: Path, registry_raw: Path
) -> None:
    import kit.guard.training.nli_verifier as nv

    out = tmp_path / "loso"
    args = ["guard", "train", "--base", str(tiny_base), "--epochs", "1", "--cap-per-source", "4"]
    args += ["--leave-out", "scifact", "--raw", str(registry_raw), "--out", str(out)]
    small = functools.partial(train_verifier, val_per_source=12, left_out_max=40)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nv, "train_verifier", small)
        res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "left_out:scifact: 40 pairs never trained on, paired with the bi-encoder:" in res.output
    card = json.loads((out / "card.json").read_text())
    t, v = card["extra"]["training"], card["extra"]["validation"]
    assert "scifact" not in t["train_pairs"] and t["leave_out"] == "scifact"
    g = v["groups"]["left_out:scifact"]
    assert g["n"] == 40 and g["counts"]["entailment"] == 26  # 508 : 265 of 773, stratified
    assert v["bi_encoder_same_pairs"]["left_out:scifact"]["n"] == 40
    rows = v["left_out"]["left_out:scifact"]["vs_bi_encoder"]
    assert [r["subset"] for r in rows] == [
        "entailment vs unsupported",
        "entailment vs contradiction",
    ]
    r = rows[0]
    assert r["auc_a"] == g["auc_unsupported"]["auc"]
    assert r["ci_method"] == "cluster-bootstrap" and r["lo"] <= r["difference"] <= r["hi"]
    # the rule was chosen without the left-out pairs
    tables = {v["scoring_rule_choice"]["chosen"]: v["groups"], **v["other_rule"]}
    without = {
        k: {n: x for n, x in t.items() if not n.startswith("left_out:")} for k, t in tables.items()
    }
    assert v["scoring_rule_choice"]["means"] == {
        k: round(nv.biomedical_mean(t), 4) for k, t in without.items()
    }
    _check_loso_table(tmp_path, out, card)


def _check_loso_table(tmp_path: Path, loso_card: Path, card: dict) -> None:
    """The board's guard_verifier_loso table states the card's left-out rows, and checks the
    card's recipe against the default's."""
    from kit.reproductions.verifier_card import verifier_loso

    folder = tmp_path / "verifier-loso"
    shutil.copytree(loso_card, folder / "scifact")
    default = tmp_path / "default"
    default.mkdir()
    same = json.loads(json.dumps(card))
    same["extra"]["training"]["leave_out"] = None
    (default / "card.json").write_text(json.dumps(same))
    table = verifier_loso(Path("unused"), default, folder)["guard_verifier_loso"]
    rows = card["extra"]["validation"]["left_out"]["left_out:scifact"]["vs_bi_encoder"]
    assert list(table["subset"]) == [r["subset"] for r in rows]
    assert list(table["auc_recipe"]) == [r["auc_a"] for r in rows]
    assert list(table["difference"]) == [r["difference"] for r in rows]
    assert (table["left_out"] == "scifact").all() and table["same_recipe_as_default"].all()
    # `kit guard card` prints the default's held-out groups and the left-out rows beside them
    args = ["guard", "card", "--verifier", str(default), "--verifier-loso", str(folder)]
    res = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    shown = json.loads(res.output)
    assert [r["auc_recipe"] for r in shown["loso"]] == [r["auc_a"] for r in rows]
    assert {r["group"] for r in shown["validation"]} == set(card["extra"]["validation"]["groups"])
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0 and "leave-one-source-out: this recipe" in res.output, res.output
    # another recipe (here a larger cap a source) is named, not hidden
    same["extra"]["training"]["recipe"]["cap_per_source"] += 1
    (default / "card.json").write_text(json.dumps(same))
    table = verifier_loso(Path("unused"), default, folder)["guard_verifier_loso"]
    assert not table["same_recipe_as_default"].any()
    # a card trained on every source is not a leave-one-source-out card; no card at all is named
    (folder / "scifact" / "card.json").write_text(json.dumps(same))
    with pytest.raises(InputError, match="not a leave-one-source-out card"):
        verifier_loso(Path("unused"), default, folder)
    with pytest.raises(InputError, match="make reproduce-loso"):
        verifier_loso(Path("unused"), default, tmp_path / "nothing")


def _labelled(path: Path, n: int = 24) -> Path:
    rng = np.random.default_rng(0)
    rows = [
        {
            "pair_id": f"p{i}",
            "claim": f"treatment {i} reduced mortality",
            "passage": f"Treatment {i} {'reduced' if i % 2 else 'did not change'} mortality in the trial.",
            "label": "SUPPORT" if i % 2 else rng.choice(["CONTRADICT", "NEI"]),
        }
        for i in range(n)
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_adapt_writes_a_child_card_with_cv_auc(tmp_path: Path, trained: Path) -> None:
    card = adapt_verifier(
        _labelled(tmp_path / "lab.csv"),
        trained,
        tmp_path / "adapted",
        epochs=1,
        folds=2,
        method="best",
    )
    a = card["extra"]["adaptation"]
    assert a["sample_n"] == 24 and a["cv_units"] == 24 and a["cv_folds"] == 2
    assert 0 <= a["cv_auc_before"] <= 1 and 0 <= a["cv_auc_after"] <= 1
    # the after-figure is read within folds against the parent on the same held-out folds; the
    # card's improved is the verdict of that paired CI, not after > before
    e = a["cv_estimate"]
    assert a["cv_auc_after"] == e["auc_a"] and e["auc_a_lo"] <= e["auc_a"] <= e["auc_a_hi"]
    assert e["lo"] <= e["diff"] <= e["hi"] and e["diff"] == pytest.approx(
        e["auc_a"] - e["auc_b"], abs=2e-4
    )
    assert a["verdict"] == verdict_of(e["lo"], e["hi"])
    assert a["improved"] == (a["verdict"] == "improved")
    assert [f["fold"] for f in e["folds"]] == [0, 1] and a["cv_folds_requested"] == 2
    assert sum(f["test_pairs"] for f in e["folds"]) == 24
    assert all(f["train_pairs"] == 24 - f["test_pairs"] for f in e["folds"])
    assert 0 <= a["cv_auc_after_pooled"] <= 1
    assert len(a["parent_card_sha256"]) == 64 and len(a["sample_sha256"]) == 64
    # the trained card carries the relatedness bi-encoder: every rule is cross-validated, the
    # best is kept, and the adapted card carries the bi-encoder on
    by_rule = a["cv_auc_after_by_rule"]
    assert set(by_rule) == {"entailment", "entailment_minus_contradiction", "two_signal"}
    # the recombined rule (parent's weights, fitted combination) is cross-validated beside them
    assert 0 <= a["cv_auc_recombine"] <= 1 and a["method"] == "best"
    assert a["cv_auc_after"] == max(*by_rule.values(), a["cv_auc_recombine"])
    if a["chosen"] == "recombine":
        assert a["scoring"] == "fitted" and not a["fine_tuned"]
        assert a["cv_auc_after"] == a["cv_auc_recombine"] and "fitted" in card["extra"]
    else:
        assert a["chosen"] == f"fine-tune:{a['scoring']}" and a["fine_tuned"]
        assert a["cv_auc_after"] == by_rule[a["scoring"]]
    assert a["cv_auc_before"] == a["auc_before_by_rule"][a["parent_scoring"]]
    assert 0 <= a["bi_encoder_auc"] <= 1
    child = load_verifier(tmp_path / "adapted")
    assert isinstance(child, OnnxCrossEncoder) and child.relatedness is not None
    assert card["extra"]["scoring"] == a["scoring"]


def test_adapt_recombine_keeps_the_weights_and_fits_the_rule(tmp_path: Path, trained: Path) -> None:
    lab = _labelled(tmp_path / "lab.csv")
    card = adapt_verifier(lab, trained, tmp_path / "re", folds=2, method="recombine")
    a = card["extra"]["adaptation"]
    assert a["chosen"] == "recombine" and a["scoring"] == "fitted" and not a["fine_tuned"]
    assert a["cv_auc_after_by_rule"] == {} and a["cv_auc_after"] == a["cv_auc_recombine"]
    # nothing was fine-tuned: the very ONNX graph of the parent
    assert card["onnx_sha256"] == json.loads((trained / "card.json").read_text())["onnx_sha256"]
    child = load_verifier(tmp_path / "re")
    assert child.fitted is not None and child.fitted.to_dict() == card["extra"]["fitted"]
    assert child.fitted.features == ("entailment", "contradiction", "relatedness")
    # the child's score recomputed from the parent's signals read one at a time (one window each)
    frame = pd.read_csv(lab)
    claims, passages = frame["claim"].tolist(), frame["passage"].tolist()
    parent = load_verifier(trained)
    parent.scoring = "entailment"
    e = parent.score(claims, passages)
    parent.scoring = "entailment_minus_contradiction"
    c = 1.0 + e - 2.0 * parent.score(claims, passages)
    r = parent.relatedness.score(claims, passages)
    w, b = np.array(child.fitted.weights), child.fitted.intercept
    expect = 1.0 / (1.0 + np.exp(-(b + np.column_stack([e, c, r]) @ w)))
    assert np.allclose(child.score(claims, passages), expect, atol=1e-6)


def test_adapt_refuses_an_untrainable_verifier(tmp_path: Path, tiny_cross_dir: Path) -> None:
    lab = _labelled(tmp_path / "lab.csv")
    for method in ("fine-tune", "best"):
        with pytest.raises(ConfigError, match=r"only verifiers trained by the kit.*recombine"):
            adapt_verifier(lab, tiny_cross_dir, tmp_path / "x", epochs=1, method=method)
    bi = tmp_path / "bi"
    bi.mkdir()
    sha = "0" * 64  # a bi-encoder card (schemas/json/verifier_card.schema.json); no model beside it
    (bi / "card.json").write_text(json.dumps(default_card(sha, sha, sha, sha)))
    with pytest.raises(ConfigError, match="needs a cross-encoder card"):
        adapt_verifier(lab, bi, tmp_path / "x", method="recombine")
    assert not (tmp_path / "x").exists()


def test_adapt_recombines_an_imported_verifier(tmp_path: Path, tiny_cross_dir: Path) -> None:
    """An imported ONNX cross-encoder has no weights to fine-tune; its P(entailment) and
    P(contradiction) are recombined by a rule fitted on the sample, its model file kept."""
    imp = tmp_path / "imp"
    labels = ["entailment", "neutral", "contradiction"]
    import_verifier(
        tiny_cross_dir / "cross-fp32.onnx", tiny_cross_dir / "tokenizer.json", labels, imp
    )
    lab = _labelled(tmp_path / "lab.csv")
    card = adapt_verifier(lab, imp, tmp_path / "re", folds=2, method="recombine")
    a = card["extra"]["adaptation"]
    assert a["chosen"] == "recombine" and a["scoring"] == "fitted" and not a["fine_tuned"]
    assert card["extra"]["fitted"]["features"] == ["entailment", "contradiction"]
    parent_card = json.loads((imp / "card.json").read_text())
    assert card["onnx_sha256"] == parent_card["onnx_sha256"]
    assert (tmp_path / "re" / "model.onnx").read_bytes() == (imp / "model.onnx").read_bytes()
    assert card["extra"]["imported_sha256"] == parent_card["extra"]["imported_sha256"]
    assert json.loads((tmp_path / "re" / "card.json").read_text()) == card
    child = load_verifier(tmp_path / "re")
    frame = pd.read_csv(lab)
    claims, passages = frame["claim"].tolist(), frame["passage"].tolist()
    parent = load_verifier(imp)
    e = parent.score(claims, passages)  # one window each: max over windows is the window
    parent.scoring = "entailment_minus_contradiction"
    c = 1.0 + e - 2.0 * parent.score(claims, passages)
    w, b = np.array(child.fitted.weights), child.fitted.intercept
    expect = 1.0 / (1.0 + np.exp(-(b + np.column_stack([e, c]) @ w)))
    assert np.allclose(child.score(claims, passages), expect, atol=1e-6)


def test_import_verifier_carries_a_relatedness_bi_encoder(
    tmp_path: Path, tiny_cross_dir: Path, verifier_dir: Path
) -> None:
    """--relatedness pins a bi-encoder beside the imported model: two_signal reads it, and a
    recombined adaptation may weigh it."""
    model, tok = tiny_cross_dir / "cross-fp32.onnx", tiny_cross_dir / "tokenizer.json"
    base = ["guard", "import-verifier", str(model), "--tokenizer", str(tok)]
    base += ["--labels", "entailment,neutral,contradiction"]
    imp = tmp_path / "imp"
    args = [*base, "--relatedness", str(verifier_dir), "--scoring", "two_signal"]
    res = CliRunner().invoke(cli, [*args, "--out", str(imp)])
    assert res.exit_code == 0, res.output
    card = json.loads((imp / "card.json").read_text())
    assert card["extra"]["scoring"] == "two_signal"
    assert (
        card["extra"]["relatedness"]["onnx_sha256"]
        == json.loads((verifier_dir / "card.json").read_text())["onnx_sha256"]
    )
    v = load_verifier(imp)
    claims, passages = ["aspirin lowers stroke risk"], ["Aspirin reduced strokes in adults."]
    e = load_verifier(tiny_cross_dir).score(claims, passages)  # P(entailment), one window
    r = v.relatedness.score(claims, passages)
    assert np.allclose(v.score(claims, passages), (e + r) / 2, atol=1e-6)
    card2 = adapt_verifier(
        _labelled(tmp_path / "lab.csv"), imp, tmp_path / "re", folds=2, method="recombine"
    )
    assert card2["extra"]["fitted"]["features"] == ["entailment", "contradiction", "relatedness"]
    assert load_verifier(tmp_path / "re").relatedness is not None
    # refusals: two_signal without a relatedness model; a relatedness model that is not one
    for extra in (["--scoring", "two_signal"], ["--relatedness", str(tiny_cross_dir)]):
        res = CliRunner().invoke(cli, [*base, *extra, "--out", str(tmp_path / "bad")])
        assert res.exit_code == 2, res.output
        assert not (tmp_path / "bad").exists()


def test_import_verifier_round_trip_and_refusals(tmp_path: Path, tiny_cross_dir: Path) -> None:
    model = tiny_cross_dir / "cross-fp32.onnx"
    tok = tiny_cross_dir / "tokenizer.json"
    import_verifier(model, tok, ["entailment", "neutral", "contradiction"], tmp_path / "imp")
    v = load_verifier(tmp_path / "imp")
    ref = load_verifier(tiny_cross_dir)
    pairs = (["aspirin works"], ["Aspirin reduced events. It was safe."])
    assert np.allclose(v.score(*pairs), ref.score(*pairs), atol=1e-6)
    with pytest.raises(InputError, match="one column per --labels"):
        import_verifier(model, tok, ["entailment", "contradiction"], tmp_path / "bad")
    assert not (tmp_path / "bad").exists()
    res = CliRunner().invoke(
        cli,
        [
            "guard",
            "import-verifier",
            str(model),
            "--tokenizer",
            str(tok),
            "--labels",
            "yes,no",
            "--out",
            str(tmp_path / "c"),
        ],
    )
    assert res.exit_code == 2 and "entailment" in res.output


def test_calibrate_refuses_the_adaptation_sample(tmp_path: Path, trained: Path) -> None:
    lab = _labelled(tmp_path / "lab.csv", n=40)
    adapt_verifier(lab, trained, tmp_path / "adapted", epochs=1, folds=2)
    res = CliRunner().invoke(
        cli,
        [
            "guard",
            "calibrate",
            str(lab),
            "--verifier",
            str(tmp_path / "adapted"),
            "--alpha",
            "0.2",
            "--out",
            str(tmp_path / "cal.json"),
        ],
    )
    assert res.exit_code == 2 and "disjoint" in res.output, res.output
    assert not (tmp_path / "cal.json").exists()


def test_validation_reproduction_reads_the_card(trained: Path) -> None:
    from kit.reproductions.verifier_card import verifier_validation

    card = json.loads((trained / "card.json").read_text())
    table = verifier_validation(Path("unused"), trained)["guard_verifier_validation"]
    assert set(table["group"]) == set(card["extra"]["validation"]["groups"])
    pub = table[table["group"].str.startswith("pubmedqa")]
    assert pub["labels"].str.contains("construction-labelled").all()
    row = table[table["group"] == "check_covid"].iloc[0]
    g = card["extra"]["validation"]["groups"]["check_covid"]
    assert row["auc_unsupported"] == g["auc_unsupported"]["auc"] and row["n"] == g["n"]


# --- card folders are sealed (issue 20, item 4) ---------------------------------------------


def test_trained_card_folder_is_sealed_and_loads(trained: Path) -> None:
    files = check_sealed_folder(trained, "guard-train")
    assert {"card.json", "weights.safetensors"} <= files
    art = json.loads((trained / "receipts" / "guard-train.receipt.json").read_text())
    assert art["body"]["parameters"]["epochs"] == 1 and "base" in art["body"]["parameters"]
    assert isinstance(load_verifier(trained), OnnxCrossEncoder)  # receipts/ changes nothing


def test_adapt_cli_writes_a_sealed_card(tmp_path: Path, trained: Path) -> None:
    lab = _labelled(tmp_path / "lab.csv")
    out = tmp_path / "adapted"
    args = ["guard", "adapt", str(lab), "--verifier", str(trained), "--epochs", "1", "--folds", "2"]
    res = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "AUC on the sample (n=24)" in res.output
    assert "adapted - parent on the same held-out folds" in res.output
    assert "fold 1: its model saw" in res.output
    check_sealed_folder(out, "guard-adapt")
    art = json.loads((out / "receipts" / "guard-adapt.receipt.json").read_text())
    assert art["body"]["inputs"]["labelled"]["path"] == str(lab)
    scores = tmp_path / "s.csv"
    res = CliRunner().invoke(
        cli, ["guard", "score", str(lab), "--verifier", str(out), "--out", str(scores)]
    )
    assert res.exit_code == 0, res.output  # a sealed card folder scores like any other


def test_import_verifier_cli_seals_and_replaces_only_card_folders(
    tmp_path: Path, tiny_cross_dir: Path
) -> None:
    model = tiny_cross_dir / "cross-fp32.onnx"
    base = [
        "guard",
        "import-verifier",
        str(model),
        "--tokenizer",
        str(tiny_cross_dir / "tokenizer.json"),
    ]
    base += ["--labels", "entailment,neutral,contradiction", "--out"]

    def imp(out: Path) -> tuple[int, str]:
        res = CliRunner().invoke(cli, [*base, str(out)])
        assert "Traceback" not in res.output
        return res.exit_code, res.output

    out = tmp_path / "imp"
    code, text = imp(out)
    assert code == 0, text
    assert check_sealed_folder(out, "guard-import-verifier") == {
        "card.json",
        "model.onnx",
        "tokenizer.json",
    }
    assert imp(out)[0] == 0  # its own folder: replaced as a set
    legacy = tmp_path / "legacy"  # a card folder written before cards were sealed
    shutil.copytree(out, legacy)
    shutil.rmtree(legacy / "receipts")
    assert imp(legacy)[0] == 0 and (legacy / "receipts").is_dir()
    other = tmp_path / "other"  # a card folder another command sealed: refused, kept as it was
    shutil.copytree(out, other)
    receipts_dir = other / "receipts"
    (receipts_dir / "guard-import-verifier.receipt.json").rename(
        receipts_dir / "guard-train.receipt.json"
    )
    before = {p: p.read_bytes() for p in other.rglob("*") if p.is_file()}
    code, text = imp(other)
    assert code == 2 and "not written by" in text
    assert {p: p.read_bytes() for p in other.rglob("*") if p.is_file()} == before
    mine = tmp_path / "mine"  # not a card folder at all
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me\n")
    code, text = imp(mine)
    assert code == 2 and (mine / "notes.txt").read_text() == "keep me\n"


def test_adapt_refuses_a_sample_that_cannot_be_split(tmp_path: Path, trained: Path) -> None:
    lab = tmp_path / "one-passage.csv"
    pd.DataFrame(
        {
            "claim": [f"claim {i}" for i in range(12)],
            "passage": ["One shared passage about a trial."] * 12,
            "label": ["SUPPORT", "CONTRADICT"] * 6,
        }
    ).to_csv(lab, index=False)
    with pytest.raises(InputError, match="independent unit"):
        adapt_verifier(lab, trained, tmp_path / "x", epochs=1, folds=2)
    assert not (tmp_path / "x").exists()


def test_adapt_help_states_the_library_default_lr() -> None:
    from click.testing import CliRunner

    from kit.cli import cli
    from kit.guard.training.adapt import ADAPT_LR

    out = CliRunner().invoke(cli, ["guard", "adapt", "--help"]).output
    assert f"[{ADAPT_LR:.0e}:".replace("e-0", "e-") in " ".join(out.split())


def test_reproduce_loso_without_cards_exits_2_and_writes_nothing(
    tmp_path: Path, trained: Path, registry_raw: Path
) -> None:
    args = ["reproduce", "run", "guard_verifier_loso", "--raw", str(registry_raw)]
    args += ["--verifier-nli", str(trained), "--verifier-loso", str(tmp_path / "none")]
    res = CliRunner().invoke(cli, [*args, "--tables", str(tmp_path / "tables")])
    assert res.exit_code == 2, res.output
    assert "make reproduce-loso" in res.output and str(tmp_path / "none") in res.output
    assert not (tmp_path / "tables").exists()


def test_card_command_shows_validation_and_says_what_is_missing(
    tmp_path: Path, trained: Path
) -> None:
    args = ["guard", "card", "--verifier", str(trained), "--verifier-loso", str(tmp_path / "no")]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "held-out validation" in res.output and "check_covid" in res.output
    assert "make reproduce-loso" in res.output  # no leave-one-source-out cards: how to build them
    for fmt, first in (("csv", "# held-out"), ("markdown", "**held-out"), ("latex", "% held-out")):
        res = CliRunner().invoke(cli, [*args, "--format", fmt])
        assert res.exit_code == 0 and res.output.lstrip().startswith(first), (fmt, res.output)
    # an adapted card points to its adaptation estimate, not to its parent's tables
    lab = _labelled(tmp_path / "lab.csv", n=40)
    adapt_verifier(lab, trained, tmp_path / "adapted", epochs=1, folds=2)
    res = CliRunner().invoke(cli, ["guard", "card", "--verifier", str(tmp_path / "adapted")])
    assert res.exit_code == 0 and "an adapted card" in res.output, res.output
    assert "held-out validation" not in res.output
