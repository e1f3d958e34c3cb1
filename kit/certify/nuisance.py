"""The nuisance radius eps_outside of Theorem 1 ("What Can a Leaderboard Certify?", Eq. (3)).

    eps_outside,n = L_s,n [ L_C,n ( L_MA eps_inA + L_MB eps_inB + xi_A + xi_B )
                            + eps_contA,n + eps_contB,n ] + eps_protocol,n

The slack xi_X is charged only when mu_X != mu, i.e. when eps_inX > 0 (Theorem 1, last
sentence). Assumptions: Assumption 1 of Appendix A.2 (identification: every effect of the
entry passes through the window; bounded effects outside it). The constants are *declared*
(design file), never estimated here; Definition 7's upper confidence radius r_n(delta) is the
caller's to add to ``eps_in``/``eps_cont`` if it estimated them. Constants may be inf; every
product goes through :func:`kit.certify.extended_reals.times` (0 * inf = 0, the proof's Step 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kit.certify.extended_reals import times
from kit.core.errors import check_param


@dataclass(frozen=True)
class SystemNuisance:
    """One system's declared constants relative to the common entry law mu and channel C_n."""

    L_M: float = 1.0  # amplification factor (Lipschitz constant) of the window's macro-kernel
    eps_in: float = 0.0  # W(mu_X, mu): entry mismatch
    xi: float = 0.0  # affine slack of the window (truncation, top-k cut-offs)
    eps_cont: float = 0.0  # channel mismatch of C_X,n against C_n

    def __post_init__(self) -> None:
        for name in ("L_M", "eps_in", "xi", "eps_cont"):
            v = getattr(self, name)
            check_param(name, v, v >= 0, "a number >= 0 (inf allowed)", "SystemNuisance")


def entry_term(x: SystemNuisance) -> float:
    """Theorem 1, proof, Step 3, one system: L_MX eps_inX + xi_MX, or 0 when eps_inX = 0.

    mu_X = mu makes the two laws identical, so the term is 0 "with no appeal to L_MX or xi_MX"
    (an infinite L_M is then harmless); L_M = 0 with eps_in = inf leaves xi (a window that
    forgets its entry). Products by :func:`kit.certify.extended_reals.times`.
    """
    if x.eps_in == 0:
        return 0.0
    return times(x.L_M, x.eps_in) + x.xi


def nuisance_radius(
    a: SystemNuisance,
    b: SystemNuisance,
    *,
    L_s: float = 1.0,
    L_C: float = 1.0,
    eps_protocol: float = 0.0,
) -> float:
    """Theorem 1, Eq. (3): the bound on |Delta_obs - Delta_star| for systems A and B.

    ``xi_X`` enters only when ``eps_inX > 0`` (mu_X != mu). Constants may be inf (no finite
    constant known): a zero factor wins (0 * inf = 0: matched entries charge nothing whatever
    L_M, L_C or L_s is, Step 3 and "When terms vanish"), otherwise the radius is inf -- an
    unusable comparison, never an error and never NaN.
    """
    for name, v in (("L_s", L_s), ("L_C", L_C), ("eps_protocol", eps_protocol)):
        check_param(name, v, v >= 0, "a number >= 0 (inf allowed)", "nuisance_radius")
    window = entry_term(a) + entry_term(b)
    return times(L_s, times(L_C, window) + a.eps_cont + b.eps_cont) + eps_protocol


def largest_admissible_L_M(
    eps_fair: float, eps_in_a: float, eps_in_b: float, *, L_s: float = 1.0, L_C: float = 1.0
) -> float:
    """The largest common L_M = L_MA = L_MB for which Eq. (3) stays <= eps_fair.

    Solves L_s L_C L_M (eps_inA + eps_inB) = eps_fair, with no slack, channel or protocol
    term (the reduction of Appendix F.3). Infinite when the entries are matched (no L_M is
    charged then, Step 3); 0 * inf = 0 as in :func:`nuisance_radius`.
    """
    denom = times(L_s, L_C, eps_in_a + eps_in_b)
    return math.inf if denom == 0 else eps_fair / denom
