"""Every theory reproduction's checks can fail: each is run on a perturbed input and must say so.

Also: every theory reproduction states its provenance (recomputed / transcribed / synthetic /
consistency) and why paper Tables 12, 13 and 17 cannot be rebuilt from the registry.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from kit.registry.loaders import published_constants
from kit.release.reproduce import load_declarations
from kit.reproductions import theory as R


@pytest.fixture(scope="module")
def lira(registry_raw: Path) -> dict:
    return published_constants(registry_raw)["biolitbench"]["lira_refusals"]


def checks(table) -> dict[str, str]:
    t = table.set_index("check")
    return t["agrees"].dropna().to_dict()


def test_lm_designs_checks_pass_on_the_transcription(lira: dict) -> None:
    got = checks(R.lm_designs_table(lira))
    assert got and set(got.values()) == {"true"}


PERTURBATIONS = [
    # a wrong score constant moves every recomputed radius away from the printed ones
    ("L_s_median", 0.9, {"lira.radius_AutoSurvey_ratio_q95", "lira.radius_range_low",
                         "lira.radius_range_high"}),
    ("L_M_ratio_q95", 0.95, {"lira.radius_AutoSurvey_ratio_q95", "lira.radius_range_low",
                             "lira.radius_range_high", "lm.pooled_within_per_system_range"}),
    ("eps_in_AutoSurvey", 0.9, {"lira.radius_AutoSurvey_ratio_q95"}),
    ("radius_AutoSurvey_LiRA", 0.74, {"lira.radius_AutoSurvey_ratio_q95"}),
    ("radius_range", [0.65, 0.78], {"lira.radius_range_low", "lira.radius_range_high"}),
    ("L_M_ratio_sup", 1.2, {"lm.expanding_runs_implied"}),
    ("L_M_leave_one_pipeline_out_range", [0.2, 0.25], {"lira.refused_under_lopo"}),
]  # fmt: skip


@pytest.mark.parametrize(("key", "value", "fails"), PERTURBATIONS)
def test_lm_designs_checks_fail_on_a_perturbed_input(
    lira: dict, key: str, value: object, fails: set[str]
) -> None:
    bad = copy.deepcopy(lira)
    bad[key] = value
    got = checks(R.lm_designs_table(bad))
    assert {k for k, v in got.items() if v == "false"} == fails


def test_every_lm_designs_check_is_reached_by_some_perturbation(lira: dict) -> None:
    """The perturbations above cover every row that is a check (no check that cannot fail)."""
    covered = set().union(*(f for _, _, f in PERTURBATIONS))
    assert set(checks(R.lm_designs_table(lira))) == covered


def test_synthetic_chain_checks_fail_when_the_constants_are_understated() -> None:
    ok = R.synthetic_chain_tables(12)
    sup = ok["theory_synthetic_chain"].query("design == 'ratio_sup'")
    assert (sup["holds_fraction"] == 1.0).all()
    bad = R.synthetic_chain_tables(12, scale_L=0.3)
    sup_bad = bad["theory_synthetic_chain"].query("design == 'ratio_sup'")
    assert (sup_bad["holds_fraction"] < 1.0).any()
    assert (bad["theory_synthetic_chain"]["utility_holds_fraction"] < 1.0).any()
    cor = bad["theory_synthetic_corollaries"]
    assert (cor.query("check == 'corollary3_window_2_3'")["holds_fraction"] < 1.0).any()


def test_controllability_checks_fail_on_a_wrong_modulus() -> None:
    ok = R.controllability_tables().set_index("check")
    assert (ok["holds"].dropna() == "true").all()
    bad = R.controllability_tables(claimed_modulus=0.3).set_index("check")
    assert bad.loc["modulus_observed", "holds"] == "false"


def test_every_theory_reproduction_states_its_provenance() -> None:
    decls = {d.name: d for d in load_declarations() if d.name.startswith("theory_")}
    builders = {
        "theory_lm_designs": R.lm_designs_provenance,
        "theory_synthetic_chain": R.synthetic_chain_provenance,
        "theory_controllability": R.controllability_provenance,
    }
    assert set(decls) == set(builders)
    for name, build in builders.items():
        assert f"{name.removeprefix('theory_')}_provenance" in " ".join(decls[name].tables)
        prov = build().set_index("item")
        for table in ("paper.table_12", "paper.table_13", "paper.table_17"):
            assert prov.loc[table, "basis"] == "not_reproducible"
            assert "registry" in prov.loc[table, "detail"]
        assert "recomputed" in set(prov["basis"])


def test_lm_designs_returns_its_provenance(registry_raw: Path) -> None:
    tabs = R.lm_designs(registry_raw)
    assert set(tabs) == {"theory_lm_designs", "theory_lm_designs_provenance"}
    assert tabs["theory_lm_designs_provenance"].equals(R.lm_designs_provenance())
