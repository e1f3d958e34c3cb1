"""`kit audit --gold`: the judge-derived rates anchored on gold labels lead the report (issue 40).

Gold here is construction-labelled: the planted truth of a uniform random subset of the scored
citations (wrong paper = 1), and for solve rates the judge's own labels with two flipped."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from audit_helpers import AuditRun, invoke

from kit.core.schema import read_table, validate_json


def _gold(audited: AuditRun, planted_dir: Path, n_cites: int = 20, seed: int = 0) -> pd.DataFrame:
    cites = read_table(audited.out / "citations.csv", "audit_citations")
    scored = cites[cites["support_score"].notna() & cites["l1"].isin(["found", "unchecked"])]
    truth = read_table(planted_dir / "truth.csv", "grade_planted_truth").set_index("run_id")
    rng = np.random.default_rng(seed)
    pick = scored.iloc[np.sort(rng.choice(len(scored), size=n_cites, replace=False))]
    rows = [
        {
            "metric": "wrong_paper_rate",
            "item_id": f"{r.run_id}/{r.claim_no}/{r.citation}",
            "gold": int(truth.loc[r.run_id, "planted"] == "wrong"),
        }
        for r in pick.itertuples()
    ]
    return pd.DataFrame(rows)


def _audit(audited: AuditRun, gold: Path, out: Path):
    args = list(audited.args)
    args[args.index("--out") + 1] = str(out)
    return invoke(*args, "--gold", str(gold))


def test_without_gold_the_report_says_whose_judgement(audited: AuditRun) -> None:
    s = json.loads((audited.out / "summary.json").read_text())
    block = s["gold_anchored"]
    assert block["rates"] == [] and block["assumption"] is None
    assert block["judged_by"]["wrong_paper_rate"].startswith("verifier ")
    assert "whose judgement: wrong paper rate: verifier" in audited.result.output
    assert "no gold labels given" in audited.result.output
    page = (audited.out / "report.html").read_text()
    assert "<p id=whose-judgement>whose judgement: wrong paper rate: verifier" in page
    assert "id=gold-anchored" not in page


def test_gold_anchored_rates_lead_the_report(
    audited: AuditRun, planted_dir: Path, tmp_path: Path
) -> None:
    gold = _gold(audited, planted_dir)
    path = tmp_path / "gold.csv"
    gold.to_csv(path, index=False)
    out = tmp_path / "report"
    r = _audit(audited, path, out)
    assert r.exit_code == 0, r.output
    s = json.loads((out / "summary.json").read_text())
    validate_json(s, "audit_summary", "summary.json")
    assert s["inputs"]["gold"]["sha256"]
    (rate,) = s["gold_anchored"]["rates"]
    rows = {row["method"]: row for row in rate["rows"]}
    head = {m["metric"]: m for m in s["headline"]}["wrong_paper_rate"]
    # judge-only is the audit's own (verifier) wrong-paper rate, over the same scored citations
    assert rate["n_judged"] == head["n"]
    assert rows["judge_only"]["estimate"] == pytest.approx(head["estimate"], abs=1e-12)
    # gold-only is the mean of the gold labels given
    assert rate["n_gold"] == 20 and rows["gold_only"]["estimate"] == pytest.approx(
        gold["gold"].mean(), abs=1e-12
    )
    assert rows["ppi"]["ci_low"] <= rows["ppi"]["estimate"] <= rows["ppi"]["ci_high"]
    assert 0.0 <= rows["ppi"]["lambda"] <= 1.0
    # stdout leads with it: right after the first line, before the verdict
    lines = r.output.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("audited 40 runs"))
    assert lines[i + 2].startswith("gold-anchored rates (PPI++, 95% CI; assumption: the gold")
    assert lines[i + 3].startswith("  wrong paper rate: ")
    assert "anchored on 20 gold of" in lines[i + 3]
    assert any(ln.startswith("Of 40 citations") for ln in lines[i + 4 :])
    assert "whose judgement" not in r.output
    # and the page leads with it, before the verdict
    page = (out / "report.html").read_text()
    assert 0 < page.index("<h2>Gold-anchored rates</h2>") < page.index("<div id=verdict")
    assert "anchored on 20 gold of" in page and "id=whose-judgement" not in page
    # one headline: the judge-relative table marks none of its rows (issue 56: it marked the
    # verifier's corrected rate "<- headline" under the anchored rate)
    assert "<- headline" not in r.output
    assert "judge-relative numbers (95% CI; k / n; the headline is the gold-anchored" in r.output
    assert "<span class=tag>headline</span>" not in page and "class=headline " not in page
    assert "the headline is the gold-anchored rate above" in page


def test_solve_rate_per_system(audited: AuditRun, planted_dir: Path, tmp_path: Path) -> None:
    runs = read_table(audited.out / "runs.csv", "audit_runs")
    assert "solved" in runs.columns
    solved = runs[runs["solved"].isin(["true", "false"])].iloc[:12]
    labels = (solved["solved"] == "true").astype(int).to_numpy().copy()
    labels[:2] = 1 - labels[:2]  # a person disagrees with the judge twice
    gold = pd.DataFrame(
        {
            "metric": "solve_rate",
            "item_id": [
                f"{m}/{t}" for m, t in zip(solved["model"], solved["task_id"], strict=True)
            ],
            "gold": labels,
        }
    )
    path = tmp_path / "gold.csv"
    gold.to_csv(path, index=False)
    r = _audit(audited, path, tmp_path / "report")
    assert r.exit_code == 0, r.output
    (rate,) = json.loads((tmp_path / "report" / "summary.json").read_text())["gold_anchored"][
        "rates"
    ]
    assert rate["metric"] == "solve_rate" and rate["system"] == solved["model"].iloc[0]
    assert rate["n_gold"] == 12 and "small gold sample" in rate["warnings"][0]
    # tasks are independent items: no clusters; a 0/1 judge's rate takes Wilson (issue 40 C)
    rows = {row["method"]: row for row in rate["rows"]}
    assert rate["clusters"] is None
    assert rows["judge_only"]["interval"] == (
        "Wilson score interval (a proportion of 0/1 labels; items independent)"
    )
    assert rows["ppi"]["interval"].startswith("normal (CLT) interval, plug-in variance")
    assert f"solve rate ({rate['system']}): " in r.output


def test_gold_not_judged_and_too_small_are_refused(
    audited: AuditRun, planted_dir: Path, tmp_path: Path
) -> None:
    gold = _gold(audited, planted_dir)
    bad = pd.concat(
        [
            gold,
            pd.DataFrame([{"metric": "wrong_paper_rate", "item_id": "nope/0/PMID:1", "gold": 1}]),
        ]
    )
    path = tmp_path / "gold.csv"
    bad.to_csv(path, index=False)
    out = tmp_path / "report"
    r = _audit(audited, path, out)
    assert r.exit_code == 2 and not out.exists()
    assert "gold_not_judged" in r.output and "row 22, column 'item_id': 'nope/0/PMID:1'" in r.output
    gold.iloc[:9].to_csv(path, index=False)
    r = _audit(audited, path, out)
    assert r.exit_code == 2 and not out.exists()
    assert "wrong_paper_rate: 9 gold item(s): at least 10 are needed" in r.output


def test_unsupported_rate_is_anchored_with_run_clustered_intervals(
    audited: AuditRun, planted_dir: Path, tmp_path: Path
) -> None:
    """Issue 40 B: the guard's unsupported-citation rate (the flag rate s <= tau) is anchored
    too, beside the wrong-paper rate; citation rates' intervals are cluster-robust by run."""
    wrong = _gold(audited, planted_dir, n_cites=24, seed=1)
    unsup = wrong.assign(metric="unsupported_rate")
    path = tmp_path / "gold.csv"
    pd.concat([wrong, unsup]).to_csv(path, index=False)
    out = tmp_path / "report"
    r = _audit(audited, path, out)
    assert r.exit_code == 0, r.output
    s = json.loads((out / "summary.json").read_text())
    validate_json(s, "audit_summary", "summary.json")
    rates = {x["metric"]: x for x in s["gold_anchored"]["rates"]}
    assert set(rates) == {"wrong_paper_rate", "unsupported_rate"}
    head = {m["metric"]: m for m in s["headline"]}
    u = rates["unsupported_rate"]
    rows = {row["method"]: row for row in u["rows"]}
    # judge-only is the audit's own flag rate over the same scored citations
    assert u["n_judged"] == head["flag_rate"]["n"]
    assert rows["judge_only"]["estimate"] == pytest.approx(head["flag_rate"]["estimate"])
    assert rows["gold_only"]["estimate"] == pytest.approx(unsup["gold"].mean())
    assert u["judge"].endswith("under the conformal rule (flagged: s <= tau)")
    # clustered by run: as many clusters as runs with a scored citation
    cites = read_table(audited.out / "citations.csv", "audit_citations")
    scored = cites[cites["support_score"].notna() & cites["l1"].isin(["found", "unchecked"])]
    assert u["clusters"] == scored["run_id"].nunique() >= 2
    assert "cluster-robust (CR1) variance by run" in rows["ppi"]["interval"]
    assert rows["judge_only"]["interval"].startswith("Wilson score interval at the effective n")
    assert "clusters (run)" in u["assumption"]
    assert "intervals: PPI++ and gold alone t interval (" in r.output
    assert "unsupported rate: " in r.output


