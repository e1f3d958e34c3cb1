"""kit.stats.ppi against ppi-python (github.com/aangelopoulos/ppi_py 0.2.3, the reference
implementation of both PPI papers), to 1e-6: PPI++ (``lam=None``), PPI (``lam=1``), the classical
interval (gold-only, judge-only), sample weights, and `kit anchor`'s artifact end to end.

ppi-python is not a dependency of the kit, not even a dev one: its wheel installs a top-level
``tests`` package into site-packages, which shadows this repository's ``tests`` (``from
tests.spine... import`` then fails). So its outputs on the cases below are frozen in
``ppi_python_reference.json`` (with the sha256 of each case's inputs) by
``make_ppi_reference.py``, and every test here compares with them; where ppi_py is importable
the same comparisons also run live (``test_live_*``).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from ppi_reference_helpers import _triple, inputs_sha256

from kit.cli import cli
from kit.stats.ppi import classical_mean, plan_gold_size, ppi_half_widths, ppi_lambda, ppi_mean

TOL = 1e-6
REFERENCE = Path(__file__).with_name("ppi_python_reference.json")


def _data(seed: int, n: int, big_n: int, quality: float, binary: bool, rate: float = 0.3):
    """SYNTHETIC: gold Y ~ Bernoulli(rate); a judge biased upwards by 0.15 whose dependence on
    Y is ``quality`` (0: useless, 1: Y + bias, < 0: against gold); 0/1 judges threshold at 0.5."""
    rng = np.random.default_rng(seed)
    y_all = (rng.random(n + big_n) < rate).astype(float)
    raw = quality * y_all + (1 - quality) * rng.random(n + big_n) * 0.8 + 0.15
    raw = raw + rng.normal(0.0, 0.1, n + big_n)
    f_all = (raw >= 0.5).astype(float) if binary else np.clip(raw, 0.0, 1.0)
    return y_all[:n], f_all[:n], f_all[n:]


def _weights(seed: int, n: int, big_n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1000 + seed)
    return rng.uniform(0.5, 3.0, n), rng.uniform(0.5, 3.0, big_n)


CASES = [
    (seed, n, big_n, q, binary, alpha)
    for seed, (n, big_n, q, binary, alpha) in enumerate(
        [
            (50, 500, -0.4, False, 0.05),  # judge against gold: lambda clipped at 0
            (50, 500, 0.3, False, 0.05),  # a weak judge: lambda strictly inside (0, 1)
            (100, 1000, 0.6, False, 0.1),
            (200, 400, 0.9, False, 0.05),  # a good judge: lambda clipped at 1
            (80, 2000, 0.5, True, 0.05),  # 0/1 judge
            (30, 100, 0.8, True, 0.2),
            (12, 40, 0.4, False, 0.01),
        ]
    )
]
CASE_ARGS = ("seed", "n", "big_n", "q", "binary", "alpha")


def reference(ppi: ModuleType, case: tuple) -> dict[str, Any]:
    """ppi-python's numbers on one case (the frozen file holds this for every case)."""
    seed, n, big_n, q, binary, alpha = case
    y, fg, fu = _data(seed, n, big_n, q, binary)
    w, wu = _weights(seed, n, big_n)
    f_all = np.concatenate([fg, fu])
    out: dict[str, Any] = {"inputs_sha256": inputs_sha256(y, fg, fu, w, wu)}
    for key, lam in (("ppi_plus_plus", None), ("ppi", 1.0)):
        out[key] = _triple(
            ppi.ppi_mean_pointestimate(y, fg, fu, lam=lam),
            ppi.ppi_mean_ci(y, fg, fu, alpha=alpha, lam=lam),
        )
        out[key + "_weighted"] = _triple(
            ppi.ppi_mean_pointestimate(y, fg, fu, lam=lam, w=w, w_unlabeled=wu),
            ppi.ppi_mean_ci(y, fg, fu, alpha=alpha, lam=lam, w=w, w_unlabeled=wu),
        )
    out["classical_gold"] = _triple(y.mean(), ppi.classical_mean_ci(y, alpha=alpha))
    out["classical_judge"] = _triple(f_all.mean(), ppi.classical_mean_ci(f_all, alpha=alpha))
    out["classical_gold_weighted"] = _triple(
        (w / w.sum() * n * y).mean(), ppi.classical_mean_ci(y, w=w, alpha=alpha)
    )
    return out


