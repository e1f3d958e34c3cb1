"""Composition across stages ("What Can a Leaderboard Certify?", Appendix A.4 and F.4).

Bounds (Assumptions 2 and 3: local replacement error eps_k, downstream stability L_k, xi_k of the
reference system B's stage kernels, on the reachable support):

* Theorem 2, recursive form, Eq. (13):  B_0 = eps_0,  B_k = L_k B_{k-1} + eps_k + xi_k.
* Theorem 2, unrolled form, Eq. (12):   B_m = eps_0 prod_{j<=m} L_j
                                             + sum_{k<=m} (eps_k + xi_k) prod_{k<j<=m} L_j.
* Corollary 2 (all L_k <= 1):           W_K <= eps_0 + sum_k (eps_k + xi_k)   (errors add).
* Corollary 3, Eq. (14): the bound of a block of differing stages i..j propagated to stage K.
* Theorem 3, Eq. (15): |E_A U - E_B U| <= L_U B_K for an L_U-Lipschitz utility U.

The synthetic-chain check of Appendix F.4 is implemented on a discretised state space: every
interface is the grid {0, 1/n, ..., 1} with d_k(z, z') = |z - z'|, stage kernels are binomial
(knobs: retrieval recall, claim retention, section order, and a quantised writing stage with a
top-k style cut-off that is not Lipschitz), and the laws nu_{X,k} are propagated *exactly* by
transition matrices, so the observed discrepancy W(nu_{A,k}, nu_{B,k}) is exact (an empirical W
of sampled runs is reported beside it when an RNG is passed).
The paper builds its chains "from the human graphs", which the registry does not hold; these
chains keep the three knobs but not the graphs (deviation). Constants are obtained by probing
B's kernels on point-mass pairs (x = |z - z'|, y = W(Q_B(.|z), Q_B(.|z'))) and fitting them with
:mod:`kit.certify.sensitivity`: ``ratio_sup`` over all pairs is a valid Lipschitz constant on
the grid (so the bound must hold on every chain), ``ratio_q95`` and ``affine`` are the
high-probability envelopes of Table 15, which may fail.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom, wasserstein_distance

from kit.certify import sensitivity
from kit.certify.extended_reals import prod, times
from kit.core.errors import ConfigError, check_param


def _arrays(
    L: Sequence[float], eps: Sequence[float], xi: Sequence[float] | None, func: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    L_a = np.asarray(L, dtype=float)
    e_a = np.asarray(eps, dtype=float)
    x_a = np.zeros_like(L_a) if xi is None else np.asarray(xi, dtype=float)
    if not (L_a.ndim == e_a.ndim == x_a.ndim == 1 and L_a.size == e_a.size == x_a.size):
        raise ConfigError("bad_parameter", f"{func}: L, eps and xi need one value per stage")
    for name, a in (("L", L_a), ("eps", e_a), ("xi", x_a)):
        ok = bool(np.all(a >= 0)) and not bool(np.any(np.isnan(a)))
        check_param(name, a.tolist(), ok, "numbers >= 0 (inf allowed)", func)
    return L_a, e_a, x_a


def composed_bound(
    eps0: float, L: Sequence[float], eps: Sequence[float], xi: Sequence[float] | None = None
) -> np.ndarray:
    """Theorem 2 by the recursion of Eq. (13): returns B_0..B_K (length K + 1).

    Constants may be inf (no finite constant is known): L_k B_{k-1} is multiplied by
    :func:`kit.certify.extended_reals.times`, so a zero incoming bound (identical laws) or a zero
    L_k (a stage that forgets its input) carries 0, and anything else times inf is inf.
    """
    check_param("eps0", eps0, eps0 >= 0, "a number >= 0 (inf allowed)", "composed_bound")
    L_a, e_a, x_a = _arrays(L, eps, xi, "composed_bound")
    out = np.empty(L_a.size + 1)
    out[0] = eps0
    for k in range(L_a.size):
        out[k + 1] = times(L_a[k], out[k]) + e_a[k] + x_a[k]
    return out


def unrolled_bound(
    eps0: float, L: Sequence[float], eps: Sequence[float], xi: Sequence[float] | None = None
) -> np.ndarray:
    """Theorem 2 in the product form of Eq. (12), B_0..B_K (an empty product is 1).

    Every product, eps_0 prod_{j<=m} L_j and (eps_k + xi_k) prod_{k<j<=m} L_j, goes through
    :func:`kit.certify.extended_reals.prod` (0 * inf = 0), so it equals :func:`composed_bound`
    on every input in [0, inf].
    """
    check_param("eps0", eps0, eps0 >= 0, "a number >= 0 (inf allowed)", "unrolled_bound")
    L_a, e_a, x_a = _arrays(L, eps, xi, "unrolled_bound")
    K = L_a.size
    out = np.empty(K + 1)
    out[0] = eps0
    for m in range(1, K + 1):
        total = times(eps0, prod(L_a[:m]))
        for k in range(1, m + 1):
            total += times(e_a[k - 1] + x_a[k - 1], prod(L_a[k:m]))
        out[m] = total
    return out


def is_nonexpansive(L: Sequence[float]) -> bool:
    """Corollary 2's hypothesis: every L_k <= 1."""
    return bool(np.all(np.asarray(L, dtype=float) <= 1.0))


