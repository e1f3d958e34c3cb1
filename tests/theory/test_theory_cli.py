"""`kit theory ...` commands and the theory reproductions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core.schema import read_table
from kit.release.reproduce import load_declarations
from kit.reproductions import theory as R


def run(args: list[str]) -> tuple[int, str]:
    res = CliRunner().invoke(cli, args)
    return res.exit_code, res.output


def test_lm(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    rows = [
        {"system": s, "task_id": f"t{i}", "x": x, "y": 0.8 * x * rng.uniform(0.8, 1.0)}
        for s in ("A", "B", "C")
        for i, x in enumerate(rng.uniform(0.7, 1.0, 12))
    ]
    runs = tmp_path / "runs.csv"
    pd.DataFrame(rows).to_csv(runs, index=False)
    out = tmp_path / "lm.csv"
    code, text = run(["theory", "lm", str(runs), "--out", str(out)])
    assert code == 0, text
    lm = read_table(out, "theory_lm")
    assert len(lm) == 3 * (1 + 3 + 3)
    pooled = lm[(lm.design == "ratio_sup") & (lm.scope == "pooled")].iloc[0]
    assert pooled.L_M <= 0.8 + 1e-9 and pooled.coverage == 1.0
    code, text = run(["theory", "lm", str(runs), "--estimator", "affine", "--format", "markdown"])
    assert code == 0 and text.startswith("| design |")


def test_lm_bad_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("system,task_id,x,y\nA,t1,0.5,abc\nA,t2,-1,0.2\n")
    code, text = run(["theory", "lm", str(bad)])
    assert code == 2
    assert "row 2" in text and "row 3" in text
    missing = tmp_path / "missing.csv"
    assert run(["theory", "lm", str(missing)])[0] == 2
    zero = tmp_path / "zero.csv"
    zero.write_text("system,task_id,x,y\nA,t1,0,0.1\n")
    code, text = run(["theory", "lm", str(zero)])
    assert code == 2 and "no_ratio" in text


def test_compose(tmp_path: Path) -> None:
    stages = tmp_path / "stages.csv"
    stages.write_text("stage,name,L,eps,xi\n1,retrieval,0.9,0.05,0\n2,writing,1.2,0.02,0.01\n")
    out = tmp_path / "c.csv"
    code, text = run(["theory", "compose", str(stages), "--eps0", "0.1", "--out", str(out)])
    assert code == 0, text
    c = read_table(out, "theory_compose")
    assert c["bound"].tolist() == pytest.approx([0.1, 0.9 * 0.1 + 0.05, 1.2 * 0.14 + 0.03])
    assert c["additive_bound"].isna().tolist() == [False, False, True]
    gap = tmp_path / "gap.csv"
    gap.write_text("stage,L,eps\n1,0.9,0.05\n3,1,0\n")
    code, text = run(["theory", "compose", str(gap), "--eps0", "0"])
    assert code == 2 and "1..K" in text
    code, text = run(["theory", "compose", str(stages), "--eps0", "-1"])
    assert code == 2


def test_distance_and_radius(tmp_path: Path) -> None:
    tr = tmp_path / "tr.csv"
    st = tmp_path / "st.csv"
    tr.write_text(
        "system,state,label,next_state,count\n"
        "A,a0,search,a1,3\nA,a0,read,a2,1\nA,a1,write,a2,1\n"
        "B,b0,search,b1,1\nB,b1,write,b2,2\nB,b1,read,b0,1\n"
    )
    st.write_text("system,state,z\nA,a0,0.1\nA,a1,0.5\nA,a2,0.9\nB,b0,0.2\nB,b1,0.4\nB,b2,0.8\n")
    out, pairs = tmp_path / "chk.csv", tmp_path / "pairs.csv"
    code, text = run(
        ["theory", "distance", str(tr), str(st), "--system-a", "A", "--system-b", "B",
         "--out", str(out), "--pairs-out", str(pairs)]
    )  # fmt: skip
    assert code == 0, text
    chk = read_table(out, "theory_distance_checks").set_index("check")
    assert (chk["holds"] != "false").all()
    assert chk.loc["modulus_theory", "value"] == pytest.approx(0.45)
    assert len(read_table(pairs, "theory_distance_pairs")) == 9
    ent = tmp_path / "entries.csv"
    ent.write_text("system,context,state,weight\nA,t1,a0,1\nB,t1,b0,1\nA,t2,a0,1\nB,t2,b1,1\n")
    code, text = run(
        ["theory", "distance", str(tr), str(st), "--system-a", "A", "--system-b", "B",
         "--entries", str(ent), "--out", str(out), "--pairs-out", str(pairs)]
    )  # fmt: skip
    assert code == 0, text
    chk = read_table(out, "theory_distance_checks").set_index("check")
    d = read_table(pairs, "theory_distance_pairs").set_index(["state_a", "state_b"])["distance"]
    mean = (d[("a0", "b0")] + d[("a0", "b1")]) / 2  # point-mass entry laws per context
    assert chk.loc["whole_system_mean", "value"] == pytest.approx(mean, abs=1e-6)
    assert chk.loc["whole_system_contexts", "value"] == 2
    code, text = run(["theory", "distance", str(tr), str(st), "--system-a", "A", "--system-b", "Z"])
    assert code == 2 and "Z" in text
    code, text = run(
        [
            "theory",
            "distance",
            str(tr),
            str(st),
            "--system-a",
            "A",
            "--system-b",
            "B",
            "--gamma",
            "1",
        ]
    )
    assert code == 2 and "gamma" in text

    pr = tmp_path / "pairs_in.csv"
    pr.write_text("task_id,exit_dist,entry_dist,e_a,e_b\nt1,0.4,,0.3,0.1\nt2,0.6,0.1,,\n")
    code, text = run(["theory", "radius", str(pr), "--format", "csv"])
    assert code == 0, text
    assert "radius_lo" in text.splitlines()[0]


def test_fgw(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.csv"
    edges = tmp_path / "edges.csv"
    nodes.write_text(
        "graph,node,type,text,paper_id,weight\n"
        "ref,t,topic,statins,,1\nref,c1,claim,statins reduce LDL,,1\nref,p1,paper,,PMID1,1\n"
        "gen,T,topic,statin therapy,,1\ngen,C1,claim,statins lower LDL,,1\ngen,P1,paper,,PMID1,1\n"
        "gen,P2,paper,,PMID2,\n"
    )
    edges.write_text(
        "graph,source,target,relation\nref,c1,t,belongs-to-topic\nref,p1,c1,supports\n"
        "gen,C1,T,belongs-to-topic\ngen,P1,C1,supports\ngen,P2,C1,supports\n"
    )
    out = tmp_path / "fgw.csv"
    code, text = run(["theory", "fgw", str(nodes), str(edges), "--out", str(out)])
    assert code == 0, text
    f = read_table(out, "theory_fgw")
    assert len(f) == 1 and f.iloc[0].n_anchors == 1 and f.iloc[0].anchor_violation <= 1e-12
    bad_edges = tmp_path / "bad_edges.csv"
    bad_edges.write_text("graph,source,target,relation\nref,c1,nowhere,supports\n")
    code, text = run(["theory", "fgw", str(nodes), str(bad_edges)])
    assert code == 2 and "nowhere" in text
    code, text = run(["theory", "fgw", str(nodes), str(edges), "--pair", "ref", "nope"])
    assert code == 2


def test_declarations_are_valid() -> None:
    names = {d.name: d for d in load_declarations()}
    assert names["theory_synthetic_chain"].function == "kit.reproductions.theory:synthetic_chain"
    assert "theory_lm_designs" in names["theory_lm_designs"].tables
    assert "theory_controllability_checks" in names["theory_controllability"].tables


def test_lm_designs(registry_raw: Path) -> None:
    tabs = R.lm_designs(registry_raw)
    t = tabs["theory_lm_designs"].set_index("check")
    assert not t.index.str.startswith("motivating.").any()  # the circular estimate is gone
    lira = t.loc["lira.radius_AutoSurvey_ratio_q95"]
    assert lira["abs_delta"] <= lira["rounding_slack"] and lira["agrees"] == "true"
    assert t.loc["lira.min_radius_minus_tolerance_lopo", "kit_value"] > 0  # still refused
    assert np.isnan(t.loc["lira.smallest_margin", "kit_value"])  # not recomputable, said so
    compared = t["paper_value"].notna() & t["kit_value"].notna()
    assert (t.loc[compared, "agrees"] == "true").all() and t.loc[~compared, "agrees"].isna().all()
    prov = tabs["theory_lm_designs_provenance"].set_index("item")
    assert {"paper.table_12", "paper.table_13", "paper.table_17"} <= set(prov.index)


def test_synthetic_chain_reproduction(tmp_path: Path) -> None:
    tabs = R.synthetic_chain(tmp_path)
    chain = tabs["theory_synthetic_chain"]
    assert len(chain) == 12 and (chain["n_chains"] == R.N_CHAINS).all()
    sup = chain[chain["design"] == "ratio_sup"]
    assert (sup["holds_fraction"] == 1.0).all()  # a valid Lipschitz constant: Theorem 2 holds
    assert (chain["max_abs_recursive_minus_unrolled"] <= 1e-12).all()
    # holding on every chain is the same as the largest observed/bound ratio being <= 1
    assert ((chain["holds_fraction"] == 1) == (chain["tightness_max"] <= 1 + 1e-12)).all()
    assert tabs["theory_synthetic_chain_provenance"].equals(R.synthetic_chain_provenance())
    cor = tabs["theory_synthetic_corollaries"].set_index(["check", "design"])
    assert cor.loc[("corollary3_window_2_3", "ratio_sup"), "holds_fraction"] == 1.0


def test_controllability_reproduction(tmp_path: Path) -> None:
    tabs = R.controllability_check(tmp_path)
    assert tabs["theory_controllability_provenance"].equals(R.controllability_provenance())
    t = tabs["theory_controllability_checks"].set_index("check")
    assert (t["holds"].dropna() == "true").all()
    assert t.loc["modulus_observed", "value"] <= 0.45 + 1e-9
    assert t.loc["n_histories", "value"] == R.CTRL_CONFIGS * R.CTRL_STATES


def test_theory_schemas_load() -> None:
    from kit.core.schema import load_schema, schema_names

    names = [n for n in schema_names() if n.startswith("theory_")]
    assert len(names) >= 15
    for n in names:
        load_schema(n)
