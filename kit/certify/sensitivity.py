"""Module sensitivity L_M from paired runs ("What Can a Leaderboard Certify?", Appendix F.1).

Each paired run gives ``x`` = the entry mismatch of one run to the other (or to the common entry
mu) and ``y`` = the distance between the two runs' exits. The window's macro-kernel is
L_M-Lipschitz on the reached inputs (Section 3.2, Assumption 1 of Appendix A.2) when
``y <= L_M x + xi``; the estimators below fit that envelope:

* ``ratio_q95``  -- the 95th percentile of y/x over the runs with x > 1e-6 (the paper's selected
  design, Table 11: L_M = 0.890, xi = 0). A high-probability envelope, not a worst-case bound.
* ``ratio_sup``  -- the supremum of y/x over the same runs (Table 11: 0.967).
* ``affine``     -- an affine envelope y <= a x + b: slope a plus slack b (Table 11: 0.803 /
  0.085). The paper names the design ("envelope, slope + slack", "affine at q95") but not the
  fitting rule. The kit's rule is linear quantile regression at level q (0.95): (a, b) minimise
  the pinball loss sum_i rho_q(y_i - a x_i - b) subject to a >= 0, b >= 0, solved exactly as a
  linear programme (HiGHS). At the optimum at most a fraction 1 - q of the fitting runs lie
  strictly above the envelope. This is a kit choice, documented as such.

Percentiles use numpy's default (linear interpolation, Hyndman-Fan type 7). Runs with x <= 1e-6
carry no ratio; they are excluded from the ratio fits (and counted), but they are kept for the
affine fit and for coverage, where a ratio design covers them only if y <= 0 (+ xi).

Transfer (Table 12a): the constant fitted on all other systems is evaluated on the held-out
system's runs; coverage = fraction of held-out runs with y <= L_M x + xi (+ 1e-12). A run
*expands* when y > x (Corollary 1's hypothesis L_M <= 1 fails on it; Table 12b).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from kit.core.errors import ConfigError, check_param

X_MIN = 1e-6
DESIGNS = ("ratio_q95", "ratio_sup", "affine")
_COVER_TOL = 1e-12


@dataclass(frozen=True)
class SensitivityFit:
    """One fitted envelope y <= L_M x + xi."""

    design: str
    L_M: float
    xi: float
    n: int  # runs given
    n_used: int  # runs the estimator used (x > 1e-6 for the ratio designs)


def _check_xy(x: np.ndarray, y: np.ndarray, func: str) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ConfigError("bad_parameter", f"{func}: x and y must be 1-D arrays of equal length")
    ok = bool(
        np.all(np.isfinite(x)) and np.all(np.isfinite(y)) and np.all(x >= 0) and np.all(y >= 0)
    )
    check_param("x, y", "non-finite or negative values", ok, "finite and >= 0", func)
    return x, y


def _ratios(x: np.ndarray, y: np.ndarray, func: str) -> np.ndarray:
    keep = x > X_MIN
    if not keep.any():
        raise ConfigError(
            "no_ratio",
            f"{func}: no run has entry mismatch x > {X_MIN:g}; a ratio estimator is undefined",
        )
    return y[keep] / x[keep]


def ratio_q95(x: np.ndarray, y: np.ndarray, q: float = 0.95) -> SensitivityFit:
    """Appendix F.1's selected estimator: the q-quantile (default 0.95) of y/x over x > 1e-6."""
    check_param("q", q, 0 < q <= 1, "in (0, 1]", "ratio_q95")
    x, y = _check_xy(x, y, "ratio_q95")
    r = _ratios(x, y, "ratio_q95")
    return SensitivityFit("ratio_q95", float(np.quantile(r, q)), 0.0, int(x.size), int(r.size))


def ratio_sup(x: np.ndarray, y: np.ndarray) -> SensitivityFit:
    """Table 11's supremum form: max of y/x over x > 1e-6."""
    x, y = _check_xy(x, y, "ratio_sup")
    r = _ratios(x, y, "ratio_sup")
    return SensitivityFit("ratio_sup", float(np.max(r)), 0.0, int(x.size), int(r.size))


def affine_envelope(x: np.ndarray, y: np.ndarray, q: float = 0.95) -> SensitivityFit:
    """Affine envelope y <= a x + b by quantile regression at level q with a, b >= 0.

    Primal LP: minimise sum_i [q u_i + (1 - q) v_i] over a, b, u, v >= 0 with
    a x_i + b + u_i - v_i = y_i (u: the part above the envelope, v: below). Solved through its
    dual, maximise y.w subject to q - 1 <= w_i <= q, x.w <= 0, 1.w <= 0, whose two constraint
    multipliers are (-a, -b). Deterministic (HiGHS dual simplex on the same input); see the
    module docstring for why this rule.
    """
    check_param("q", q, 0 < q < 1, "in (0, 1)", "affine_envelope")
    x, y = _check_xy(x, y, "affine_envelope")
    n = x.size
    if n == 0:
        raise ConfigError("no_runs", "affine_envelope: no runs to fit")
    res = linprog(
        -y,
        A_ub=np.vstack([x, np.ones(n)]),
        b_ub=np.zeros(2),
        bounds=(q - 1.0, q),
        method="highs-ds",
    )
    if res.status != 0:  # pragma: no cover - the dual is always feasible (w = 0) and bounded
        raise ConfigError("lp_failed", f"affine_envelope: linear programme failed: {res.message}")
    slope, slack = (max(0.0, -float(v)) for v in res.ineqlin.marginals)
    return SensitivityFit("affine", slope, slack, int(n), int(n))