def test_duplicate_gold_items_are_refused_naming_the_rows(
    audited: AuditRun, planted_dir: Path, tmp_path: Path
) -> None:
    """Issue 40 D: a (metric, item_id) given twice is refused (exit 2) naming both rows, even
    with the same label; the same item under two metrics is not a duplicate."""
    gold = _gold(audited, planted_dir)
    dup = pd.concat([gold, gold.iloc[[3]]])
    path = tmp_path / "gold.csv"
    dup.to_csv(path, index=False)
    out = tmp_path / "report"
    r = _audit(audited, path, out)
    assert r.exit_code == 2 and not out.exists(), r.output
    key = f"duplicate key (metric, item_id) = (wrong_paper_rate, {gold['item_id'].iloc[3]})"
    assert f"row 5: {key}" in r.output and f"row 22: {key}" in r.output


def test_partial_gold_anchors_only_the_rates_it_names(
    audited: AuditRun, planted_dir: Path, tmp_path: Path
) -> None:
    """Issue 40 D: gold for one metric anchors that metric only; the others stay the judges'
    (said in judged_by and on stdout)."""
    gold = _gold(audited, planted_dir).assign(metric="unsupported_rate")
    path = tmp_path / "gold.csv"
    gold.to_csv(path, index=False)
    out = tmp_path / "report"
    r = _audit(audited, path, out)
    assert r.exit_code == 0, r.output
    block = json.loads((out / "summary.json").read_text())["gold_anchored"]
    assert [x["metric"] for x in block["rates"]] == ["unsupported_rate"]
    assert "wrong_paper_rate" in block["judged_by"]
    assert "not anchored (no gold rows): wrong paper rate" in r.output


