"""Controllability distance ("What Can a Leaderboard Certify?", Appendix A.5, F.6, F.7).

* Eq. (16) lifted branch cost:  dbar((l, h'), (m, g')) = beta d_L(l, m) + (1 - beta) d(h', g').
* Definition 8, Eq. (17):  (T d)(h_A, h_B) = (1 - gamma) d_Z(phi_A h_A, phi_B h_B)
                                             + gamma W_dbar(P_A(.|h_A), P_B(.|h_B)).
* Theorem 4: T is a sup-norm contraction with modulus <= gamma (1 - beta) < 1 (gamma in [0, 1),
  beta in (0, 1]); its unique fixed point is the recursive controllability distance
  (Definition 9). Proposition 2: on the disjoint union of the systems' history spaces the fixed
  point is a pseudometric whose A x B block is d_AB.
* Definition 10, Eq. (18): whole-system distance = E_c W_{d_AB}(iota_A(.|c), iota_B(.|c)) (and the
  essential-supremum form).
* Definition 11, Eq. (19): the controllability radius C_M, an exact OT over the entry laws.
* Appendix F.6: the contextwise window radius with the task-diagonal coupling,
  C_M = mean_t [lambda_in d(entry_A, entry_B) + (1 - lambda_in) d(exit_A, exit_B)], with the entry
  term bracketed by |e_A - e_B| .. e_A + e_B where only distances to the reference are stored.

Finite discretisation (Assumption 4 holds automatically): histories are the logged states of
each system; the branch kernel P(.|h) is the empirical law of (label, next state) over the logged
transitions out of h (weights = counts). Interfaces phi(h) are scalars in [0, 1] with
d_Z = |z - z'|; labels use a given [0, 1]-valued label pseudometric (default: the discrete
metric). Deviation: a state with no logged transition is *absorbing* -- it branches with
probability 1 to itself under the reserved label ``STOP`` -- so every kernel is a probability
law; STOP is at label distance 1 from every other label under the default metric. Transport is
exact (``ot.emd2``, network simplex); no entropic smoothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import ot

from kit.core.errors import ConfigError, check_param

STOP = "STOP"


@dataclass(frozen=True)
class BranchKernels:
    """Empirical branch kernels on a finite set of histories.

    ``branches[i]`` = (label indices, successor indices, probabilities) of history i; successor
    indices refer to this same object's ``states``.
    """

    states: tuple[str, ...]
    z: np.ndarray
    labels: tuple[str, ...]
    branches: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]

    @property
    def n(self) -> int:
        return len(self.states)


def empirical_kernels(
    states: Sequence[str],
    z: Sequence[float],
    transitions: Sequence[tuple[str, str, str, float]],
    labels: Sequence[str] | None = None,
) -> BranchKernels:
    """Build empirical branch kernels from logged transitions (state, label, next_state, count).

    Every state and next state must be listed in ``states`` with its interface value in
    [0, 1]; counts must be > 0. ``labels`` fixes the label order (e.g. to share it across
    systems); by default the sorted set of labels seen, plus STOP.
    """
    st = list(states)
    if len(set(st)) != len(st):
        raise ConfigError("bad_parameter", "empirical_kernels: duplicate state names")
    z_arr = np.asarray(z, dtype=float)
    if z_arr.shape != (len(st),):
        raise ConfigError("bad_parameter", "empirical_kernels: one interface value per state")
    ok = bool(np.all((z_arr >= 0) & (z_arr <= 1)))
    check_param("z", "values outside [0, 1]", ok, "in [0, 1]", "empirical_kernels")
    index = {s: i for i, s in enumerate(st)}
    seen = sorted({t[1] for t in transitions} | {STOP})
    lab = list(labels) if labels is not None else seen
    if STOP not in lab:
        lab.append(STOP)
    lab_index = {s: i for i, s in enumerate(lab)}
    acc: dict[int, dict[tuple[int, int], float]] = {i: {} for i in range(len(st))}
    for s, label, nxt, count in transitions:
        for name in (s, nxt):
            if name not in index:
                raise ConfigError("unknown_state", f"transition names unknown state {name!r}")
        if label not in lab_index:
            raise ConfigError("unknown_label", f"transition label {label!r} not in labels")
        if not count > 0:
            raise ConfigError("bad_parameter", f"transition count must be > 0; got {count!r}")
        key = (lab_index[label], index[nxt])
        row = acc[index[s]]
        row[key] = row.get(key, 0.0) + float(count)
    branches = []
    for i in range(len(st)):
        row = acc[i] or {(lab_index[STOP], i): 1.0}
        keys = sorted(row)
        w = np.array([row[k] for k in keys], dtype=float)
        branches.append(
            (
                np.array([k[0] for k in keys], dtype=np.int64),
                np.array([k[1] for k in keys], dtype=np.int64),
                w / w.sum(),
            )
        )
    return BranchKernels(tuple(st), z_arr, tuple(lab), tuple(branches))


def disjoint_union(parts: Sequence[BranchKernels], prefixes: Sequence[str]) -> BranchKernels:
    """Proposition 2's H_union: states renamed ``prefix:state``, labels merged by name."""
    if len(parts) != len(prefixes) or len(set(prefixes)) != len(prefixes):
        raise ConfigError("bad_parameter", "disjoint_union: one distinct prefix per part")
    labels = sorted({lab for p in parts for lab in p.labels})
    lab_index = {s: i for i, s in enumerate(labels)}
    states: list[str] = []
    zs: list[np.ndarray] = []
    branches = []
    offset = 0
    for p, pre in zip(parts, prefixes, strict=True):
        remap = np.array([lab_index[s] for s in p.labels], dtype=np.int64)
        states.extend(f"{pre}:{s}" for s in p.states)
        zs.append(p.z)
        for li, ni, pr in p.branches:
            branches.append((remap[li], ni + offset, pr))
        offset += p.n
    return BranchKernels(tuple(states), np.concatenate(zs), tuple(labels), tuple(branches))