def ours(case: tuple) -> dict[str, Any]:
    """The kit's numbers on one case, keyed as :func:`reference`."""
    seed, n, big_n, q, binary, alpha = case
    y, fg, fu = _data(seed, n, big_n, q, binary)
    w, wu = _weights(seed, n, big_n)
    f_all = np.concatenate([fg, fu])

    def t(e: Any) -> list[float]:
        return [e.estimate, e.ci_low, e.ci_high]

    return {
        "inputs_sha256": inputs_sha256(y, fg, fu, w, wu),
        "ppi_plus_plus": t(ppi_mean(y, fg, fu, alpha)),
        "ppi": t(ppi_mean(y, fg, fu, alpha, lam=1.0)),
        "ppi_plus_plus_weighted": t(ppi_mean(y, fg, fu, alpha, None, w, wu)),
        "ppi_weighted": t(ppi_mean(y, fg, fu, alpha, 1.0, w, wu)),
        "classical_gold": t(classical_mean(y, alpha)),
        "classical_judge": t(classical_mean(f_all, alpha)),
        "classical_gold_weighted": t(classical_mean(y, alpha, w)),
    }


def _frozen() -> dict[str, Any]:
    return json.loads(REFERENCE.read_text())


def _compare(got: dict[str, Any], want: dict[str, Any], case: tuple) -> None:
    assert got["inputs_sha256"] == want["inputs_sha256"], (
        f"case {case}: the synthetic inputs differ from those the reference was made on "
        "(numpy's generator changed?): rerun tests/anchor/make_ppi_reference.py with ppi-python"
    )
    keys = sorted(k for k in want if k != "inputs_sha256")
    assert keys == sorted(k for k in got if k != "inputs_sha256")
    for key in keys:
        assert got[key] == pytest.approx(want[key], abs=TOL), (case, key)


@pytest.mark.parametrize(CASE_ARGS, CASES)
def test_equals_frozen_ppi_python(seed, n, big_n, q, binary, alpha) -> None:
    case = (seed, n, big_n, q, binary, alpha)
    frozen = _frozen()
    assert frozen["ppi_python"] == "0.2.3"
    _compare(ours(case), frozen["cases"][str(seed)], case)


@pytest.mark.parametrize(CASE_ARGS, CASES)
def test_live_equals_ppi_python(seed, n, big_n, q, binary, alpha) -> None:
    ppi = pytest.importorskip("ppi_py")
    case = (seed, n, big_n, q, binary, alpha)
    _compare(ours(case), reference(ppi, case), case)


def test_the_cases_span_lambda() -> None:
    """The reference cases exercise a clipped-at-0, an interior and a clipped-at-1 lambda."""
    lams = [ppi_lambda(*_data(s, n, N, q, b)) for s, n, N, q, b, _ in CASES]
    assert min(lams) == 0.0 and max(lams) == 1.0
    assert any(0.05 < v < 0.95 for v in lams)


@pytest.mark.parametrize(CASE_ARGS, CASES)
def test_closed_forms(seed, n, big_n, q, binary, alpha) -> None:
    """The papers' formulas, written out: PPI is mean_N(f) - mean_n(f - Y) (Angelopoulos et
    al. 2023, Eq. 1); lambda = 0 is the gold-only estimate and interval."""
    y, fg, fu = _data(seed, n, big_n, q, binary)
    assert ppi_mean(y, fg, fu, alpha, lam=1.0).estimate == pytest.approx(
        fu.mean() - (fg - y).mean(), abs=1e-12
    )
    zero, gold = ppi_mean(y, fg, fu, alpha, lam=0.0), classical_mean(y, alpha)
    assert (zero.estimate, zero.ci_low, zero.ci_high) == pytest.approx(
        (gold.estimate, gold.ci_low, gold.ci_high), abs=1e-12
    )