def test_adapt_cross_fits_the_verifier_on_the_gold(
    audited: AuditRun, planted_dir: Path, tmp_path: Path
) -> None:
    """Issue 56: `--adapt --method recombine` adapts the verifier fold by fold on the gold
    citations and anchors the citation rate on the same gold by cross-PPI: the row leads,
    its record says how (folds keeping runs whole), the parent's AUC is the verifier's own on
    the gold items, and the same inputs give the same bytes."""
    from kit.stats.roc import auc_score

    gold = _gold(audited, planted_dir, n_cites=30, seed=2).assign(metric="unsupported_rate")
    path = tmp_path / "gold.csv"
    gold.to_csv(path, index=False)
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        args = list(audited.args)
        args[args.index("--out") + 1] = str(out)
        r = invoke(
            *args,
            "--gold",
            str(path),
            "--adapt",
            "--method",
            "recombine",
            "--folds",
            "3",
            "--half-width",
            "0.05",
        )
        assert r.exit_code == 0, r.output
        outs.append((out, r.output))
    s = json.loads((outs[0][0] / "summary.json").read_text())
    validate_json(s, "audit_summary", "summary.json")
    block = s["gold_anchored"]
    assert block["adapted"] is True
    (rate,) = block["rates"]
    assert [row["method"] for row in rate["rows"]] == [
        "cross_ppi",
        "ppi",
        "judge_only",
        "gold_only",
    ]
    cross = rate["rows"][0]
    assert cross["ci_low"] < cross["estimate"] < cross["ci_high"] and cross["lambda"] == 1.0
    assert "cluster-robust (CR1) variance by run" in cross["interval"]
    a = rate["adaptation"]
    assert a["method"] == "recombine" and 2 <= a["folds"] <= 3 and a["units"] >= a["folds"]
    # the parent's AUC: the verifier's own support score on the gold items, computed here
    cites = read_table(outs[0][0] / "citations.csv", "audit_citations")
    score = {f"{r.run_id}/{r.claim_no}/{r.citation}": r.support_score for r in cites.itertuples()}
    p_unsup = np.array([1 - score[i] for i in gold["item_id"]])
    assert a["auc_parent"]["unsupported"] == pytest.approx(
        auc_score(p_unsup, gold["gold"].to_numpy().astype(bool)), abs=1e-6
    )
    assert a["auc_adapted"]["unsupported"] is not None
    # stdout leads with the cross-fitted rate, then the PPI++ beside it
    lines = outs[0][1].splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("gold-anchored rates (cross-PPI"))
    assert lines[i + 1].startswith(f"  unsupported rate: {cross['estimate']:.3f}")
    assert "cross-fitted on 30 gold" in lines[i + 1]
    assert lines[i + 2].startswith("    adapted judge's AUC on the held-out gold, within folds:")
    # --half-width: the plan from this pilot, inflated by the gold labels' design effect by run
    plan = rate["plan"]
    assert plan["pilot_n"] == 30 and plan["target_half_width"] == 0.05
    assert plan["design_effect"] >= 1.0
    if plan["n_gold_independent"] is not None:
        assert plan["n_gold"] == int(np.ceil(plan["n_gold_independent"] * plan["design_effect"]))
    assert "    plan: +-0.05 " in outs[0][1]
    # deterministic: the same inputs, the same summary
    s2 = json.loads((outs[1][0] / "summary.json").read_text())
    assert s2["gold_anchored"] == block


