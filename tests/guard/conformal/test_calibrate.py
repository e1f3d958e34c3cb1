"""Issue 13: calibration on a lab's own labelled sample, Mondrian per type, the sealed artifact."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core.errors import ConfigError, IntegrityError
from kit.core.schema import validate_json
from kit.guard.conformal.calibration import (
    build_artifact,
    guarantee,
    guard_rule,
    load_calibration,
)
from kit.guard.conformal.rule import (
    conformal_rank,
    conformal_tau,
    min_calibration_size,
    mondrian_tau,
)
from kit.reproductions.guard import coverage_table

SHA = "a" * 64
CARD = {"name": "test verifier", "onnx_sha256": "b" * 64, "scoring_rule": "s"}


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


# ----------------------------------------------------------------------------- pure core


@pytest.mark.parametrize("alpha", [0.01, 0.02, 0.05, 0.06, 0.1, 0.15, 0.2, 0.3, 0.5, 0.9])
def test_min_calibration_size_is_the_smallest_feasible_n(alpha: float) -> None:
    feasible = [n for n in range(1, 400) if conformal_rank(n, alpha) <= n]
    assert min_calibration_size(alpha) == feasible[0]
    # every larger n is feasible too (the refusal is monotone)
    assert feasible == list(range(feasible[0], 400))


def test_mondrian_is_conformal_within_each_type() -> None:
    rng = np.random.default_rng(1)
    s = rng.uniform(size=60)
    types = np.array(["contradiction"] * 25 + ["neutral"] * 35)
    m = mondrian_tau(s, types, 0.1)
    for t in ("contradiction", "neutral"):
        ref = conformal_tau(s[types == t], 0.1)
        assert m.per_type[t] == ref
        # brute force: tau_t is the k-th smallest score of type t
        k = math.ceil((np.sum(types == t) + 1) * 0.9 - 1e-9)
        assert m.per_type[t].tau == np.sort(s[types == t])[k - 1]
    assert m.tau == max(m.per_type["contradiction"].tau, m.per_type["neutral"].tau)


def test_mondrian_refuses_a_thin_type_naming_it() -> None:
    s = np.linspace(0, 1, 30)
    types = np.array(["contradiction"] * 5 + ["neutral"] * 25)
    with pytest.raises(ConfigError) as err:
        mondrian_tau(s, types, 0.1)
    assert "'contradiction' has 5" in err.value.message and "at least 9" in err.value.message


def _sample(rng: np.random.Generator, n_sup: int, n_contra: int, n_neutral: int):
    """Synthetic labelled sample: supported ~ Beta(6, 2); contradiction ~ Beta(2, 5) (easy);
    neutral ~ Beta(4, 3) (hard: on-topic, not supporting)."""
    scores = np.concatenate(
        [rng.beta(6, 2, n_sup), rng.beta(2, 5, n_contra), rng.beta(4, 3, n_neutral)]
    )
    labels = ["entailment"] * n_sup + ["contradiction"] * n_contra + ["neutral"] * n_neutral
    return scores, np.array(labels, dtype=object)


def test_build_artifact_refuses_with_the_number_needed() -> None:
    s, lab = _sample(np.random.default_rng(0), 30, 4, 3)
    with pytest.raises(ConfigError) as err:
        build_artifact(
            name="tiny", sample_sha256=SHA, labels=lab, scores=s, alpha=0.05, verifier=CARD
        )
    msg = err.value.message
    assert "7 unsupported" in msg and "at least 19" in msg and "Label 12 more" in msg


def test_artifact_contents_and_schema() -> None:
    s, lab = _sample(np.random.default_rng(0), 40, 30, 30)
    art = build_artifact(
        name="lab sample", sample_sha256=SHA, labels=lab, scores=s, alpha=0.1, verifier=CARD
    )
    validate_json(art, "guard_calibration_artifact", "art")
    assert art["rule"] == "mondrian" and set(art["per_type"]) == {"contradiction", "neutral"}
    assert art["tau"] == max(v["tau"] for v in art["per_type"].values())
    assert art["sample"]["negative_types"] == ["contradiction", "neutral"]
    assert art["n"] == 60 and art["k"] == conformal_rank(60, 0.1)
    sup = s[lab == "entailment"]
    assert art["false_flag"]["k"] == int(np.sum(sup <= art["tau"]))
    pooled = build_artifact(
        name="x",
        sample_sha256=SHA,
        labels=lab,
        scores=s,
        alpha=0.1,
        verifier=CARD,
        by_type=False,
    )
    assert pooled["rule"] == "split_conformal" and pooled["per_type"] == {}
    assert pooled["tau"] == conformal_tau(s[lab != "entailment"], 0.1).tau


def test_coverage_over_1000_seeded_splits() -> None:
    """Exchangeable sample: pooled catch >= 1 - alpha on average; Mondrian per type too, even
    where the pooled tau under-covers the hard type (80% easy / 20% hard negatives)."""
    alpha, splits = 0.1, 1000
    rng = np.random.default_rng(2024)
    pooled_catch, mondrian_easy, mondrian_hard, pooled_hard, false_flag = [], [], [], [], []
    for _ in range(splits):
        s, lab = _sample(rng, 400, 400, 100)
        idx = rng.permutation(s.size)
        cal, test = idx[:250], idx[250:]
        art_m = build_artifact(
            name="m", sample_sha256=SHA, labels=lab[cal], scores=s[cal], alpha=alpha, verifier=CARD
        )
        art_p = build_artifact(
            name="p",
            sample_sha256=SHA,
            labels=lab[cal],
            scores=s[cal],
            alpha=alpha,
            verifier=CARD,
            by_type=False,
        )
        ts, tl = s[test], lab[test]
        pooled_catch.append(np.mean(ts[tl != "entailment"] <= art_p["tau"]))
        pooled_hard.append(np.mean(ts[tl == "neutral"] <= art_p["tau"]))
        mondrian_easy.append(np.mean(ts[tl == "contradiction"] <= art_m["tau"]))
        mondrian_hard.append(np.mean(ts[tl == "neutral"] <= art_m["tau"]))
        false_flag.append(np.mean(ts[tl == "entailment"] <= art_m["tau"]))
    res = {
        "pooled": np.mean(pooled_catch),
        "pooled on hard type": np.mean(pooled_hard),
        "mondrian easy": np.mean(mondrian_easy),
        "mondrian hard": np.mean(mondrian_hard),
        "mondrian false-flag": np.mean(false_flag),
    }
    print(f"\ncoverage over {splits} splits (target {1 - alpha}):", res)
    se = max(np.std(pooled_catch), np.std(mondrian_hard)) / math.sqrt(splits)
    assert res["pooled"] >= 1 - alpha - 3 * se
    assert res["mondrian easy"] >= 1 - alpha - 3 * se
    assert res["mondrian hard"] >= 1 - alpha - 3 * se
    assert res["pooled on hard type"] < 1 - alpha - 0.05  # why Mondrian exists


def test_coverage_verdict_names_rows_below_target() -> None:
    pool = np.random.default_rng(3).uniform(size=60)
    frame = coverage_table(pool, [0.8, 0.9], [10, 20, 30], 2, 0, 20)
    ran = frame[~frame["verdict"].str.startswith("refused")]
    below = ran["conformal_catch"] < ran["target"]
    assert below.any() and (~below).any()  # both verdicts occur on this grid
    assert (ran.loc[below, "verdict"] == "below_target").all()
    assert (ran.loc[~below, "verdict"] == "ok").all()


# ----------------------------------------------------------------------------- CLI


def _labelled_csv(path: Path, n_sup: int = 12, n_contra: int = 10, n_neutral: int = 10) -> Path:
    rng = np.random.default_rng(0)
    words = "protein gene cell mouse trial dose risk cancer insulin therapy virus brain".split()
    rows = []
    for i in range(n_sup + n_contra + n_neutral):
        claim = " ".join(rng.choice(words, 6))
        if i < n_sup:
            label, passage = "SUPPORT", f"We found that {claim}. Results were robust."
        elif i < n_sup + n_contra:
            label, passage = "CONTRADICT", f"It is not true that {claim}."
        else:
            label, passage = "NEI", " ".join(rng.choice(words, 12))
        rows.append({"claim": claim, "passage": passage, "label": label})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory, tiny_cross_dir: Path) -> Path:
    d = tmp_path_factory.mktemp("cal")
    lab = _labelled_csv(d / "labelled.csv")
    out = d / "cal.json"
    r = invoke(
        "guard",
        "calibrate",
        lab,
        "--verifier",
        tiny_cross_dir,
        "--alpha",
        "0.1",
        "--out",
        out,
        "--name",
        "my-lab-sample",
    )
    assert r.exit_code == 0, r.output
    assert "mondrian" in r.output and "false-flag rate on supported citations" in r.output
    assert "exchangeable with my-lab-sample" in r.output
    return out


def test_calibrate_writes_a_sealed_artifact(calibrated: Path, tiny_cross_dir: Path) -> None:
    from kit.core.hashing import file_sha256

    art = json.loads(calibrated.read_text())
    validate_json(art, "guard_calibration_artifact", str(calibrated))
    card = json.loads((tiny_cross_dir / "card.json").read_text())
    assert art["verifier"]["onnx_sha256"] == card["onnx_sha256"]
    assert art["sample"]["sha256"] == file_sha256(calibrated.parent / "labelled.csv")
    assert art["sample"]["n"] == 32 and art["sample"]["n_unsupported"] == 20
    assert art["sample"]["negative_types"] == ["contradiction", "neutral"]
    cal = load_calibration(str(calibrated))
    assert cal.kind == "artifact" and cal.by_type and cal.alpha == 0.1
    assert cal.name == "my-lab-sample" and cal.unsupported.size == 20
    rule = guard_rule(cal, 0.1)
    assert rule.tau == art["tau"] and rule.rule == "mondrian"
    g = guarantee(cal, rule, np.array([0.1, 0.9]), True)
    assert g["statement"].startswith("catch >= 90% of unsupported citations exchangeable with")
    assert "my-lab-sample" in g["statement"] and art["sample"]["sha256"][:12] in g["statement"]
    assert g["false_flag_rate"]["n"] == 12 and len(g["per_type"]) == 2


def test_tampered_artifact_is_refused(calibrated: Path, tmp_path: Path) -> None:
    art = json.loads(calibrated.read_text())
    art["unsupported_scores"][0] = 0.0 if art["unsupported_scores"][0] > 0.5 else 0.99
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(art))
    with pytest.raises(IntegrityError, match="seal"):
        load_calibration(str(bad))


def test_calibrate_refuses_a_small_sample(tmp_path: Path, tiny_cross_dir: Path) -> None:
    lab = _labelled_csv(tmp_path / "small.csv", 10, 3, 3)
    r = CliRunner().invoke(
        cli,
        ["guard", "calibrate", str(lab), "--verifier", str(tiny_cross_dir), "--out",
         str(tmp_path / "c.json"), "--alpha", "0.05"],
    )  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    assert "6 labelled unsupported" in r.output and "at least 19" in r.output
    assert not (tmp_path / "c.json").exists()


def test_calibrate_bad_label_names_the_row(tmp_path: Path, tiny_cross_dir: Path) -> None:
    lab = _labelled_csv(tmp_path / "lab.csv")
    frame = pd.read_csv(lab)
    frame.loc[4, "label"] = "MAYBE"
    frame.to_csv(lab, index=False)
    r = CliRunner().invoke(
        cli,
        ["guard", "calibrate", str(lab), "--verifier", str(tiny_cross_dir), "--out",
         str(tmp_path / "c.json")],
    )  # fmt: skip
    assert r.exit_code == 2 and "row 6" in r.output and "MAYBE" in r.output
    frame.loc[4, "label"] = "SUPPORT"
    frame.to_csv(lab, index=False)
    r = invoke("guard", "calibrate", lab, "--verifier", tiny_cross_dir, "--out",
               tmp_path / "c.json", "--label-map", "MAYBE=neutral", "--pooled")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "c.json").read_text())["rule"] == "split_conformal"


def _answers(path: Path) -> Path:
    recs = [
        {
            "answer_id": f"a{i}",
            "answer": "Insulin lowers glucose in mice [1]. The trial dose was safe [2].",
            "passages": {"1": "Insulin lowered blood glucose in mice.", "2": "Dose findings."},
        }
        for i in range(3)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_guard_run_states_the_guarantee(
    calibrated: Path, tiny_cross_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "g"
    r = invoke("guard", "run", _answers(tmp_path / "a.jsonl"), "--calibration", calibrated,
               "--verifier", tiny_cross_dir, "--out", out)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "exchangeable with my-lab-sample" in r.output
    assert "false-flag rate on supported citations" in r.output
    assert "review budget" in r.output
    s = json.loads((out / "summary.json").read_text())
    validate_json(s, "guard_summary", "summary.json")
    g = s["guarantee"]
    assert g["calibration"]["name"] == "my-lab-sample" and g["calibration"]["same_verifier"]
    assert g["tau"] == s["tau"] and g["review_budget"]["n"] == 6
    assert g["false_flag_rate"]["lo"] <= g["false_flag_rate"]["estimate"]


def test_guard_run_refuses_another_verifiers_calibration(
    calibrated: Path, verifier_dir: Path, tmp_path: Path
) -> None:
    r = CliRunner().invoke(
        cli,
        ["guard", "run", str(_answers(tmp_path / "a.jsonl")), "--calibration", str(calibrated),
         "--verifier", str(verifier_dir), "--out", str(tmp_path / "g")],
    )  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "calibration_verifier_mismatch" in r.output and "Traceback" not in r.output