def discrete_label_metric(labels_a: Sequence[str], labels_b: Sequence[str]) -> np.ndarray:
    """d_L(l, m) = 0 if l == m else 1 (a metric with values in [0, 1])."""
    return np.array([[0.0 if a == b else 1.0 for b in labels_b] for a in labels_a])


def _check_weights(gamma: float, beta: float, func: str) -> None:
    check_param("gamma", gamma, 0 <= gamma < 1, "in [0, 1)", func)
    check_param("beta", beta, 0 < beta <= 1, "in (0, 1]", func)


def apply_operator(
    ka: BranchKernels,
    kb: BranchKernels,
    d: np.ndarray,
    gamma: float,
    beta: float,
    d_label: np.ndarray | None = None,
    symmetric: bool = False,
) -> np.ndarray:
    """One application of Definition 8's operator, Eq. (17), on H_A x H_B.

    ``d`` has shape (n_A, n_B) with values in [0, 1]; ``d_label`` is (|labels_A|, |labels_B|).
    With ``symmetric`` (ka is kb and d symmetric) only the upper triangle is solved.
    """
    _check_weights(gamma, beta, "apply_operator")
    if d.shape != (ka.n, kb.n):
        raise ConfigError("bad_parameter", f"apply_operator: d must have shape {(ka.n, kb.n)}")
    dl = discrete_label_metric(ka.labels, kb.labels) if d_label is None else d_label
    out = (1.0 - gamma) * np.abs(ka.z[:, None] - kb.z[None, :])
    if gamma == 0:
        return out
    for i in range(ka.n):
        la, na, pa = ka.branches[i]
        for j in range(i if symmetric else 0, kb.n):
            lb, nb, pb = kb.branches[j]
            cost = beta * dl[la[:, None], lb[None, :]] + (1.0 - beta) * d[na[:, None], nb[None, :]]
            if pa.size == 1 or pb.size == 1:  # the only coupling is the product
                w = float(pa @ cost @ pb)
            else:  # marginals are normalised by construction
                w = float(ot.emd2(pa, pb, cost, check_marginals=False))
            out[i, j] += gamma * w
    if symmetric:
        upper = np.triu(out, 1)
        out = np.triu(out) + upper.T
    return out