def fit(design: str, x: np.ndarray, y: np.ndarray, q: float = 0.95) -> SensitivityFit:
    """Dispatch to one of :data:`DESIGNS`."""
    if design == "ratio_q95":
        return ratio_q95(x, y, q)
    if design == "ratio_sup":
        return ratio_sup(x, y)
    if design == "affine":
        return affine_envelope(x, y, q)
    raise ConfigError(
        "bad_parameter", f"unknown L_M design {design!r} (known: {', '.join(DESIGNS)})"
    )


def coverage(f: SensitivityFit, x: np.ndarray, y: np.ndarray) -> float:
    """Fraction of runs inside the envelope: y <= L_M x + xi (NaN-free; undefined for no runs)."""
    x, y = _check_xy(x, y, "coverage")
    if x.size == 0:
        raise ConfigError("no_runs", "coverage: no runs to evaluate")
    return float(np.mean(y <= f.L_M * x + f.xi + _COVER_TOL))


def n_expanding(x: np.ndarray, y: np.ndarray) -> int:
    """Runs whose exit moves further than their entry, y > x (Table 12b)."""
    x, y = _check_xy(x, y, "n_expanding")
    return int(np.sum(y > x + _COVER_TOL))


@dataclass(frozen=True)
class SensitivityRow:
    """One row of the L_M report (schema ``theory_lm``). NaN constants carry a verdict."""

    design: str
    scope: str  # pooled | per_system | leave_one_out
    system: str  # "" for pooled; the system (per_system) or the held-out system
    n_fit: int
    n_used: int
    L_M: float
    xi: float
    n_eval: int
    coverage: float  # in-sample (pooled, per_system) or held-out (leave_one_out)
    n_expanding: int  # among the evaluated runs
    verdict: str  # "ok" | "undefined_no_ratio" (no fitting run with x > 1e-6)


def _row(
    design: str, scope: str, system: str, xf: np.ndarray, yf: np.ndarray,
    xe: np.ndarray, ye: np.ndarray, q: float,
) -> SensitivityRow:  # fmt: skip
    """Fit on (xf, yf), evaluate on (xe, ye); an undefined ratio fit is a verdict, not a number."""
    try:
        f = fit(design, xf, yf, q)
    except ConfigError as err:
        if err.reason != "no_ratio":
            raise
        return SensitivityRow(
            design, scope, system, int(xf.size), 0, math.nan, math.nan, int(xe.size),
            math.nan, n_expanding(xe, ye), "undefined_no_ratio",
        )  # fmt: skip
    return SensitivityRow(
        design, scope, system, f.n, f.n_used, f.L_M, f.xi, int(xe.size),
        coverage(f, xe, ye), n_expanding(xe, ye), "ok",
    )  # fmt: skip


def sensitivity_report(
    systems: Sequence[str],
    x: np.ndarray,
    y: np.ndarray,
    designs: Sequence[str] = DESIGNS,
    q: float = 0.95,
) -> list[SensitivityRow]:
    """Pooled, per-system and leave-one-system-out fits for every design (Tables 11, 12).

    An undefined pooled fit (no run with x > 1e-6 for a ratio design) raises ConfigError. A
    per-system or leave-one-out fit that is undefined -- e.g. a reference-fed system that sits
    at x = 0 (Appendix F.2) -- is a row with NaN constants and verdict ``undefined_no_ratio``;
    an undefined constant is never reported as a number.
    """
    x, y = _check_xy(x, y, "sensitivity_report")
    sys_arr = np.asarray(list(systems), dtype=object)
    if sys_arr.shape != x.shape:
        raise ConfigError("bad_parameter", "sensitivity_report: one system label per run")
    names = sorted(set(sys_arr.tolist()))
    rows: list[SensitivityRow] = []
    for design in designs:
        fit(design, x, y, q)  # raises when the pooled fit is undefined
        rows.append(_row(design, "pooled", "", x, y, x, y, q))
        for s in names:
            m = sys_arr == s
            rows.append(_row(design, "per_system", s, x[m], y[m], x[m], y[m], q))
        if len(names) >= 2:
            for s in names:
                m = sys_arr == s
                rows.append(_row(design, "leave_one_out", s, x[~m], y[~m], x[m], y[m], q))
    return rows