def _write(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


@pytest.mark.parametrize("case", [1, 2, 4])
def test_kit_anchor_equals_ppi_python(tmp_path: Path, case: int) -> None:
    """The command end to end: JUDGED in a shuffled order, GOLD in another, the artifact's rows
    equal ppi-python's (frozen) on the same items (unlabelled = the judged items without gold)."""
    seed, n, big_n, q, binary, alpha = CASES[case]
    y, fg, fu = _data(seed, n, big_n, q, binary)
    rng = np.random.default_rng(seed)
    ids = [f"it-{i}" for i in range(n + big_n)]
    scores = np.concatenate([fg, fu])
    order = rng.permutation(n + big_n)
    judged = _write(
        tmp_path / "judged.csv", "item_id,judge", [f"{ids[i]},{float(scores[i])!r}" for i in order]
    )
    gold_order = rng.permutation(n)
    gold = _write(
        tmp_path / "gold.csv", "item_id,gold", [f"{ids[i]},{int(y[i])}" for i in gold_order]
    )
    out = tmp_path / "out.json"
    args = ["anchor", str(judged), "--gold", str(gold), "--out", str(out), "--alpha", str(alpha)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    rows = {r["method"]: r for r in json.loads(out.read_text())["rows"]}
    want = _frozen()["cases"][str(seed)]
    pairs = [("ppi", "ppi_plus_plus"), ("gold_only", "classical_gold")]
    if not binary:  # a judge scoring in [0, 1]: the CLT interval of its mean, as ppi-python's
        pairs.append(("judge_only", "classical_judge"))
    for method, key in pairs:
        got = rows[method]
        assert [got["estimate"], got["ci_low"], got["ci_high"]] == pytest.approx(
            want[key], abs=TOL
        ), method
    if binary:  # a 0/1 judge's rate is a proportion: the kit's Wilson interval (issue 40 C)
        from statsmodels.stats.proportion import proportion_confint

        k, m = int(scores.sum()), scores.size
        got = rows["judge_only"]
        assert got["estimate"] == pytest.approx(want["classical_judge"][0], abs=TOL)
        assert [got["ci_low"], got["ci_high"]] == pytest.approx(
            proportion_confint(k, m, alpha=alpha, method="wilson"), abs=1e-12
        )
        assert got["interval"].startswith("Wilson score interval")


def test_planner_projection_matches_the_interval_it_plans() -> None:
    """ppi_half_widths with a sample's own moments is that sample's PPI++ interval (up to the
    ddof of Var(f), which the planner takes over the whole pool)."""
    y, fg, fu = _data(3, 200, 2000, 0.6, False)
    f_all = np.concatenate([fg, fu])
    est = ppi_mean(y, fg, fu, 0.05)
    cov = float(np.mean((y - y.mean()) * (fg - fg.mean())))
    # with Var(f) equal on the gold, unlabelled and whole pool the projection is exact; here
    # they differ by sampling only: the projected half-width is within 5% of the realised one
    half, lam = ppi_half_widths(
        np.array([200.0]), f_all.size, float(np.var(y)), float(np.var(f_all, ddof=1)), cov, 0.05
    )
    assert lam[0] == pytest.approx(est.lam, abs=1e-12)
    assert half[0] == pytest.approx(est.ci_high - est.estimate, rel=0.05)
    plan = plan_gold_size(y, fg, f_all, half_width=float(half[0]) * 1.2)
    assert plan.n_gold is not None and plan.n_gold < 200
    assert plan.half_width <= float(half[0]) * 1.2
    # one fewer gold item misses the target (the smallest n is returned)
    before, _ = ppi_half_widths(
        np.array([plan.n_gold - 1.0]),
        f_all.size,
        float(np.var(y)),
        float(np.var(f_all, ddof=1)),
        cov,
        0.05,
    )
    assert before[0] > plan.target_half_width
    # an informative judge needs fewer gold labels than gold alone
    assert plan.n_gold < plan.n_gold_only
