"""Module sensitivity L_M (Appendix F.1) against brute force, an independent LP, and Theorem 1."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from kit.certify import sensitivity as S
from kit.certify.nuisance import SystemNuisance, nuisance_radius
from kit.core.errors import ConfigError


def _runs(rng: np.random.Generator, n: int = 80) -> tuple[np.ndarray, np.ndarray]:
    x = rng.uniform(0.7, 1.0, n)
    return x, np.clip(0.85 * x + rng.normal(0, 0.05, n), 0, None)


def test_ratio_estimators_match_brute_force() -> None:
    rng = np.random.default_rng(1)
    x, y = _runs(rng)
    x[:3] = [0.0, 1e-7, 1e-6]  # excluded from the ratios (x <= 1e-6)
    keep = x > 1e-6
    r = y[keep] / x[keep]
    srt = np.sort(r)
    pos = 0.95 * (r.size - 1)  # Hyndman-Fan type 7 by hand
    lo = int(np.floor(pos))
    manual = srt[lo] + (pos - lo) * (srt[lo + 1] - srt[lo])
    f = S.ratio_q95(x, y)
    assert f.L_M == pytest.approx(manual, abs=1e-14)
    assert f.n_used == r.size == x.size - 3
    assert S.ratio_sup(x, y).L_M == pytest.approx(r.max(), abs=1e-15)


def test_affine_envelope_is_the_pinball_optimum() -> None:
    rng = np.random.default_rng(2)
    for _ in range(10):
        x, y = _runs(rng, int(rng.integers(5, 60)))
        f = S.affine_envelope(x, y)
        n, q = x.size, 0.95
        c = np.concatenate([[0.0, 0.0], np.full(n, q), np.full(n, 1 - q)])
        a_eq = np.hstack([x[:, None], np.ones((n, 1)), np.eye(n), -np.eye(n)])
        primal = linprog(c, A_eq=a_eq, b_eq=y, bounds=(0, None), method="highs")
        res = y - f.L_M * x - f.xi
        loss = np.sum(np.where(res > 0, q * res, (q - 1) * res))
        assert loss == pytest.approx(primal.fun, abs=1e-9)
        assert f.L_M >= 0 and f.xi >= 0
        # at the optimum at most a fraction 1 - q of the runs lie strictly above
        assert np.mean(res > 1e-9) <= 1 - q + 1e-12


def test_affine_recovers_an_exact_line() -> None:
    x = np.linspace(0.1, 1.0, 30)
    f = S.affine_envelope(x, 0.6 * x + 0.1)
    assert (f.L_M, f.xi) == (pytest.approx(0.6, abs=1e-9), pytest.approx(0.1, abs=1e-9))
    assert S.coverage(f, x, 0.6 * x + 0.1) == 1.0


def test_report_transfer_and_expanding_runs() -> None:
    rng = np.random.default_rng(3)
    systems, xs, ys = [], [], []
    for s, slope in (("A", 0.8), ("B", 0.85), ("C", 0.9)):
        x = rng.uniform(0.7, 1.0, 30)
        systems += [s] * 30
        xs.append(x)
        ys.append(slope * x * rng.uniform(0.9, 1.0, 30))
    systems += ["D"] * 2
    xs.append(np.array([0.5, 0.5]))
    ys.append(np.array([0.6, 0.1]))  # one expanding run
    x, y = np.concatenate(xs), np.concatenate(ys)
    rows = S.sensitivity_report(systems, x, y)
    by = {(r.design, r.scope, r.system): r for r in rows}
    assert by[("ratio_sup", "pooled", "")].n_expanding == 1
    assert by[("ratio_sup", "pooled", "")].coverage == 1.0  # sup covers every fitted run
    loo = by[("ratio_q95", "leave_one_out", "C")]
    other = [s != "C" for s in systems]
    assert loo.L_M == pytest.approx(S.ratio_q95(x[other], y[other]).L_M)
    c = np.array([s == "C" for s in systems])
    assert loo.coverage == pytest.approx(np.mean(y[c] <= loo.L_M * x[c] + 1e-12))
    assert loo.n_eval == 30
    assert {r.scope for r in rows} == {"pooled", "per_system", "leave_one_out"}


def test_undefined_ratio_is_an_error_not_zero() -> None:
    with pytest.raises(ConfigError, match="undefined"):
        S.ratio_q95(np.zeros(3), np.ones(3))
    with pytest.raises(ConfigError):
        S.ratio_q95(np.array([1.0, -1.0]), np.array([1.0, 1.0]))
    with pytest.raises(ConfigError):
        S.fit("median", np.ones(2), np.ones(2))


def test_motivating_example_through_estimated_L_M() -> None:
    """Section 3.1: f_A = 0.8 e, f_B = 0.5 e; entries 0.2 / 0.4, common e = 0.5."""
    grid = np.linspace(0, 1, 11)
    i, j = np.triu_indices(11, k=1)
    x = grid[j] - grid[i]
    lm_a = S.ratio_q95(x, 0.8 * x).L_M
    lm_b = S.ratio_sup(x, 0.5 * x).L_M
    assert (lm_a, lm_b) == (pytest.approx(0.8), pytest.approx(0.5))
    observed = 0.8 * 0.2 - 0.5 * 0.4
    controlled = 0.8 * 0.5 - 0.5 * 0.5
    radius = nuisance_radius(
        SystemNuisance(L_M=lm_a, eps_in=0.3), SystemNuisance(L_M=lm_b, eps_in=0.1)
    )
    assert observed == pytest.approx(-0.04)
    assert controlled == pytest.approx(0.15)
    assert radius == pytest.approx(0.29)
    assert abs(observed - controlled) <= radius  # Theorem 1 covers the 0.19 discrepancy


def test_system_at_zero_mismatch_is_an_explicit_verdict() -> None:
    """A reference-fed system sits at x = 0 (Appendix F.2): its ratio fit is undefined."""
    x = np.array([0.8, 0.9, 1.0, 0.0, 0.0])
    y = np.array([0.7, 0.8, 0.85, 0.1, 0.2])
    rows = S.sensitivity_report(["A", "A", "A", "L", "L"], x, y, designs=("ratio_q95", "affine"))
    by = {(r.design, r.scope, r.system): r for r in rows}
    und = by[("ratio_q95", "per_system", "L")]
    assert und.verdict == "undefined_no_ratio" and np.isnan(und.L_M) and np.isnan(und.coverage)
    held = by[("ratio_q95", "leave_one_out", "L")]  # fitted on A, evaluated on L's x = 0 runs
    assert held.verdict == "ok" and held.coverage == 0.0
    assert by[("affine", "per_system", "L")].verdict == "ok"  # the slack term covers x = 0