@dataclass(frozen=True)
class FixedPoint:
    """The fixed point of Eq. (17) and how it was reached."""

    d: np.ndarray
    iterations: int
    residual: float  # sup-norm of the last update
    error_bound: float  # kappa / (1 - kappa) * residual >= ||d - d_dagger||_inf (Banach)
    modulus: float  # the theoretical modulus gamma (1 - beta)


def fixed_point(
    ka: BranchKernels,
    kb: BranchKernels,
    gamma: float,
    beta: float,
    d_label: np.ndarray | None = None,
    d0: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 10_000,
    symmetric: bool = False,
) -> FixedPoint:
    """Iterate Eq. (17) from ``d0`` (default 0) until the sup-norm update is <= tol (Theorem 4)."""
    _check_weights(gamma, beta, "fixed_point")
    check_param("tol", tol, tol > 0, "> 0", "fixed_point")
    kappa = gamma * (1.0 - beta)
    d = np.zeros((ka.n, kb.n)) if d0 is None else np.array(d0, dtype=float)
    for it in range(1, max_iter + 1):
        nxt = apply_operator(ka, kb, d, gamma, beta, d_label, symmetric)
        res = float(np.max(np.abs(nxt - d))) if nxt.size else 0.0
        d = nxt
        if res <= tol:
            bound = kappa / (1.0 - kappa) * res
            return FixedPoint(d, it, res, bound, kappa)
    raise ConfigError(
        "no_convergence", f"fixed_point: no convergence to {tol:g} in {max_iter} iterations"
    )


@dataclass(frozen=True)
class ContractionCheck:
    """Theorem 4 checked on a kernel pair: modulus, uniqueness (two starts)."""

    modulus_theory: float  # gamma (1 - beta)
    modulus_observed: float  # max_n ||T d_n - T d'_n|| / ||d_n - d'_n|| along the two orbits
    modulus_random: float  # max over random pairs (d1, d2) of the same ratio
    start_gap: float  # ||d_from_0 - d_from_1||_inf at convergence (uniqueness)
    iterations: int


def contraction_check(
    ka: BranchKernels,
    kb: BranchKernels,
    gamma: float,
    beta: float,
    rng: np.random.Generator,
    d_label: np.ndarray | None = None,
    n_random: int = 5,
    tol: float = 1e-10,
    max_iter: int = 10_000,
    symmetric: bool = False,
) -> ContractionCheck:
    """Run the orbits of T from d = 0 and d = 1 side by side, plus random pairs in [0, 1].

    ``symmetric`` (ka is kb) solves only the upper triangle along the two orbits, which stay
    symmetric; the random pairs are never symmetrised.
    """
    _check_weights(gamma, beta, "contraction_check")
    kappa = gamma * (1.0 - beta)
    lo, hi = np.zeros((ka.n, kb.n)), np.ones((ka.n, kb.n))
    observed = 0.0
    gap = float(np.max(np.abs(hi - lo))) if lo.size else 0.0
    it = 0
    while it < max_iter:
        it += 1
        lo2 = apply_operator(ka, kb, lo, gamma, beta, d_label, symmetric)
        hi2 = apply_operator(ka, kb, hi, gamma, beta, d_label, symmetric)
        new_gap = float(np.max(np.abs(hi2 - lo2))) if lo.size else 0.0
        if gap > 1e-6:  # ratios of smaller gaps are dominated by rounding
            observed = max(observed, new_gap / gap)
        res = max(float(np.max(np.abs(lo2 - lo))), float(np.max(np.abs(hi2 - hi))))
        lo, hi, gap = lo2, hi2, new_gap
        if res <= tol:
            break
    rand = 0.0
    for _ in range(n_random):
        d1, d2 = rng.uniform(size=(2, ka.n, kb.n))
        t1 = apply_operator(ka, kb, d1, gamma, beta, d_label)
        t2 = apply_operator(ka, kb, d2, gamma, beta, d_label)
        rand = max(rand, float(np.max(np.abs(t1 - t2)) / np.max(np.abs(d1 - d2))))
    return ContractionCheck(kappa, observed, rand, gap, it)


