"""The split-conformal flag rule: exact QASA reproduction, refusal, and the guarantee by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kit.core.errors import ConfigError
from kit.guard.conformal import rule as conformal
from kit.guard.conformal.calibration import load_calibration
from kit.reproductions import guard as repro


def test_rank_matches_formula_and_guards_float_rounding() -> None:
    assert conformal.conformal_rank(500, 0.1) == 451
    assert conformal.conformal_rank(25, 0.1) == 24
    # (24 + 1) * (1 - 0.44) = 14.000000000000002 in binary floating point: must be 14, not 15
    assert (25 * (1 - 0.44)) > 14
    assert conformal.conformal_rank(24, 0.44) == 14
    for n in (1, 7, 19, 50):
        for a in (0.05, 0.1, 0.33):
            assert conformal.conformal_rank(n, a) == math.ceil(round((n + 1) * (1 - a), 9))


def test_tau_is_kth_order_statistic_and_flag_is_inclusive() -> None:
    s = np.array([0.5, 0.1, 0.3, 0.2, 0.4, 0.9, 0.8, 0.7, 0.6])  # n = 9
    t = conformal.conformal_tau(s, 0.2)  # k = ceil(10 * 0.8) = 8
    assert t.k == 8 and t.tau == pytest.approx(0.8)
    assert t.cal_recall == pytest.approx(8 / 9)
    assert conformal.flag([0.8, 0.80001], t.tau).tolist() == [True, False]


def test_ties_counted_conservatively() -> None:
    s = np.array([0.2, 0.2, 0.2, 0.2, 0.9])
    t = conformal.conformal_tau(s, 0.4)  # k = ceil(6 * 0.6) = 4
    assert t.tau == 0.2 and t.cal_recall == pytest.approx(0.8)


def test_refuses_when_k_exceeds_n() -> None:
    with pytest.raises(ConfigError) as exc:
        conformal.conformal_tau(np.linspace(0, 1, 9), 0.05)  # k = ceil(10 * .95) = 10 > 9
    assert exc.value.reason == "too_little_calibration"
    with pytest.raises(ConfigError):
        conformal.conformal_tau([], 0.1)
    with pytest.raises(ConfigError):
        conformal.conformal_tau([0.1, float("nan")], 0.5)
    with pytest.raises(ConfigError):
        conformal.conformal_rank(10, 1.0)


def test_qasa_published_tau_curve_reproduces_exactly(registry_raw) -> None:
    tables = repro.qasa_tau_curve(registry_raw)
    curve = tables["guard_qasa_tau_curve"]
    assert len(curve) == 25
    assert curve["delta_tau"].abs().max() == 0.0
    assert curve["delta_cal_recall"].abs().max() < 1e-12
    cal = load_calibration("qasa", registry_raw)
    assert cal.unsupported.size == 500 and cal.supported is not None


def _continuous_catch(
    n_cal: int, alpha: float, reps: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Mean held-out catch of conformal and naive thresholds on fresh exchangeable draws."""
    k = conformal.conformal_rank(n_cal, alpha)
    cal = np.sort(rng.beta(2, 5, size=(reps, n_cal)), axis=1)
    test = rng.beta(2, 5, size=(reps, 400))
    tau_c = cal[:, k - 1]
    tau_n = np.quantile(cal, 1 - alpha, axis=1)
    return float(np.mean(test <= tau_c[:, None])), float(np.mean(test <= tau_n[:, None]))


def test_guarantee_by_simulation_small_n_fast() -> None:
    """At n_cal = 25 the finite-sample correction matters: conformal >= 0.90, naive < 0.90."""
    rng = np.random.default_rng(0)
    conf, naive = _continuous_catch(25, 0.1, 4000, rng)
    # exact expectation k/(n+1) = 24/26 = 0.923; Monte Carlo SE ~ 0.0008
    assert conf == pytest.approx(24 / 26, abs=0.004)
    assert conf >= 0.9
    assert naive < 0.89  # linear-interpolated quantile sits below s_(23): ~ 0.88


@pytest.mark.slow
@pytest.mark.parametrize("n_cal", [25, 50, 100, 200, 500])
@pytest.mark.parametrize("alpha", [0.02, 0.05, 0.1, 0.2])
def test_guarantee_by_simulation_grid(n_cal: int, alpha: float) -> None:
    k = conformal.conformal_rank(n_cal, alpha)
    if k > n_cal:
        with pytest.raises(ConfigError):
            conformal.conformal_tau(np.zeros(n_cal), alpha)
        return
    conf, _ = _continuous_catch(
        n_cal, alpha, 4000, np.random.default_rng([n_cal, int(alpha * 100)])
    )
    assert conf >= 1 - alpha - 0.003
    assert conf == pytest.approx(k / (n_cal + 1), abs=0.004)


def test_split_coverage_on_qasa_tracks_target(registry_raw) -> None:
    cal = load_calibration("qasa", registry_raw)
    r = conformal.split_coverage(cal.unsupported, 0.1, 25, 1000, np.random.default_rng(0), 200)
    assert r.conformal_catch >= 0.9
    assert r.naive_catch < r.conformal_catch - 0.03
    assert 0 < r.frac_splits_below_target < 1


def test_catch_rate_transfer() -> None:
    easy = np.linspace(0, 0.4, 101)
    hard = np.linspace(0.3, 0.9, 101)
    t = conformal.conformal_tau(easy, 0.1)
    assert conformal.catch_rate(easy, t.tau) >= 0.9
    assert conformal.catch_rate(hard, t.tau) < 0.2
