"""Issue 13 item 5: the worked example (calibrate on one source, audit another, recalibrate).

Arithmetic is checked on synthetic scored pairs against independent recomputation (brute-force
counts, scipy's KS test, :func:`kit.stats.wilson.wilson_ci`, plain loops over splits); the
plumbing (registry -> verifier -> tables -> CLI) on the tiny random cross-encoder with small n.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import ks_2samp

from kit.cli import cli
from kit.core.errors import ConfigError
from kit.guard.conformal.rule import conformal_tau
from kit.reproductions import guard_shift as gs
from kit.stats.wilson import wilson_ci
from tests.guard.tiny_model import build_tiny_cross_encoder

ALPHA = 0.1
VERIFIER = {"name": "synthetic scores (tests)", "onnx_sha256": "ab" * 32}


def _pairs(
    rng: np.random.Generator, n: int, prefix: str, shift: float = 0.0, types: int = 2
) -> pd.DataFrame:
    """Scored pairs: entailment ~ Beta(6, 2); negatives ~ Beta(2, 5) moved up by ``shift``."""
    labels = ["entailment", "contradiction", "neutral"][: 1 + types]
    lab = rng.choice(labels, n)
    score = np.where(
        lab == "entailment", rng.beta(6, 2, n), np.clip(rng.beta(2, 5, n) + shift, 0, 1)
    )
    return pd.DataFrame(
        {"pair_id": [f"{prefix}-{i}" for i in range(n)], "label": lab, "score": score}
    )


@pytest.fixture(scope="module")
def synthetic() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(11)
    return {
        "source": _pairs(rng, 600, "src"),
        "target3": _pairs(rng, 400, "t3", shift=0.35),
        "target2": _pairs(rng, 220, "t2", shift=0.35, types=1),
    }


def _tables(synthetic: dict[str, pd.DataFrame], splits: int = 50) -> dict[str, pd.DataFrame]:
    return gs.shift_example_tables(
        gs.Scored("src", synthetic["source"], "synthetic general-domain source"),
        [
            gs.Scored("t3", synthetic["target3"], "synthetic target, two negative types"),
            gs.Scored("t2", synthetic["target2"], "synthetic target, contradiction only"),
        ],
        VERIFIER,
        alpha=ALPHA,
        n_lab=100,
        splits=splits,
        seed=0,
    )


def _row(frame: pd.DataFrame, **keys: str) -> pd.Series:
    m = np.ones(len(frame), dtype=bool)
    for k, v in keys.items():
        m &= (frame[k] == v).to_numpy()
    assert m.sum() == 1, keys
    return frame[m].iloc[0]


def test_audit_rows_match_brute_force(synthetic: dict[str, pd.DataFrame]) -> None:
    cal, aud = synthetic["source"], synthetic["target3"]
    cu = cal.loc[cal["label"] != "entailment", "score"].to_numpy()
    cs = cal.loc[cal["label"] == "entailment", "score"].to_numpy()
    for rule in ("pooled", "mondrian"):
        rows = pd.DataFrame(gs.audit_rows(cal, aud, rule, ALPHA))
        assert list(rows["negative_type"]) == ["all", "contradiction", "neutral"]
        if rule == "pooled":
            tau = conformal_tau(cu, ALPHA).tau
        else:  # Mondrian: the max of the per-type conformal taus
            per = {
                t: conformal_tau(cal.loc[cal["label"] == t, "score"], ALPHA)
                for t in ("contradiction", "neutral")
            }
            tau = max(p.tau for p in per.values())
            for t, p in per.items():
                r = _row(rows, negative_type=t)
                assert r["type_tau"] == p.tau and r["k"] == p.k
        assert (rows["tau"] == tau).all()
        s, lab = aud["score"].to_numpy(), aud["label"].to_numpy()
        for _, r in rows.iterrows():
            member = (
                lab != "entailment" if r["negative_type"] == "all" else lab == r["negative_type"]
            )
            assert r["n_unsupported"] == member.sum()
            assert r["caught"] == sum(1 for x in s[member] if x <= tau)
            assert r["catch"] == r["caught"] / r["n_unsupported"]
            w = wilson_ci(int(r["caught"]), int(r["n_unsupported"]))
            assert (r["catch_lo"], r["catch_hi"]) == (w.lo, w.hi)
            assert r["verdict"] == ("ok" if r["catch"] >= 1 - ALPHA else "below_target")
        sup = lab == "entailment"
        r = rows.iloc[0]
        assert r["n_supported"] == sup.sum() and r["n_audited"] == len(aud)
        assert r["false_flagged"] == sum(1 for x in s[sup] if x <= tau)
        assert r["false_flag_rate"] == r["false_flagged"] / r["n_supported"]
        assert r["review_budget"] == pytest.approx(np.mean(s <= tau), abs=1e-15)
        # per-type rows partition the unsupported pairs
        assert rows["n_unsupported"].iloc[1:].sum() == r["n_unsupported"]
        assert rows["caught"].iloc[1:].sum() == r["caught"]
        # shift check: the whole calibration sample vs the audited scores (scipy directly)
        ks = ks_2samp(np.concatenate([cu, cs]), s)
        assert r["shift_ks_d"] == pytest.approx(ks.statistic, abs=1e-12)
        assert r["shift_p"] == pytest.approx(ks.pvalue, rel=1e-9)
        assert r["shift_warning"] == ("fires" if ks.pvalue < gs.SHIFT_LEVEL else "quiet")


def test_split_taus_and_rates_match_a_loop() -> None:
    rng = np.random.default_rng(3)
    s = rng.random(60)
    member = rng.random(60) < 0.6
    in_cal = rng.random((25, 60)) < 0.4
    in_cal[0] = False
    in_cal[0, np.flatnonzero(member)[:3]] = True  # 3 members: k = 4 > 3, refused
    tau = gs.split_taus(s, in_cal, member, ALPHA)
    rates = gs.split_rates(s, tau, ~in_cal, member)
    assert np.isnan(tau[0]) and np.isnan(rates[0])
    for b in range(1, 25):
        t = conformal_tau(s[in_cal[b] & member], ALPHA).tau
        assert tau[b] == t
        test = s[~in_cal[b] & member]
        assert rates[b] == pytest.approx(np.mean(test <= t), abs=1e-15)


def test_step_one_collapses_and_fires_step_two_restores(synthetic: dict[str, pd.DataFrame]) -> None:
    tabs = _tables(synthetic)
    one, many = tabs["guard_shift_example"], tabs["guard_shift_example_splits"]
    # the planted shift: the source tau catches few target negatives, and the check fires
    r1 = _row(one, step="1_source_calibrated", target="t3", rule="pooled", negative_type="all")
    assert r1["catch"] < 0.6 and r1["verdict"] == "below_target"
    assert r1["shift_warning"] == "fires"
    assert r1["n_audited"] == len(synthetic["target3"])
    # recalibrated on 100 labelled target pairs: audits only the other pairs
    for target, n in (("t3", 400), ("t2", 220)):
        r2 = _row(
            one, step="2_target_calibrated", target=target, rule="pooled", negative_type="all"
        )
        assert r2["n_cal_unsupported"] + r2["n_cal_supported"] == 100
        assert r2["n_audited"] == n - 100
        assert r2["n_unsupported"] + r2["n_supported"] == n - 100
        assert r2["catch"] > r1["catch"]
        assert r2["shift_warning"] == "quiet"
    # Mondrian only where the target has both negative types
    rules = set(one.loc[(one["step"] == "2_target_calibrated") & (one["target"] == "t2"), "rule"])
    assert rules == {"pooled"}
    assert set(one.loc[one["target"] == "t2", "negative_type"]) == {"all", "contradiction"}
    assert {"pooled", "mondrian"} <= set(one.loc[one["target"] == "t3", "rule"])
    # every row names the verifier (card name + sha256 prefix) and the labels
    assert (one["verifier"] == VERIFIER["name"]).all()
    assert (one["verifier_onnx_sha256"] == VERIFIER["onnx_sha256"][:12]).all()
    assert one["labels"].str.contains("human labels").all()
    assert one["guarantee"].str.contains("exchangeable with").all()
    # repeated splits: the source tau stays low, the target-calibrated one holds on average
    src = _row(many, target="t3", rule="source_pooled", negative_type="all")
    pooled = _row(many, target="t3", rule="pooled", negative_type="all")
    assert src["mean_catch"] < 0.6 and src["shift_warning_rate"] > 0.9
    assert pooled["mean_catch"] > 0.85 and pooled["shift_warning_rate"] < 0.3
    assert pooled["n_audited"] == 300 and pooled["splits"] == 50


def test_restored_row_uses_only_pairs_outside_the_lab_sample(
    synthetic: dict[str, pd.DataFrame],
) -> None:
    frame = synthetic["target3"]
    one = _tables(synthetic, splits=2)["guard_shift_example"]
    mask = gs.lab_sample(len(frame), 100, np.random.default_rng([0, 1, 0]))
    cal, rest = frame[mask], frame[~mask]
    assert set(cal["pair_id"]).isdisjoint(rest["pair_id"]) and len(cal) == 100
    tau = conformal_tau(cal.loc[cal["label"] != "entailment", "score"], ALPHA).tau
    r = _row(one, step="2_target_calibrated", target="t3", rule="pooled", negative_type="all")
    neg = rest.loc[rest["label"] != "entailment", "score"]
    assert r["tau"] == tau
    assert r["n_unsupported"] == len(neg) and r["caught"] == int((neg <= tau).sum())


def test_repeated_splits_coverage_under_exchangeability() -> None:
    """Seeded simulation: with no shift the target-calibrated mean catch is >= 1 - alpha up to
    Monte Carlo error; the shift check fires at about its level."""
    rng = np.random.default_rng(5)
    frame = _pairs(rng, 500, "x", shift=0.2)
    rows = pd.DataFrame(
        gs.repeated_splits(frame, 150, 400, np.random.default_rng(1), ALPHA, source_tau=0.2)
    )
    r = _row(rows, rule="pooled", negative_type="all")
    print(
        f"mean catch {r['mean_catch']:.4f} (se {r['catch_se']:.4f}); "
        f"shift warning rate {r['shift_warning_rate']:.3f}"
    )
    assert r["mean_catch"] >= 1 - ALPHA - 3 * r["catch_se"]
    assert r["shift_warning_rate"] < 0.12
    assert r["splits_refused"] == 0
    assert np.isnan(_row(rows, rule="source_pooled", negative_type="all")["shift_warning_rate"])


def test_lab_sample_refuses_bad_size() -> None:
    with pytest.raises(ConfigError):
        gs.lab_sample(10, 10, np.random.default_rng(0))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "verifier")


def test_reproduction_on_the_tiny_model(registry_raw: Path, tiny: Path) -> None:
    import json

    card = json.loads((tiny / "card.json").read_text())
    out = gs.guard_shift_example(
        registry_raw, tiny, n_source=120, n_lab=60, splits=10, max_target=150
    )
    one, many = out["guard_shift_example"], out["guard_shift_example_splits"]
    assert set(one["target"]) == {"check_covid", "scifact"}
    assert (one["verifier"] == card["name"]).all()
    assert (one["verifier_onnx_sha256"] == card["onnx_sha256"][:12]).all()
    r = _row(
        one, step="1_source_calibrated", target="check_covid", rule="pooled", negative_type="all"
    )
    assert r["n_cal_unsupported"] + r["n_cal_supported"] == 120 and r["n_audited"] == 150
    r = _row(one, step="2_target_calibrated", target="scifact", rule="pooled", negative_type="all")
    assert r["n_audited"] == 150 - 60
    assert set(many["rule"]) == {"source_pooled", "pooled", "mondrian"}
    assert one["labels"].str.contains("Check-COVID|SciFact").all()


def test_cli_verifier_nli_option(registry_raw: Path, tiny: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["reproduce", "run", "--help"])
    assert res.exit_code == 0 and "--verifier-nli" in res.output
    bad = [
        "reproduce",
        "run",
        "guard_shift_example",
        "--raw",
        str(registry_raw),
        "--out",
        str(tmp_path / "t"),
        "--verifier-nli",
        str(tmp_path / "nowhere"),
    ]
    res = runner.invoke(cli, bad)
    assert res.exit_code == 2 and "card.json" in res.output
    # end to end at full size on the tiny model (a few seconds): tables, receipt, verifier named
    good = [*bad[:-1], str(tiny)]
    res = runner.invoke(cli, good)
    assert res.exit_code == 0, res.output
    out = tmp_path / "t"
    for name in ("guard_shift_example", "guard_shift_example_splits"):
        for suffix in (".csv", ".md", ".tex"):
            assert (out / f"{name}{suffix}").is_file()
    assert (out / "guard_shift_example.receipt.json").is_file()
    frame = pd.read_csv(out / "guard_shift_example_splits.csv")
    assert (frame["splits"] == gs.SPLITS).all() and (frame["n_lab"] == gs.N_LAB).all()
    assert (frame["verifier"] == "tiny random cross-encoder (tests only)").all()


def test_run_names_the_missing_resource(registry_raw: Path, tmp_path: Path) -> None:
    from kit.release import reproduce as rep

    decl = rep.select(rep.load_declarations(), ("guard_shift_example",))[0]
    assert decl.needs == ("verifier_nli",)
    with pytest.raises(ConfigError, match="--verifier-nli"):
        rep.run(decl, registry_raw, tmp_path, "0" * 64, resources={})