@dataclass(frozen=True)
class PseudometricCheck:
    """Proposition 2's properties of a square distance matrix (max violations; 0 = holds)."""

    n: int
    max_diagonal: float  # max_h d(h, h)
    max_asymmetry: float  # max |d(h, g) - d(g, h)|
    max_triangle_violation: float  # max (d(h, k) - d(h, g) - d(g, k)), floored at 0
    n_triples: int
    min_value: float
    max_value: float


def pseudometric_check(
    d: np.ndarray, rng: np.random.Generator | None = None, max_triples: int = 2_000_000
) -> PseudometricCheck:
    """Check non-negativity, zero diagonal, symmetry and the triangle inequality.

    All n^3 triples when n^3 <= max_triples; otherwise ``max_triples`` triples sampled with
    ``rng`` (required then).
    """
    d = np.asarray(d, dtype=float)
    n = d.shape[0]
    if d.shape != (n, n):
        raise ConfigError("bad_parameter", "pseudometric_check: d must be square")
    if n == 0:
        return PseudometricCheck(0, 0.0, 0.0, 0.0, 0, 0.0, 0.0)
    if n**3 <= max_triples:
        worst = 0.0
        for j in range(n):
            worst = max(worst, float(np.max(d - d[:, j][:, None] - d[j, :][None, :])))
        triples = n**3
    else:
        if rng is None:
            raise ConfigError("bad_parameter", "pseudometric_check: rng needed to sample triples")
        i, j, k = rng.integers(0, n, size=(3, max_triples))
        worst = float(np.max(d[i, k] - d[i, j] - d[j, k]))
        triples = max_triples
    return PseudometricCheck(
        n,
        float(np.max(np.abs(np.diag(d)))),
        float(np.max(np.abs(d - d.T))),
        max(worst, 0.0),
        int(triples),
        float(np.min(d)),
        float(np.max(d)),
    )


@dataclass(frozen=True)
class SystemDistance:
    """Definition 10: contextwise transport of the entry laws under d_AB (mean and sup)."""

    mean: float
    sup: float
    n_contexts: int


def whole_system_distance(
    d_ab: np.ndarray,
    entries_a: Sequence[tuple[np.ndarray, np.ndarray]],
    entries_b: Sequence[tuple[np.ndarray, np.ndarray]],
) -> SystemDistance:
    """Eq. (18) with rho uniform over the listed contexts; entries_X[c] = (state idx, weights)."""
    if len(entries_a) != len(entries_b) or not entries_a:
        raise ConfigError("bad_parameter", "whole_system_distance: the same contexts for A and B")
    vals = []
    for (ia, wa), (ib, wb) in zip(entries_a, entries_b, strict=True):
        wa = np.asarray(wa, float) / np.sum(wa)
        wb = np.asarray(wb, float) / np.sum(wb)
        vals.append(float(ot.emd2(wa, wb, d_ab[np.ix_(ia, ib)])))
    return SystemDistance(float(np.mean(vals)), float(np.max(vals)), len(vals))