def test_adapt_without_gold_and_mislabelled_kinds_are_refused(
    audited: AuditRun, planted_dir: Path, tmp_path: Path
) -> None:
    """--adapt needs --gold (exit 2); a gold label kind that contradicts its 0/1 gold is
    refused naming the row and column."""
    args = list(audited.args)
    args[args.index("--out") + 1] = str(tmp_path / "x")
    r = invoke(*args, "--adapt")
    assert r.exit_code == 2 and "--adapt" in r.output and "--gold" in r.output, r.output
    gold = _gold(audited, planted_dir, n_cites=20).assign(metric="unsupported_rate")
    gold["label"] = np.where(gold["gold"] == 1, "contradicted", "supported")
    gold.loc[gold.index[4], "label"] = "supported" if gold["gold"].iloc[4] else "contradicted"
    path = tmp_path / "gold.csv"
    gold.to_csv(path, index=False)
    r = invoke(*args, "--gold", str(path), "--adapt", "--method", "recombine")
    assert r.exit_code == 2 and not (tmp_path / "x").exists(), r.output
    assert "row 6, column 'label'" in r.output or "row 6" in r.output, r.output


def test_contradicted_and_nei_rates_apart_when_gold_names_the_kind(
    audited: AuditRun, planted_dir: Path, tmp_path: Path
) -> None:
    """Issue 56: GOLD's label column makes contradiction its own failure: the gold sample's
    contradicted and not-enough-info rates are reported apart (counts as given)."""
    gold = _gold(audited, planted_dir, n_cites=24, seed=3).assign(metric="unsupported_rate")
    rng = np.random.default_rng(0)
    gold["label"] = np.where(
        gold["gold"] == 1,
        np.where(rng.random(len(gold)) < 0.5, "contradicted", "not_enough_info"),
        "supported",
    )
    path = tmp_path / "gold.csv"
    gold.to_csv(path, index=False)
    out = tmp_path / "report"
    r = _audit(audited, path, out)
    assert r.exit_code == 0, r.output
    s = json.loads((out / "summary.json").read_text())
    validate_json(s, "audit_summary", "summary.json")
    (rate,) = s["gold_anchored"]["rates"]
    kinds = {k["kind"]: k for k in rate["by_kind"]}
    for kind in ("contradicted", "not_enough_info"):
        assert kinds[kind]["count"] == int((gold["label"] == kind).sum())
        assert kinds[kind]["estimate"] == pytest.approx((gold["label"] == kind).mean())
        assert kinds[kind]["ci_low"] <= kinds[kind]["estimate"] <= kinds[kind]["ci_high"]
    assert "of the gold citations (gold alone): contradicted " in r.output
