"""Reproductions of the theory checks ("What Can a Leaderboard Certify?", Appendix F).

* ``synthetic_chain``: Theorem 2 (with Corollaries 2, 3 and Theorem 3) on seeded synthetic
  four-stage chains (Appendix F.4, Table 15): exact laws, observed discrepancy against the
  composed bound, holds-fraction and tightness per stage and per constant design.
* ``lm_designs``: the L_M estimator designs of Table 11 carried into Theorem 1 -- the LiRA
  refusal radii (Appendix F.3, Table 14) under each design -- with paper_value next to
  kit_value, an ``agrees`` check and a note on what cannot be recomputed. (The motivating
  example and the plain LiRA radius are ``certify_motivating_example`` /
  ``certify_lira_refusal``; a linear writer's L_M is its slope by definition, so it is not
  "estimated" from its own runs.)
* ``controllability_check``: Theorem 4 / Proposition 2 on seeded kernels (Appendix F.7).

Each returns a ``*_provenance`` table (schema theory_provenance): what it recomputes, what it
transcribes, what is synthetic, and which paper tables (12, 13 and 17 for all three, plus 15 or
18 where the reproduction stands in for them) cannot be rebuilt from the registry's data, and
why. The ``*_tables`` functions take a perturbation so that a test can show each check failing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kit.certify import composition, distance, sensitivity
from kit.certify.nuisance import SystemNuisance, nuisance_radius
from kit.core.schema import validate_frame
from kit.registry.loaders import published_constants

CHAIN_SEED = 15  # Table 15
N_CHAINS = 200
GRID_N = 20
LEVELS = 5
HOLD_TOL = 1e-12
RUNS = 100  # sampled executions per system and chain
WINDOW = (2, 3)  # Corollary 3: systems differ on claims and organisation only
COROLLARY_DESIGNS = ("ratio_sup", "affine")


def _stage_table(frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (design, stage), g in frame.groupby(["design", "stage"], sort=True):
        tight = g["observed"] / g["bound"]
        rows.append(
            {
                "design": design,
                "stage": int(stage),
                "stage_name": composition.STAGES[int(stage) - 1],
                "n_chains": len(g),
                "mean_L": g["L"].mean(),
                "mean_xi": g["xi"].mean(),
                "mean_eps": g["eps"].mean(),
                "observed_mean": g["observed"].mean(),
                "bound_mean": g["bound"].mean(),
                "holds_fraction": float((g["observed"] <= g["bound"] + HOLD_TOL).mean()),
                "tightness_median": float(tight.median()),
                "tightness_max": float(tight.max()),
                "observed_sampled_mean": g["observed_sampled"].mean(),
                "holds_fraction_sampled": float(
                    (g["observed_sampled"] <= g["bound"] + HOLD_TOL).mean()
                ),
                "bound_above_one_fraction": float((g["bound"] > 1).mean()),
                "utility_holds_fraction": float(
                    (g["utility_gap"] <= g["utility_bound"] + HOLD_TOL).mean()
                ),
                "max_abs_recursive_minus_unrolled": float(
                    (g["bound"] - g["bound_unrolled"]).abs().max()
                ),
            }
        )
    return pd.DataFrame(rows)


def _corollaries(
    a: composition.ChainKnobs,
    b: composition.ChainKnobs,
    constants: dict[str, list[tuple[float, float]]],
) -> list[dict]:
    """Corollary 2 on the binomial stages 1-3 (when L_k <= 1) and Corollary 3 on stages 2..3."""
    grid = np.arange(GRID_N + 1) / GRID_N
    # Corollary 3: A keeps B's entry, retrieval and writing; differs on stages i..j only.
    a_win = composition.ChainKnobs(b.entry, b.recall, a.retention, a.order, b.writing)
    laws_b = composition.chain_laws(b, GRID_N, LEVELS)
    mats_b = composition.stage_matrices(b, GRID_N, LEVELS)
    out = []
    for label, ka in (("corollary2_additive_stage3", a), ("corollary3_window_2_3", a_win)):
        laws_a = composition.chain_laws(ka, GRID_N, LEVELS)
        mats_a = composition.stage_matrices(ka, GRID_N, LEVELS)
        eps = [composition.replacement_error(ma, mb) for ma, mb in zip(mats_a, mats_b, strict=True)]
        for design in COROLLARY_DESIGNS:
            L = [c[0] for c in constants[design]]
            xi = [c[1] for c in constants[design]]
            if label.startswith("corollary2"):
                if not composition.is_nonexpansive(L[:3]):
                    continue
                eps0 = composition.wasserstein_1d(grid, laws_a[0], laws_b[0])
                bound = float(composition.additive_bound(eps0, eps[:3], xi[:3])[-1])
                obs = composition.wasserstein_1d(grid, laws_a[3], laws_b[3])
            else:
                i, j = WINDOW
                eps_prev = composition.wasserstein_1d(grid, laws_a[i - 1], laws_b[i - 1])
                bound = composition.window_bound(eps_prev, L, eps, xi, i, j)
                obs = composition.wasserstein_1d(grid, laws_a[-1], laws_b[-1])
            out.append({"check": label, "design": design, "observed": obs, "bound": bound})
    return out


def _corollary_table(recs: list[dict]) -> pd.DataFrame:
    rows = []
    for (label, design), g in pd.DataFrame(recs).groupby(["check", "design"], sort=True):
        rows.append(
            {
                "check": label,
                "design": design,
                "n_chains": len(g),
                "observed_mean": float(g["observed"].mean()),
                "bound_mean": float(g["bound"].mean()),
                "holds_fraction": float((g["observed"] <= g["bound"] + HOLD_TOL).mean()),
                "tightness_median": float((g["observed"] / g["bound"]).median()),
            }
        )
    return pd.DataFrame(rows)


def synthetic_chain_tables(n_chains: int, scale_L: float = 1.0) -> dict[str, pd.DataFrame]:
    """The two tables of :func:`synthetic_chain` on ``n_chains`` seeded chains.

    ``scale_L`` multiplies every fitted L_k before the bounds are composed (1 = the
    reproduction); the test uses a value < 1 to show that the holds-fractions can fail.
    """
    rng = np.random.default_rng(CHAIN_SEED)
    sample_rng = np.random.default_rng(CHAIN_SEED + 1000)
    checks = []
    cors: list[dict] = []
    for c in range(n_chains):
        a, b = composition.draw_knobs(rng)
        mats_b = composition.stage_matrices(b, GRID_N, LEVELS)
        constants = {
            d: [(scale_L * L, xi) for L, xi in composition.stage_constants(mats_b, d)]
            for d in sensitivity.DESIGNS
        }
        checks.extend(
            composition.check_chain(
                c, a, b, n=GRID_N, levels=LEVELS, constants=constants, rng=sample_rng, runs=RUNS
            )
        )
        cors.extend(_corollaries(a, b, constants))
    frame = pd.DataFrame([r.__dict__ for r in checks])
    return {
        "theory_synthetic_chain": validate_frame(_stage_table(frame), "theory_synthetic_chain"),
        "theory_synthetic_corollaries": validate_frame(
            _corollary_table(cors), "theory_synthetic_corollaries"
        ),
    }


def synthetic_chain_provenance() -> pd.DataFrame:
    """What :func:`synthetic_chain` simulates and recomputes, and what it cannot reproduce."""
    return _provenance([
        ("chains", "synthetic", "Appendix F.4, Table 15",
         f"{N_CHAINS} seeded chains (seed {CHAIN_SEED}) on the grid 0..1 in steps of 1/{GRID_N}; "
         "laws propagated exactly; nothing is read from the registry"),
        ("holds_fraction, tightness, *_sampled", "recomputed", "Theorem 2, Corollaries 2-3, "
         "Theorem 3", "bounds from constants fitted to probes of the reference kernels, against "
         "the exact (and sampled) discrepancy; ratio_sup is a valid Lipschitz constant, so its "
         "holds_fraction must be 1"),
        ("paper.table_15", "not_reproducible", "Appendix F.4, Table 15",
         "the paper builds its chains from the human review graphs, which the registry does not "
         "hold; its numbers (holds on 95-100% of chains) are not compared"),
    ])  # fmt: skip


def synthetic_chain(raw: Path) -> dict[str, pd.DataFrame]:
    """Theorem 2 on seeded synthetic four-stage chains (Appendix F.4); ``raw`` is not read."""
    del raw  # synthetic: no registry input
    out = synthetic_chain_tables(N_CHAINS)
    out["theory_synthetic_chain_provenance"] = synthetic_chain_provenance()
    return out


AGREE_TOL = 1e-9  # |kit - paper| allowed where no rounding slack is given


def _row(
    check: str, basis: str, paper: float | None, kit: float, slack: float | None, note: str
) -> dict[str, object]:
    """One row of theory_lm_designs; ``agrees`` is the check (empty where nothing is compared)."""
    compared = paper is not None and not np.isnan(kit)
    delta = abs(float(kit) - float(paper)) if compared else np.nan
    ok = compared and delta <= (AGREE_TOL if slack is None else slack)
    agrees = None if not compared else ("true" if ok else "false")
    return {
        "check": check,
        "basis": basis,
        "paper_value": np.nan if paper is None else float(paper),
        "kit_value": float(kit),
        "abs_delta": delta,
        "rounding_slack": np.nan if slack is None else float(slack),
        "agrees": agrees,
        "note": note,
    }


# F.1: "None of the 118 runs expands" (text, not in the registry's constants file).
EXPANDING_RUNS_PRINTED = 0


def lm_designs_table(lira: dict) -> pd.DataFrame:
    """Table 14's LiRA radius under each L_M design of Table 11 (Theorem 1 with the transcribed
    constants of ``published_constants.yaml: biolitbench.lira_refusals``), plus two consistency
    checks between transcribed constants. Pure: the test perturbs ``lira``."""
    L_s, L_C = lira["L_s_median"], lira["L_C"]
    eps_lira, eps_as = lira["eps_in_LiRA"], lira["eps_in_AutoSurvey"]

    def lira_radius(L_M: float, xi: float, eps_p: float) -> float:
        return nuisance_radius(
            SystemNuisance(L_M=L_M, eps_in=eps_p, xi=xi),
            SystemNuisance(L_M=L_M, eps_in=eps_lira, xi=xi),
            L_s=L_s,
            L_C=L_C,
        )

    rows = []
    q95 = lira["L_M_ratio_q95"]
    # Rounding: every printed input is rounded to 3 decimals (+-0.0005); first-order slack.
    slack_as = 0.0005 * (q95 * (eps_as + eps_lira) + L_s * (eps_as + eps_lira) + 2 * L_s * q95)
    rows.append(_row("lira.radius_AutoSurvey_ratio_q95", "recomputed", lira["radius_AutoSurvey_LiRA"],
                     lira_radius(q95, 0.0, eps_as), slack_as,
                     "Eq. 3 reduced as in F.3: L_s L_M (eps_in,P + eps_in,LiRA) from the transcribed "
                     "factors; printed inputs are rounded to 3 decimals, so |delta| <= "
                     "rounding_slack is agreement"))  # fmt: skip
    lo_p, hi_p = lira["eps_in_self_retrieving_range"]
    r_lo, r_hi = lira["radius_range"]
    rows.append(_row("lira.radius_range_low", "recomputed", r_lo, lira_radius(q95, 0.0, lo_p), 0.005,
                     "at the smallest measured entry mismatch 0.94; paper prints 2 decimals"))  # fmt: skip
    rows.append(_row("lira.radius_range_high", "recomputed", r_hi, lira_radius(q95, 0.0, hi_p), 0.005,
                     "at the largest measured entry mismatch 0.98; paper prints 2 decimals"))  # fmt: skip
    rows.append(_row("lira.radius_AutoSurvey_ratio_sup", "recomputed", None,
                     lira_radius(lira["L_M_ratio_sup"], 0.0, eps_as), None,
                     "Table 11's supremum design; the paper prints no radius for it (not a check)"))  # fmt: skip
    rows.append(_row("lira.radius_AutoSurvey_affine", "recomputed", None,
                     lira_radius(lira["L_M_affine_slope"], lira["L_M_affine_slack"], eps_as),
                     None, "Table 11's affine design; slack xi charged for both systems "
                     "(both eps_in > 0, Theorem 1); the paper prints no radius for it (not a "
                     "check)"))  # fmt: skip
    lo_m, hi_m = lira["L_M_leave_one_pipeline_out_range"]
    tol = lira["tolerance_median"]
    margin = min(lira_radius(lo_m, 0.0, lo_p), lira_radius(hi_m, 0.0, lo_p)) - tol
    rows.append(_row("lira.min_radius_minus_tolerance_lopo", "recomputed", None, margin, None,
                     "smallest radius under the leave-one-pipeline-out constants at the smallest "
                     "entry mismatch, minus the median tolerance (not a check by itself; see "
                     "lira.refused_under_lopo)"))  # fmt: skip
    rows.append(_row("lira.refused_under_lopo", "recomputed", 1, float(margin > 0), None,
                     "F.3: the verdicts are unchanged (refused) under the leave-one-pipeline-out "
                     "constants; kit_value 1 = every such radius exceeds the median tolerance"))  # fmt: skip
    rows.append(_row("lira.admit_only_if_L_M_at_most", "transcribed", lira["admit_only_if_L_M_at_most"],
                     np.nan, None, "needs each readout's tolerance and L_s (not in the registry); "
                     "not recomputed"))  # fmt: skip
    rows.append(_row("lira.smallest_margin", "transcribed", lira["smallest_margin"], np.nan, None,
                     "needs the per-readout tolerance table (not in the registry); not "
                     "recomputed"))  # fmt: skip
    sup = lira["L_M_ratio_sup"]
    rows.append(_row("lm.expanding_runs_implied", "consistency", EXPANDING_RUNS_PRINTED,
                     float(sup > 1.0), None, "two transcribed facts checked against each other, "
                     "not a refit: a run expands iff y/x > 1, so the printed ratio_sup must be "
                     "<= 1 if none of the 118 runs expands (F.1); kit_value 1 = ratio_sup > 1"))  # fmt: skip
    per = lira["L_M_per_system"]
    rows.append(_row("lm.pooled_within_per_system_range", "consistency", 1,
                     float(min(per.values()) <= q95 <= max(per.values())), None,
                     "two transcribed facts checked against each other, not a refit: the pooled "
                     "runs' q95 quantile is a quantile of a mixture of the per-system laws, so it "
                     "lies between the per-system q95 values (1 = it does); the 118 paired runs "
                     "are not in the registry, so the estimators cannot be refitted"))  # fmt: skip
    return validate_frame(pd.DataFrame(rows), "theory_lm_designs")


# Paper tables of Appendix F that no theory reproduction can rebuild from the registry's data.
NOT_REPRODUCED = (
    ("paper.table_12", "Appendix F.1, Table 12",
     "Falsification tests for Assumption 1 (leave-one-pipeline-out coverage of L_M, expanding "
     "runs, the development instrument's writing stage at 1.74) need the 118 paired runs (x, y "
     "per pipeline and task) and the instrument's probes; the registry holds only the fitted "
     "constants (published_constants.yaml: biolitbench.lira_refusals). `kit theory lm` computes "
     "this table from such runs."),
    ("paper.table_13", "Appendix F.2, Table 13",
     "The bound at a controlled writing window (5 pipelines x 20 tasks for the fit, 420 "
     "pair-by-readout cells) needs each pipeline's sealed-entry and own writing exits and their "
     "per-cell scores; the registry's biolitbench_board.csv holds only per-system board scores."),
    ("paper.table_17", "Appendix F.6, Table 17",
     "Ctrl_M of the reference-fed pairs needs per-task exit distances and each entry's distance "
     "to the reference at the retrieval and writing windows; none is in the registry. `kit "
     "theory radius` computes it from such pairs."),
)  # fmt: skip


def _provenance(items: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    """What a theory reproduction recomputes, transcribes or simulates, and the paper tables it
    cannot rebuild (:data:`NOT_REPRODUCED`), as a table (schema theory_provenance)."""
    rows = [{"item": i, "basis": b, "paper_ref": r, "detail": d} for i, b, r, d in items]
    rows += [
        {"item": i, "basis": "not_reproducible", "paper_ref": r, "detail": d}
        for i, r, d in NOT_REPRODUCED
    ]
    return validate_frame(pd.DataFrame(rows), "theory_provenance")


def lm_designs_provenance() -> pd.DataFrame:
    """What :func:`lm_designs` recomputes and transcribes, and what it cannot reproduce."""
    return _provenance([
        ("lira.*", "recomputed", "Appendix F.3, Table 14",
         "Theorem 1 (kit.certify.nuisance) evaluated on the transcribed L_s, L_C, L_M and eps_in; "
         "compared with the transcribed radii (agrees = the check)"),
        ("constants", "transcribed", "Appendix F.1, F.3; Table 11",
         "L_M per design, per system and leave-one-pipeline-out, L_s, L_C, eps_in, radii and "
         "tolerance: published_constants.yaml, biolitbench.lira_refusals"),
        ("lm.*", "consistency", "Appendix F.1",
         "transcribed constants checked against each other (not recomputed from data)"),
        ("motivating_example", "transcribed", "Sections 3.1-3.3",
         "not here: a linear writer's L_M is its slope by definition, so estimating it from its "
         "own runs would compare a quantity with itself; the example's radius is recomputed in "
         "certify_motivating_example"),
    ])  # fmt: skip


def lm_designs(raw: Path) -> dict[str, pd.DataFrame]:
    """L_M designs (Table 11) carried into Theorem 1: Table 14's LiRA radii under each design,
    from the transcribed constants, with a provenance table."""
    lira = published_constants(raw)["biolitbench"]["lira_refusals"]
    return {
        "theory_lm_designs": lm_designs_table(lira),
        "theory_lm_designs_provenance": lm_designs_provenance(),
    }


CTRL_SEED = 18  # Table 18
CTRL_CONFIGS = 12
CTRL_STATES = 6
CTRL_LABELS = ("search", "read", "rank", "write")
GAMMA, BETA = 0.9, 0.5


def _logged_configuration(rng: np.random.Generator, name: str) -> distance.BranchKernels:
    """A seeded stand-in for one logged configuration: a DAG of CTRL_STATES states whose last
    two are terminal, 1-3 logged branches per state with counts 1-4, interfaces in [0, 1]."""
    states = [f"{name}.s{i}" for i in range(CTRL_STATES)]
    transitions = []
    for i in range(CTRL_STATES - 2):
        for _ in range(int(rng.integers(1, 4))):
            j = int(rng.integers(i + 1, CTRL_STATES))
            label = CTRL_LABELS[int(rng.integers(len(CTRL_LABELS)))]
            transitions.append((states[i], label, states[j], float(rng.integers(1, 5))))
    z = np.sort(rng.uniform(size=CTRL_STATES))
    return distance.empirical_kernels(states, z, transitions, labels=list(CTRL_LABELS))


def controllability_tables(claimed_modulus: float | None = None) -> pd.DataFrame:
    """The checks of :func:`controllability_check`; ``claimed_modulus`` replaces the limit
    gamma (1 - beta) of Theorem 4 (the test claims a smaller one to show the check can fail)."""
    rng = np.random.default_rng(CTRL_SEED)
    parts = [_logged_configuration(rng, f"cfg{k:02d}") for k in range(CTRL_CONFIGS)]
    union = distance.disjoint_union(parts, [f"c{k:02d}" for k in range(CTRL_CONFIGS)])
    kappa = GAMMA * (1 - BETA) if claimed_modulus is None else claimed_modulus
    cc = distance.contraction_check(union, union, GAMMA, BETA, rng, n_random=2, symmetric=True)
    fp = distance.fixed_point(union, union, GAMMA, BETA, symmetric=True)
    pm = distance.pseudometric_check(fp.d)
    starts = [k * CTRL_STATES for k in range(CTRL_CONFIGS)]
    d0 = fp.d[np.ix_(starts, starts)][np.triu_indices(CTRL_CONFIGS, k=1)]
    slack = 1e-9
    rows = [
        ("n_configurations", CTRL_CONFIGS, None),
        ("n_histories", union.n, None),
        ("modulus_theory", kappa, None),
        ("modulus_observed", cc.modulus_observed, kappa + slack),
        ("modulus_random_pairs", cc.modulus_random, kappa + slack),
        ("uniqueness_gap_two_starts", cc.start_gap, slack),
        ("iterations", fp.iterations, None),
        ("max_diagonal", pm.max_diagonal, slack),
        ("max_asymmetry", pm.max_asymmetry, slack),
        ("max_triangle_violation", pm.max_triangle_violation, slack),
        ("triples_checked", pm.n_triples, None),
        ("initial_history_distance_min", float(d0.min()), None),
        ("initial_history_distance_mean", float(d0.mean()), None),
        ("initial_history_distance_max", float(d0.max()), None),
    ]
    frame = pd.DataFrame(
        [
            {
                "check": c,
                "value": float(v),
                "limit": np.nan if lim is None else float(lim),
                "holds": None if lim is None else ("true" if v <= lim else "false"),
            }
            for c, v, lim in rows
        ]
    )
    return validate_frame(frame, "theory_distance_checks")


def controllability_provenance() -> pd.DataFrame:
    """What :func:`controllability_check` simulates and recomputes, and what it cannot."""
    return _provenance([
        ("configurations", "synthetic", "Appendix F.7, Table 18",
         f"{CTRL_CONFIGS} seeded configurations (seed {CTRL_SEED}) of {CTRL_STATES} histories; "
         "nothing is read from the registry"),
        ("modulus, uniqueness, pseudometric", "recomputed", "Theorem 4, Proposition 2",
         f"the operator of Definition 8 (gamma {GAMMA}, beta {BETA}) iterated with exact OT; each "
         "check holds only if the value is within its limit"),
        ("paper.table_18", "not_reproducible", "Appendix F.7, Table 18",
         "the twelve logged configurations are not in the registry; the paper's numbers "
         "(contraction 0.449 <= 0.45, unique) are not compared"),
    ])  # fmt: skip


def controllability_check(raw: Path) -> dict[str, pd.DataFrame]:
    """Theorem 4 and Proposition 2 on twelve seeded configurations (Appendix F.7, Table 18).

    The paper iterates on the empirical kernels of twelve *logged* configurations, which the
    registry does not hold; these are seeded synthetic kernels of the same shape, so this is the
    implementation check of Table 18 (modulus, uniqueness, pseudometric), not its numbers.
    """
    del raw  # synthetic: no registry input
    return {
        "theory_controllability_checks": controllability_tables(),
        "theory_controllability_provenance": controllability_provenance(),
    }