def controllability_radius(
    entry_cost: np.ndarray,
    exit_cost: np.ndarray,
    lam_in: float = 0.5,
    p: np.ndarray | None = None,
    q: np.ndarray | None = None,
) -> float:
    """Definition 11, Eq. (19), on empirical entry laws: the infimum over couplings.

    ``entry_cost[i, j]`` = d_B(psi_A(h_i), psi_B(h_j)) and ``exit_cost[i, j]`` =
    W_{d_M}(Q_A(.|h_i), Q_B(.|h_j)) for entry histories i of A and j of B, with laws ``p`` and
    ``q`` (uniform by default). Solved exactly (``ot.emd2``). The contextwise radius
    C_M^rho restricts the coupling to the task diagonal, so C_M <= C_M^rho.
    """
    check_param("lam_in", lam_in, 0 < lam_in < 1, "in (0, 1)", "controllability_radius")
    ce, cx = np.asarray(entry_cost, float), np.asarray(exit_cost, float)
    if ce.shape != cx.shape or ce.ndim != 2 or 0 in ce.shape:
        raise ConfigError("bad_parameter", "controllability_radius: two equal non-empty matrices")
    n, m = ce.shape
    p = np.full(n, 1 / n) if p is None else np.asarray(p, float) / np.sum(p)
    q = np.full(m, 1 / m) if q is None else np.asarray(q, float) / np.sum(q)
    return float(ot.emd2(p, q, lam_in * ce + (1 - lam_in) * cx))


@dataclass(frozen=True)
class WindowRadius:
    """Appendix F.6: the contextwise radius C_M^rho with its entry bracket (lo <= hi)."""

    n_tasks: int
    lam_in: float
    entry_lo: float  # mean entry term, lower end of the bracket
    entry_hi: float
    exit: float  # mean exit distance
    radius_lo: float  # mean_t [lam d_in + (1 - lam) d_out], entry at its lower end
    radius_hi: float
    sup_lo: float  # the essential-supremum (uniform) form over tasks
    sup_hi: float
    n_direct_entry: int  # tasks with a stored direct entry distance (no bracket)


def contextwise_radius(
    exit_dist: np.ndarray,
    entry_dist: np.ndarray | None = None,
    e_a: np.ndarray | None = None,
    e_b: np.ndarray | None = None,
    lam_in: float = 0.5,
) -> WindowRadius:
    """Definition 11 with the task-diagonal coupling (Appendix F.6).

    Per task the entry term is ``entry_dist`` where it is given (not NaN); otherwise it is
    bracketed by the triangle inequality through the reference, |e_A - e_B| <= d <= e_A + e_B,
    with e_X the stored distance of X's entry to the reference. Both ends are returned.
    """
    check_param("lam_in", lam_in, 0 < lam_in < 1, "in (0, 1)", "contextwise_radius")
    out = np.asarray(exit_dist, dtype=float)
    n = out.size
    if n == 0:
        raise ConfigError("no_tasks", "contextwise_radius: no tasks")
    direct = np.full(n, np.nan) if entry_dist is None else np.asarray(entry_dist, dtype=float)
    ea = np.full(n, np.nan) if e_a is None else np.asarray(e_a, dtype=float)
    eb = np.full(n, np.nan) if e_b is None else np.asarray(e_b, dtype=float)
    if not (direct.shape == ea.shape == eb.shape == out.shape):
        raise ConfigError("bad_parameter", "contextwise_radius: one value per task in each array")
    has = ~np.isnan(direct)
    lo = np.where(has, direct, np.abs(ea - eb))
    hi = np.where(has, direct, ea + eb)
    missing = np.isnan(lo) | np.isnan(hi) | np.isnan(out)
    if missing.any():
        raise ConfigError(
            "missing_distance",
            f"contextwise_radius: {int(missing.sum())} task(s) have neither a direct entry "
            "distance nor both distances to the reference (or no exit distance)",
        )
    if np.any(lo < 0) or np.any(out < 0):
        raise ConfigError("bad_parameter", "contextwise_radius: distances must be >= 0")
    r_lo = lam_in * lo + (1 - lam_in) * out
    r_hi = lam_in * hi + (1 - lam_in) * out
    return WindowRadius(
        n, lam_in, float(lo.mean()), float(hi.mean()), float(out.mean()),
        float(r_lo.mean()), float(r_hi.mean()), float(r_lo.max()), float(r_hi.max()),
        int(has.sum()),
    )  # fmt: skip