def additive_bound(
    eps0: float, eps: Sequence[float], xi: Sequence[float] | None = None
) -> np.ndarray:
    """Corollary 2: eps_0 + cumulative sum of (eps_k + xi_k), B_0..B_K. Valid only if all L_k <= 1.

    Sums only, so an infinite eps_0, eps_k or xi_k makes the bound inf from there on.
    """
    check_param("eps0", eps0, eps0 >= 0, "a number >= 0 (inf allowed)", "additive_bound")
    e_a = np.asarray(eps, dtype=float)
    x_a = np.zeros_like(e_a) if xi is None else np.asarray(xi, dtype=float)
    for name, a in (("eps", e_a), ("xi", x_a)):
        ok = bool(np.all(a >= 0)) and not bool(np.any(np.isnan(a)))
        check_param(name, a.tolist(), ok, "numbers >= 0 (inf allowed)", "additive_bound")
    return np.concatenate([[eps0], eps0 + np.cumsum(e_a + x_a)])


def window_bound(
    eps_prev: float,
    L: Sequence[float],
    eps: Sequence[float],
    xi: Sequence[float] | None,
    i: int,
    j: int,
) -> float:
    """Corollary 3, Eq. (14): A and B differ on stages i..j (1-based, inclusive) of K stages.

    ``eps_prev`` bounds W_{d_{i-1}}(nu_{A,i-1}, nu_{B,i-1}); ``L, eps, xi`` hold one value per
    stage 1..K. ``eps`` is read only inside the window (downstream stages are common); every
    ``xi_k`` from stage i on is charged. An independently bounded difference must be
    propagated and added by the caller (the sentence after Eq. (14)). Computed by the
    recursion (13) over the window and then over the common stages with eps_k = 0, which is
    Eq. (14) unrolled; 0 * inf = 0 as in :func:`composed_bound`.
    """
    L_a, e_a, x_a = _arrays(L, eps, xi, "window_bound")
    K = L_a.size
    check_param("i, j", (i, j), 1 <= i <= j <= K, f"1 <= i <= j <= K={K}", "window_bound")
    check_param("eps_prev", eps_prev, eps_prev >= 0, "a number >= 0", "window_bound")
    inner = composed_bound(eps_prev, L_a[i - 1 : j], e_a[i - 1 : j], x_a[i - 1 : j])[-1]
    return float(composed_bound(inner, L_a[j:], np.zeros(K - j), x_a[j:])[-1])


