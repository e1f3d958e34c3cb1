"""`kit anchor`: the exact output on the committed example, every refusal (exit 2, naming file,
row and column), the warnings of a small gold sample, the planner, the sealed artifact."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core.schema import validate_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "anchor"


def _run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, ["anchor", *args])
    return res.exit_code, res.stdout, res.stderr


def _tables(tmp: Path, judged: list[str], gold: list[str]) -> tuple[Path, Path]:
    j, g = tmp / "judged.csv", tmp / "gold.csv"
    j.write_text("\n".join(["item_id,judge", *judged]) + "\n")
    g.write_text("\n".join(["item_id,gold", *gold]) + "\n")
    return j, g


def _pool(n_items: int = 60, n_gold: int = 40, seed: int = 0) -> tuple[list[str], list[str]]:
    """A SYNTHETIC judged pool (ids syn-N) and its first n_gold items' gold labels, both classes
    at least 10 times."""
    rng = np.random.default_rng(seed)
    y = (np.arange(n_items) % 2).astype(int)
    f = np.clip(0.3 + 0.4 * y + rng.normal(0, 0.15, n_items), 0, 1)
    judged = [f"syn-{i},{f[i]:.3f}" for i in range(n_items)]
    gold = [f"syn-{i},{y[i]}" for i in range(n_gold)]
    return judged, gold


EXPECTED = """\
rate anchored on gold: judge synthetic-judge, 95% intervals (alpha = 0.05)
  judged items 600: gold 80 (12 with gold = 1), unlabelled 520

  method      estimate  95% CI                   n  lambda  rate of
  ppi           0.1726  [0.1086, 0.2365]       600   0.673  gold labels
  judge_only    0.3463  [0.3245, 0.3680]       600          judge synthetic-judge's labels
  gold_only     0.1500  [0.0718, 0.2282]        80          gold labels

  ppi: PPI++ (power-tuned prediction-powered inference; lambda = 1 is PPI, 0 gold-only)
  intervals: normal (CLT) interval, plug-in variance (items independent)
  assumption: the gold items are a uniform random subset of the judged items (each judged item equally likely to be gold-labelled, independently of its judge score and gold label)
  plan: +-0.05 needs about 144 gold items of 600 judged (projected +-0.0500, lambda 0.590; gold-only would need 196), from this pilot of 80
  wrote {out}
