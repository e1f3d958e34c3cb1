"""0 * inf across Theorem 1, Theorem 2 (both forms), Corollaries 2-3 and Theorem 3.

The paper's rule (seed 000, proof of Theorem 1 Step 3; proof of Theorem 2; Assumption 3): a
zero distance means identical laws, so the term is 0 whatever constant multiplies it; a zero
constant means a map that forgets its input, so the term is 0 whatever the input distance.
Otherwise an infinite factor gives an infinite (vacuous) bound, never NaN. The references below
apply that rule case by case to the paper's printed formulas, independently of
kit.certify.extended_reals.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kit.certify import composition as C
from kit.certify.extended_reals import prod, times
from kit.certify.nuisance import SystemNuisance, largest_admissible_L_M, nuisance_radius
from kit.cli import cli
from kit.core.errors import ConfigError

INF = math.inf


def ref_product(factors: list[float]) -> float:
    """A product term of the paper: 0 if a factor is 0, else inf if a factor is inf, else the
    ordinary product."""
    if any(f == 0 for f in factors):
        return 0.0
    if any(f == INF for f in factors):
        return INF
    return float(np.prod(factors)) if factors else 1.0


def ref_eq12(eps0: float, L: list[float], eps: list[float], xi: list[float], m: int) -> float:
    """Eq. (12) at m, written term by term."""
    total = ref_product([eps0, *L[:m]])
    for k in range(1, m + 1):
        total += ref_product([eps[k - 1] + xi[k - 1], *L[k:m]])
    return total


def test_times_is_the_extended_product() -> None:
    assert times(0.0, INF) == 0.0 and times(INF, 0.0) == 0.0
    assert times(INF, 2.0) == INF and times(INF, INF) == INF
    assert times() == 1.0 and prod([]) == 1.0 and prod([2.0, 3.0]) == 6.0
    assert prod([INF, 0.0, 5.0]) == 0.0
    for bad in (math.nan, -1.0):
        with pytest.raises(ConfigError):
            times(1.0, bad)


# --- Theorem 1, Eq. (3) -----------------------------------------------------------------------


def ref_eq3(a: SystemNuisance, b: SystemNuisance, L_s: float, L_C: float, prot: float) -> float:
    """Eq. (3) with Step 3: a system with eps_in = 0 contributes 0 (no L_M, no xi)."""

    def entry(x: SystemNuisance) -> float:
        return 0.0 if x.eps_in == 0 else ref_product([x.L_M, x.eps_in]) + x.xi

    inner = ref_product([L_C, entry(a) + entry(b)]) + a.eps_cont + b.eps_cont
    return ref_product([L_s, inner]) + prot


def test_theorem1_infinite_L_M_with_matched_entry_charges_nothing() -> None:
    """Step 3: mu_X = mu gives an entry term of 0 with no appeal to L_MX or xi_MX."""
    a = SystemNuisance(L_M=INF, eps_in=0.0, xi=0.3)
    b = SystemNuisance(L_M=INF, eps_in=0.0, xi=0.2)
    assert nuisance_radius(a, b, eps_protocol=0.01) == 0.01
    # "When terms vanish": matched entries and channels leave only the protocol term, however
    # large L_C and L_s are.
    assert nuisance_radius(a, b, L_s=INF, L_C=INF, eps_protocol=0.01) == 0.01
    # one unmatched system with an unbounded window: no finite radius
    assert nuisance_radius(SystemNuisance(L_M=INF, eps_in=0.1), b) == INF


def test_theorem1_zero_constants_forget_infinite_mismatch() -> None:
    # L_M = 0: the window's exit law does not depend on its entry; only the slack remains
    a = SystemNuisance(L_M=0.0, eps_in=INF, xi=0.05)
    b = SystemNuisance(L_M=0.5, eps_in=0.1)
    assert nuisance_radius(a, b) == pytest.approx(0.05 + 0.05)
    # L_C = 0 (a constant channel) and L_s = 0 (a constant score) remove the entry term
    c = SystemNuisance(L_M=INF, eps_in=INF, eps_cont=0.02)
    assert nuisance_radius(c, b, L_C=0.0) == pytest.approx(0.02)
    assert nuisance_radius(c, c, L_s=0.0, eps_protocol=0.03) == pytest.approx(0.03)
    # L_s = inf: only an all-zero bracket survives
    assert nuisance_radius(SystemNuisance(), SystemNuisance(), L_s=INF) == 0.0
    assert nuisance_radius(SystemNuisance(eps_cont=0.01), SystemNuisance(), L_s=INF) == INF


def test_theorem1_matches_eq3_on_every_edge_combination() -> None:
    vals = (0.0, 0.4, INF)
    for L_M, eps_in, L_C, L_s in itertools.product(vals, repeat=4):
        a = SystemNuisance(L_M=L_M, eps_in=eps_in, xi=0.05, eps_cont=0.01)
        b = SystemNuisance(L_M=0.7, eps_in=0.2)
        got = nuisance_radius(a, b, L_s=L_s, L_C=L_C, eps_protocol=0.002)
        assert not math.isnan(got)
        assert got == pytest.approx(ref_eq3(a, b, L_s, L_C, 0.002)), (L_M, eps_in, L_C, L_s)


def test_largest_admissible_L_M_edges() -> None:
    assert largest_admissible_L_M(0.2, 0.0, 0.0) == INF  # matched entries: any L_M
    assert largest_admissible_L_M(0.2, INF, 0.1) == 0.0
    assert largest_admissible_L_M(0.2, INF, 0.1, L_s=0.0) == INF  # constant score: any L_M


# --- Theorem 2 (Eqs. (12), (13)), Corollary 2, Theorem 3 ----------------------------------------


def test_theorem2_hand_cases() -> None:
    # L = [0, inf]: stage 1 forgets eps0; stage 2 multiplies a zero bound (identical laws)
    assert C.composed_bound(0.05, [0, INF], [0, 0.05]).tolist() == [0.05, 0.0, 0.05]
    assert C.unrolled_bound(0.05, [0, INF], [0, 0.05]).tolist() == [0.05, 0.0, 0.05]
    # an unbounded stage carrying a nonzero bound is vacuous; a later L = 0 stage resets it
    assert C.composed_bound(1.0, [INF, 0], [0.1, 0.2]).tolist() == [1.0, INF, 0.2]
    assert C.unrolled_bound(1.0, [INF, 0], [0.1, 0.2]).tolist() == [1.0, INF, 0.2]
    # eps0 = inf (nothing known about the entry) is forgotten only by an L = 0 stage
    assert C.composed_bound(INF, [0.5, 0], [0.1, 0.1]).tolist() == [INF, INF, 0.1]
    with pytest.raises(ConfigError):
        C.composed_bound(math.nan, [1.0], [0.1])


def test_theorem2_both_forms_match_eq12_on_every_edge_combination() -> None:
    vals = (0.0, 1.5, INF)
    for eps0, *rest in itertools.product((0.0, 0.2, INF), *([vals] * 6)):
        L, eps = list(rest[:3]), list(rest[3:])
        xi = [0.0, 0.01, 0.0]
        rec = C.composed_bound(eps0, L, eps, xi)
        unr = C.unrolled_bound(eps0, L, eps, xi)
        ref = [eps0] + [ref_eq12(eps0, L, eps, xi, m) for m in range(1, 4)]
        assert not np.isnan(rec).any() and not np.isnan(unr).any()
        assert rec.tolist() == pytest.approx(ref), (eps0, L, eps)
        assert unr.tolist() == pytest.approx(ref), (eps0, L, eps)


def test_corollary2_with_zero_and_infinite_constants() -> None:
    """Errors add when L_k <= 1 (L_k = 0 included); an infinite error makes the sum inf."""
    for eps0, L1, L2, e1, e2 in itertools.product((0.0, 0.3, INF), (0.0, 1.0), (0.0, 1.0),
                                                  (0.0, 0.1, INF), (0.0, INF)):  # fmt: skip
        add = C.additive_bound(eps0, [e1, e2])
        assert add[-1] == (eps0 + e1 + e2)
        assert C.is_nonexpansive([L1, L2])
        # Corollary 2 follows from Theorem 2 for non-expansive stages: never tighter
        assert C.composed_bound(eps0, [L1, L2], [e1, e2])[-1] <= add[-1]
    rows = C.stage_bounds(0.1, [0.5, INF], [0.1, 0.1])
    assert rows[1].additive_bound == pytest.approx(0.2) and math.isnan(rows[2].additive_bound)


def ref_eq14(eps_prev: float, L: list[float], eps: list[float], xi: list[float], i: int, j: int):
    """Eq. (14) as printed: L_{j+1:K}[eps_{i-1} prod L + sum (eps+xi) prod L] + sum xi prod L."""
    K = len(L)
    inner = ref_product([eps_prev, *L[i - 1 : j]])
    inner += sum(ref_product([eps[k - 1] + xi[k - 1], *L[k:j]]) for k in range(i, j + 1))
    tail = sum(ref_product([xi[k - 1], *L[k:K]]) for k in range(j + 1, K + 1))
    return ref_product([*L[j:K], inner]) + tail


def test_corollary3_with_zero_and_infinite_constants() -> None:
    # an L = 0 downstream stage forgets the window; an inf one after it multiplies its slack
    assert C.window_bound(0.1, [2, 0, INF], [0.1, 5, 7], [0, 0.01, 0], 1, 1) == INF
    assert C.window_bound(0.1, [2, 0, INF], [0.1, 5, 7], [0, 0, 0], 1, 1) == 0.0
    vals = (0.0, 0.5, INF)
    for eps_prev, L1, L2, L3, e2, x3 in itertools.product((0.0, 0.1, INF), *([vals] * 5)):
        L, eps, xi = [L1, L2, L3], [0.3, e2, 0.4], [0.0, 0.02, x3]
        got = C.window_bound(eps_prev, L, eps, xi, 2, 2)
        assert got == pytest.approx(ref_eq14(eps_prev, L, eps, xi, 2, 2)), (eps_prev, L, e2, x3)


def test_theorem3_with_zero_and_infinite_constants() -> None:
    assert C.utility_bound(0.0, INF, [INF], [INF]) == 0.0  # a constant utility
    assert C.utility_bound(INF, 0.0, [INF], [0.0]) == 0.0  # identical terminal laws
    assert C.utility_bound(INF, 0.1, [1.0], [0.0]) == INF
    assert C.utility_bound(2.0, 0.05, [0, INF], [0, 0.05]) == pytest.approx(0.1)
    assert C.utility_bound(3.0, 0.2, [], []) == pytest.approx(0.6)  # K = 0: L_U eps_0


# --- the CLI prints what the library computes -----------------------------------------------------


def test_compose_cli_zero_and_infinite_constants(tmp_path: Path) -> None:
    stages = tmp_path / "stages.csv"
    stages.write_text("stage,L,eps\n1,0,0\n2,inf,0.05\n")
    res = CliRunner().invoke(
        cli, ["theory", "compose", str(stages), "--eps0", "0.05", "--format", "csv"]
    )
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[-1].split(",")[5:] == ["0.05", "0.05", "", "0.05"]
    # eps0 = inf is a valid input (W_0 unbounded): printed as inf, flagged as vacuous
    res = CliRunner().invoke(
        cli, ["theory", "compose", str(stages), "--eps0", "inf", "--L-U", "0", "--format", "csv"]
    )
    assert res.exit_code == 0, res.output
    assert "vacuous" in res.stderr and "stage(s) 0" in res.stderr
    first = res.stdout.splitlines()[1].split(",")
    assert first[5] == "inf" and first[-1] == "0"  # L_U = 0: a constant utility, not NaN
    assert res.stdout.splitlines()[-1].split(",")[5] == "0.05"  # stage 1 forgot the entry
    for bad in (["--eps0", "nan"], ["--eps0", "-1"], ["--eps0", "0.1", "--L-U", "nan"]):
        res = CliRunner().invoke(cli, ["theory", "compose", str(stages), *bad])
        assert res.exit_code == 2 and "Traceback" not in res.output