def utility_bound(
    L_U: float,
    eps0: float,
    L: Sequence[float],
    eps: Sequence[float],
    xi: Sequence[float] | None = None,
) -> float:
    """Theorem 3, Eq. (15): L_U times Theorem 2's bound at m = K (Kantorovich-Rubinstein).

    With K = 0 stages this is L_U eps_0. L_U = 0 (a constant utility) gives 0 whatever the
    bound, and a zero bound gives 0 whatever L_U (:func:`kit.certify.extended_reals.times`).
    """
    check_param("L_U", L_U, L_U >= 0, "a number >= 0 (inf allowed)", "utility_bound")
    return times(L_U, composed_bound(eps0, L, eps, xi)[-1])


@dataclass(frozen=True)
class StageBound:
    """Theorem 2, Corollary 2 and Theorem 3 at interface k (k = 0 is the entry)."""

    stage: int
    L: float  # NaN at k = 0
    eps: float  # eps_0 at k = 0
    xi: float  # NaN at k = 0
    bound: float  # recursion, Eq. (13)
    bound_unrolled: float  # product form, Eq. (12)
    additive_bound: float  # Corollary 2; NaN when some L_j > 1 for j <= k (hypothesis fails)
    utility_bound: float  # Theorem 3, Eq. (15), at m = k


def stage_bounds(
    eps0: float,
    L: Sequence[float],
    eps: Sequence[float],
    xi: Sequence[float] | None = None,
    L_U: float = 1.0,
) -> list[StageBound]:
    """Every bound of Theorem 2 (both forms), Corollary 2 and Theorem 3 at k = 0..K.

    Infinite inputs are allowed (no finite constant known) and give inf where the paper's
    products carry them (0 * inf = 0, :mod:`kit.certify.extended_reals`); an inf bound is
    vacuous, not an error.
    """
    L_a, e_a, x_a = _arrays(L, eps, xi, "stage_bounds")
    rec = composed_bound(eps0, L_a, e_a, x_a)
    unr = unrolled_bound(eps0, L_a, e_a, x_a)
    add = additive_bound(eps0, e_a, x_a)
    out = [
        StageBound(
            0, math.nan, float(eps0), math.nan, float(rec[0]), float(unr[0]), float(add[0]),
            utility_bound(L_U, eps0, [], [], []),
        )
    ]  # fmt: skip
    for k in range(1, L_a.size + 1):
        out.append(
            StageBound(
                k, float(L_a[k - 1]), float(e_a[k - 1]), float(x_a[k - 1]), float(rec[k]),
                float(unr[k]), float(add[k]) if is_nonexpansive(L_a[:k]) else math.nan,
                utility_bound(L_U, eps0, L_a[:k], e_a[:k], x_a[:k]),
            )
        )  # fmt: skip
    return out


def wasserstein_1d(support: np.ndarray, p: np.ndarray, q: np.ndarray) -> float:
    """W_1 between two laws on the same sorted 1-D support: sum_i |F_p - F_q|(s_{i+1} - s_i)."""
    s = np.asarray(support, dtype=float)
    gaps = np.diff(s)
    if np.any(gaps < 0):
        raise ConfigError("bad_parameter", "wasserstein_1d: support must be sorted")
    cdf = np.cumsum(np.asarray(p, dtype=float) - np.asarray(q, dtype=float))[:-1]
    return float(np.sum(np.abs(cdf) * gaps))


# --- synthetic chains (Appendix F.4) ----------------------------------------------------------

STAGES = ("retrieval", "claims", "organisation", "writing")


@dataclass(frozen=True)
class ChainKnobs:
    """One system's knobs: entry coverage p0, retrieval recall, claim retention, section order
    accuracy and writing skill (the last stage is quantised into ``levels`` steps)."""

    entry: float
    recall: float
    retention: float
    order: float
    writing: float


def _binom_matrix(n: int, p: np.ndarray) -> np.ndarray:
    """Row i: the law of Bin(n, p_i)/n on the grid."""
    k = np.arange(n + 1)
    return binom.pmf(k[None, :], n, np.clip(p, 0.0, 1.0)[:, None])