"""


def test_example_exact_output(tmp_path: Path) -> None:
    out = tmp_path / "anchor.json"
    code, stdout, stderr = _run(
        str(EXAMPLE / "judged.csv"),
        "--gold",
        str(EXAMPLE / "gold.csv"),
        "--out",
        str(out),
        "--name",
        "synthetic-judge",
        "--half-width",
        "0.05",
    )
    assert code == 0, stderr
    assert stdout == EXPECTED.replace("{out}", str(out))
    assert "sealed" in stderr and (tmp_path / "anchor.json.receipt.json").is_file()
    art = validate_json(json.loads(out.read_text()), "anchor")
    assert [r["method"] for r in art["rows"]] == ["ppi", "judge_only", "gold_only"]
    assert art["rows"][0]["lambda"] == pytest.approx(0.6725522766057269, abs=1e-12)
    assert art["rows"][1]["relative_to"] == "synthetic-judge"
    assert art["warnings"] == [] and art["n_unlabelled"] == 520
    # the same inputs give the same bytes (the receipt is checked by kit verify receipts)
    first = out.read_bytes()
    assert (
        _run(
            str(EXAMPLE / "judged.csv"),
            "--gold",
            str(EXAMPLE / "gold.csv"),
            "--out",
            str(out),
            "--name",
            "synthetic-judge",
            "--half-width",
            "0.05",
        )[0]
        == 0
    )
    assert out.read_bytes() == first
    res = CliRunner().invoke(cli, ["verify", "receipts", str(out)])
    assert res.exit_code == 0, res.output


def test_default_alpha_and_name(tmp_path: Path) -> None:
    judged, gold = _pool()
    j, g = _tables(tmp_path, judged, gold)
    out = tmp_path / "o.json"
    code, stdout, _ = _run(str(j), "--gold", str(g), "--out", str(out))
    assert code == 0
    art = json.loads(out.read_text())
    assert art["alpha"] == 0.05 and art["judge"] == "judged.csv" and art["plan"] is None
    assert "judge judged.csv's labels" in stdout
    assert art["n_gold"] == 40 and art["n_unlabelled"] == 20 and art["gold_positives"] == 20


def _refused(tmp_path: Path, judged: list[str], gold: list[str]) -> str:
    j, g = _tables(tmp_path, judged, gold)
    out = tmp_path / "o.json"
    code, stdout, stderr = _run(str(j), "--gold", str(g), "--out", str(out))
    assert code == 2, (stdout, stderr)
    assert "Traceback" not in stderr and not out.exists()
    assert not (tmp_path / "o.json.receipt.json").exists()
    return stderr


def test_refuses_gold_not_judged(tmp_path: Path) -> None:
    judged, gold = _pool()
    err = _refused(tmp_path, judged, [*gold[:5], "syn-999,1", *gold[5:], "nope,0"])
    assert "gold_not_judged" in err and "2 gold item(s) were not judged" in err
    assert "gold.csv, row 7, column 'item_id': 'syn-999' is not an item_id of" in err
    assert "gold.csv, row 43, column 'item_id': 'nope'" in err


def test_refuses_duplicate_ids(tmp_path: Path) -> None:
    judged, gold = _pool()
    err = _refused(tmp_path, [*judged, judged[3]], gold)
    assert "judged.csv, row 5: duplicate key (item_id) = (syn-3)" in err
    assert "judged.csv, row 62: duplicate key (item_id) = (syn-3)" in err
    err = _refused(tmp_path, judged, [*gold, gold[0]])
    assert "gold.csv, row 42: duplicate key (item_id) = (syn-0)" in err


def test_refuses_judge_outside_unit_interval(tmp_path: Path) -> None:
    judged, gold = _pool()
    judged[9] = "syn-9,1.2"
    judged[10] = "syn-10,-0.1"
    judged[11] = "syn-11,high"
    err = _refused(tmp_path, judged, gold)
    assert "judged.csv, row 11, column 'judge': failed in_range(0.0, 1.0) (got 1.2)" in err
    assert "judged.csv, row 12, column 'judge': failed in_range(0.0, 1.0) (got -0.1)" in err
    assert "judged.csv, row 13, column 'judge': got 'high'; expected a number" in err


def test_refuses_gold_not_binary(tmp_path: Path) -> None:
    judged, gold = _pool()
    gold[2] = "syn-2,2"
    gold[3] = "syn-3,0.5"
    gold[4] = "syn-4,"
    err = _refused(tmp_path, judged, gold)
    assert "gold.csv, row 4, column 'gold': failed isin([0, 1]) (got 2" in err
    assert "gold.csv, row 5, column 'gold'" in err
    assert "gold.csv, row 6, column 'gold': failed not_nullable" in err


def test_refuses_missing_column(tmp_path: Path) -> None:
    judged, gold = _pool()
    j, g = _tables(tmp_path, judged, gold)
    j.write_text(j.read_text().replace("item_id,judge", "item_id,score"))
    code, _, err = _run(str(j), "--gold", str(g), "--out", str(tmp_path / "o.json"))
    assert code == 2 and "column 'judge': missing" in err


def test_refuses_too_small_gold(tmp_path: Path) -> None:
    judged, gold = _pool()
    err = _refused(tmp_path, judged, gold[:9])
    assert "gold_too_small" in err and "9 gold item(s): at least 10 are needed" in err
    assert "gold.csv" in err


def test_refuses_nothing_unlabelled(tmp_path: Path) -> None:
    judged, gold = _pool(n_items=40, n_gold=40)
    err = _refused(tmp_path, judged, gold)
    assert "nothing_unlabelled" in err and "judged.csv" in err
    assert "every one of the 40 judged items has gold" in err


def test_refuses_bad_alpha(tmp_path: Path) -> None:
    judged, gold = _pool()
    j, g = _tables(tmp_path, judged, gold)
    code, _, err = _run(
        str(j), "--gold", str(g), "--out", str(tmp_path / "o.json"), "--alpha", "1.5"
    )
    assert code == 2 and "--alpha" in err


def test_warns_when_gold_is_small_or_one_sided(tmp_path: Path) -> None:
    judged, gold = _pool()
    # 20 gold items, 10 of each class: small
    j, g = _tables(tmp_path, judged, gold[:20])
    out = tmp_path / "o.json"
    code, stdout, _ = _run(str(j), "--gold", str(g), "--out", str(out))
    assert code == 0
    art = json.loads(out.read_text())
    assert len(art["warnings"]) == 1 and "small gold sample: 20 gold items (< 30)" in stdout
    # 40 gold items, all gold = 0: one class only. The estimated variance would be 0 and the
    # gold-only and PPI++ intervals a point [0, 0]: refused, nothing written
    zeros = [f"syn-{i},0" for i in range(0, 80, 2)]
    judged, _ = _pool(n_items=100)
    j, g = _tables(tmp_path, judged, zeros)
    out.unlink()
    code, stdout, stderr = _run(str(j), "--gold", str(g), "--out", str(out))
    assert code == 2 and not out.exists()
    assert "all 40 gold labels are 0" in stdout + stderr and "column 'gold'" in stdout + stderr
    # 9 of 10 gold = 0 and one gold = 1: both classes, used with a warning
    mixed = [f"syn-{i},0" for i in range(0, 78, 2)] + ["syn-78,1"]
    j, g = _tables(tmp_path, judged, mixed)
    code, stdout, _ = _run(str(j), "--gold", str(g), "--out", str(out))
    assert code == 0
    assert "warning: few gold items of one class: 1 with gold = 1 (< 10)" in stdout


def test_plan_out_of_reach(tmp_path: Path) -> None:
    judged, gold = _pool()
    j, g = _tables(tmp_path, judged, gold)
    out = tmp_path / "o.json"
    code, stdout, _ = _run(str(j), "--gold", str(g), "--out", str(out), "--half-width", "0.001")
    assert code == 0
    plan = json.loads(out.read_text())["plan"]
    assert plan["n_gold"] is None and plan["half_width"] > 0.001
    assert "plan: +-0.001 is out of reach with 60 judged items" in stdout


def test_parquet_inputs(tmp_path: Path) -> None:
    import pandas as pd

    judged, gold = _pool()
    j, g = _tables(tmp_path, judged, gold)
    jp, gp = tmp_path / "judged.parquet", tmp_path / "gold.parquet"
    pd.read_csv(j, dtype={"item_id": str}).to_parquet(jp)
    pd.read_csv(g, dtype={"item_id": str}).to_parquet(gp)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert _run(str(j), "--gold", str(g), "--out", str(a), "--name", "J")[0] == 0
    assert _run(str(jp), "--gold", str(gp), "--out", str(b), "--name", "J")[0] == 0
    rows_a, rows_b = (json.loads(p.read_text())["rows"] for p in (a, b))
    assert rows_a == rows_b


def _stratified(tmp: Path, gold_in_b: bool = True) -> tuple[Path, Path]:
    """SYNTHETIC: 40 items in stratum a (rate 1/2), 80 in b (rate 1/4); gold 20 of a and,
    when ``gold_in_b``, 12 of b."""
    judged, gold = ["item_id,judge,stratum"], ["item_id,gold"]
    for h, m, k, every in (("a", 40, 20, 2), ("b", 80, 12 if gold_in_b else 0, 4)):
        for i in range(m):
            y = int(i % every == 0)
            judged.append(f"{h}{i},{0.2 + 0.6 * y - 0.1 * (i % 3 == 0):.2f},{h}")
            if i < k:
                gold.append(f"{h}{i},{y}")
    j, g = tmp / "judged.csv", tmp / "gold.csv"
    j.write_text("\n".join(judged) + "\n")
    g.write_text("\n".join(gold) + "\n")
    return j, g


def test_stratified_design_uses_design_weights(tmp_path: Path) -> None:
    from kit.stats.ppi import classical_mean, ppi_mean

    j, g = _stratified(tmp_path)
    out = tmp_path / "o.json"
    code, stdout, _ = _run(str(j), "--gold", str(g), "--out", str(out))
    assert code == 0
    art = validate_json(json.loads(out.read_text()), "anchor")
    assert art["design"] == "stratified" and "within each stratum" in art["assumption"]
    assert art["strata"] == [
        {"stratum": "a", "n_judged": 40, "n_gold": 20},
        {"stratum": "b", "n_judged": 80, "n_gold": 12},
    ]
    assert "strata (judged/gold): a 40/20, b 80/12" in stdout
    # the design weights: gold M_h / n_h, unlabelled M_h / (M_h - n_h)
    import pandas as pd

    jf = pd.read_csv(j)
    gf = pd.read_csv(g).merge(jf, on="item_id")
    un = jf[~jf["item_id"].isin(gf["item_id"])]
    w = gf["stratum"].map({"a": 40 / 20, "b": 80 / 12}).to_numpy()
    wu = un["stratum"].map({"a": 40 / 20, "b": 80 / 68}).to_numpy()
    want = ppi_mean(gf["gold"], gf["judge"], un["judge"], 0.05, None, w, wu)
    rows = {r["method"]: r for r in art["rows"]}
    assert [rows["ppi"][k] for k in ("estimate", "ci_low", "ci_high")] == pytest.approx(
        [want.estimate, want.ci_low, want.ci_high], abs=1e-12
    )
    # gold-only with design weights is the stratified mean of the gold labels
    strat = (40 * gf[gf.stratum == "a"].gold.mean() + 80 * gf[gf.stratum == "b"].gold.mean()) / 120
    assert rows["gold_only"]["estimate"] == pytest.approx(strat, abs=1e-12)
    assert rows["gold_only"]["ci_low"] == pytest.approx(classical_mean(gf["gold"], 0.05, w).ci_low)
    # the judge-only rate stays the plain mean over every judged item
    assert rows["judge_only"]["estimate"] == pytest.approx(jf["judge"].mean(), abs=1e-12)


def test_refuses_a_stratum_without_gold(tmp_path: Path) -> None:
    j, g = _stratified(tmp_path, gold_in_b=False)
    code, _, err = _run(str(j), "--gold", str(g), "--out", str(tmp_path / "o.json"))
    assert code == 2 and not (tmp_path / "o.json").exists()
    assert "stratum_without_gold" in err and "stratum 'b' has no gold item" in err
    assert "judged.csv, row 42, column 'stratum'" in err


def test_refuses_a_stratum_whose_items_all_have_gold(tmp_path: Path) -> None:
    """A stratum with every item gold has no unlabelled item for the judge term: the PPI++ sum
    would leave its judge mean out while its rectifier stays in (a biased estimate). Refused,
    by the command and by the library."""
    from kit.anchor.rates import anchored_rates

    j, g = _stratified(tmp_path)
    gold = g.read_text().splitlines()
    # every item of stratum a (40) gold
    extra = [f"a{i},{int(i % 2 == 0)}" for i in range(20, 40)]
    g.write_text("\n".join([*gold, *extra]) + "\n")
    code, _, err = _run(str(j), "--gold", str(g), "--out", str(tmp_path / "o.json"))
    assert code == 2 and not (tmp_path / "o.json").exists()
    assert "stratum_all_gold" in err and "stratum 'a'" in err
    y = np.r_[np.ones(10), np.zeros(10), np.ones(5), np.zeros(5)]
    with pytest.raises(ValueError, match="stratum 'a': all of its 20 judged items have gold"):
        anchored_rates(
            y, y, np.full(30, 0.5), "J", strata_gold=["a"] * 20 + ["b"] * 10,
            strata_unlabelled=["b"] * 30,
        )  # fmt: skip


def test_integer_ids_in_parquet_read_as_in_csv(tmp_path: Path) -> None:
    import pandas as pd

    rng = np.random.default_rng(3)
    y = (np.arange(80) % 3 == 0).astype(int)
    judged = pd.DataFrame(
        {"item_id": np.arange(80), "judge": np.clip(0.3 + 0.5 * y + rng.normal(0, 0.1, 80), 0, 1)}
    )
    gold = pd.DataFrame({"item_id": np.arange(0, 80, 2), "gold": y[::2]})
    judged.to_parquet(tmp_path / "j.parquet")
    gold.to_parquet(tmp_path / "g.parquet")
    judged.to_csv(tmp_path / "j.csv", index=False)
    gold.to_csv(tmp_path / "g.csv", index=False)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert (
        _run(
            str(tmp_path / "j.parquet"),
            "--gold",
            str(tmp_path / "g.parquet"),
            "--out",
            str(a),
            "--name",
            "J",
        )[0]
        == 0
    )
    assert (
        _run(
            str(tmp_path / "j.csv"),
            "--gold",
            str(tmp_path / "g.csv"),
            "--out",
            str(b),
            "--name",
            "J",
        )[0]
        == 0
    )
    rows_a, rows_b = (json.loads(p.read_text())["rows"] for p in (a, b))
    assert rows_a == rows_b and json.loads(a.read_text())["n_gold"] == 40