def stage_matrices(
    knobs: ChainKnobs, n: int, levels: int, w_order: float = 0.5
) -> list[np.ndarray]:
    """The four stage kernels of one system as (n+1) x (n+1) transition matrices.

    retrieval  Bin(n, recall z)/n                      (Lipschitz, L = recall)
    claims     Bin(n, retention (1 - (1 - z)^2))/n     (concave: retained claims saturate)
    organise   Bin(n, w z^2 + (1 - w) order)/n         (convex: order needs content)
    writing    Bin(n, writing floor(levels z)/levels)/n (a cut-off: not Lipschitz, slack ~1/levels)

    Binomial laws are stochastically ordered in p, so W(Q(.|z), Q(.|z')) = |p(z) - p(z')|.
    """
    z = np.arange(n + 1) / n
    writing_p = knobs.writing * np.floor(z * levels + 1e-12) / levels
    return [
        _binom_matrix(n, knobs.recall * z),
        _binom_matrix(n, knobs.retention * (1.0 - (1.0 - z) ** 2)),
        _binom_matrix(n, w_order * z**2 + (1 - w_order) * knobs.order),
        _binom_matrix(n, writing_p),
    ]


def chain_laws(knobs: ChainKnobs, n: int, levels: int) -> list[np.ndarray]:
    """Exact laws nu_{X,0..4} on the grid (nu_{X,0} = Bin(n, entry)/n)."""
    laws = [_binom_matrix(n, np.array([knobs.entry]))[0]]
    for m in stage_matrices(knobs, n, levels):
        laws.append(laws[-1] @ m)
    return laws


def probe_pairs(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact point-mass probes of one stage kernel on the grid, for every pair z < z':
    x = |z - z'| (the entry mismatch of two point masses), y = W(Q(.|z), Q(.|z'))."""
    n = mat.shape[0] - 1
    cdf = np.cumsum(mat, axis=1)[:, :-1]
    iu, ju = np.triu_indices(n + 1, k=1)
    y = np.sum(np.abs(cdf[iu] - cdf[ju]), axis=1) / n
    return (ju - iu) / n, y


def replacement_error(mat_a: np.ndarray, mat_b: np.ndarray) -> float:
    """Assumption 2's eps_k, exact on the grid: max_z W(Q_A(.|z), Q_B(.|z))."""
    n = mat_a.shape[0] - 1
    diff = np.cumsum(mat_a - mat_b, axis=1)[:, :-1]
    return float(np.max(np.sum(np.abs(diff), axis=1) / n))


def stage_constants(
    mats_b: Sequence[np.ndarray], design: str, q: float = 0.95
) -> list[tuple[float, float]]:
    """Assumption 3's (L_k, xi_k) of the reference system's stages, fitted by ``design`` on
    :func:`probe_pairs`. ``ratio_sup`` over all pairs is the exact Lipschitz constant of the
    kernel for laws on the grid (couple the inputs optimally and integrate); the other designs
    are envelopes that may be exceeded."""
    out = []
    for m in mats_b:
        x, y = probe_pairs(m)
        f = sensitivity.fit(design, x, y, q)
        out.append((f.L_M, f.xi))
    return out


def draw_knobs(rng: np.random.Generator) -> tuple[ChainKnobs, ChainKnobs]:
    """Random knobs for systems A and B (B is the reference path of Assumption 3)."""

    def one() -> ChainKnobs:
        return ChainKnobs(
            entry=float(rng.uniform(0.5, 1.0)),
            recall=float(rng.uniform(0.5, 1.0)),
            retention=float(rng.uniform(0.5, 1.0)),
            order=float(rng.uniform(0.3, 1.0)),
            writing=float(rng.uniform(0.6, 1.0)),
        )

    return one(), one()


@dataclass(frozen=True)
class ChainStageCheck:
    """Observed discrepancy against the composed bound at one stage of one chain."""

    chain: int
    stage: int
    design: str
    L: float
    xi: float
    eps: float
    observed: float  # W(nu_{A,k}, nu_{B,k}), exact
    bound: float  # Theorem 2, Eq. (13)
    bound_unrolled: float  # Eq. (12)
    utility_gap: float  # |E_A z_k - E_B z_k| (U = identity, L_U = 1)
    utility_bound: float  # Theorem 3 at m = k
    observed_sampled: float  # empirical W between sampled runs of A and B (NaN: not sampled)


def sample_chain(
    knobs: ChainKnobs, n: int, levels: int, runs: int, rng: np.random.Generator
) -> np.ndarray:
    """``runs`` seeded executions of one system's chain: shape (runs, 5), grid values z_0..z_4."""
    check_param("runs", runs, runs >= 1, "an integer >= 1", "sample_chain")
    idx = rng.binomial(n, knobs.entry, size=runs)
    out = [idx]
    for m in stage_matrices(knobs, n, levels):
        cdf = np.cumsum(m[idx], axis=1)
        u = rng.uniform(size=(runs, 1))
        idx = np.minimum(np.sum(cdf < u * cdf[:, -1:], axis=1), n)
        out.append(idx)
    return np.stack(out, axis=1) / n


def check_chain(
    chain: int,
    a: ChainKnobs,
    b: ChainKnobs,
    n: int = 20,
    levels: int = 5,
    designs: Sequence[str] = sensitivity.DESIGNS,
    q: float = 0.95,
    constants: dict[str, list[tuple[float, float]]] | None = None,
    rng: np.random.Generator | None = None,
    runs: int = 100,
) -> list[ChainStageCheck]:
    """Theorem 2 (and Theorem 3 with U(z) = z) on one synthetic four-stage chain.

    eps_0 is the exact entry discrepancy; eps_k from :func:`replacement_error`; (L_k, xi_k)
    from :func:`stage_constants` of B's stages unless ``constants`` (per design) are given.
    With ``rng``, ``runs`` executions of each system are also sampled and their empirical W
    is reported next to the exact one: a finite-sample observation can exceed a bound that the
    population law satisfies, which is what a check on logged runs would see.
    """
    check_param("n", n, n >= 2, "an integer >= 2", "check_chain")
    check_param("levels", levels, levels >= 1, "an integer >= 1", "check_chain")
    grid = np.arange(n + 1) / n
    laws_a, laws_b = chain_laws(a, n, levels), chain_laws(b, n, levels)
    mats_a, mats_b = stage_matrices(a, n, levels), stage_matrices(b, n, levels)
    observed = [wasserstein_1d(grid, pa, pb) for pa, pb in zip(laws_a, laws_b, strict=True)]
    util = [abs(float(grid @ pa - grid @ pb)) for pa, pb in zip(laws_a, laws_b, strict=True)]
    eps = [replacement_error(ma, mb) for ma, mb in zip(mats_a, mats_b, strict=True)]
    sampled = [math.nan] * len(observed)
    if rng is not None:
        sa, sb = sample_chain(a, n, levels, runs, rng), sample_chain(b, n, levels, runs, rng)
        sampled = [float(wasserstein_distance(sa[:, k], sb[:, k])) for k in range(sa.shape[1])]
    out: list[ChainStageCheck] = []
    for design in designs:
        consts = (constants or {}).get(design) or stage_constants(mats_b, design, q)
        L = [c[0] for c in consts]
        xi = [c[1] for c in consts]
        rec = composed_bound(observed[0], L, eps, xi)
        unr = unrolled_bound(observed[0], L, eps, xi)
        for k in range(1, len(STAGES) + 1):
            out.append(
                ChainStageCheck(
                    chain, k, design, L[k - 1], xi[k - 1], eps[k - 1], observed[k],
                    float(rec[k]), float(unr[k]), util[k],
                    utility_bound(1.0, observed[0], L[:k], eps[:k], xi[:k]), sampled[k],
                )
            )  # fmt: skip
    return out
