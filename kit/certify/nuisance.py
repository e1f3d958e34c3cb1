"""The nuisance radius eps_outside of Theorem 1 ("What Can a Leaderboard Certify?", Eq. (3)).

    eps_outside,n = L_s,n [ L_C,n ( L_MA eps_inA + L_MB eps_inB + xi_A + xi_B )
                            + eps_contA,n + eps_contB,n ] + eps_protocol,n

The slack xi_X is charged only when mu_X != mu, i.e. when eps_inX > 0 (Theorem 1, last
sentence). Assumptions: Assumption 1 of Appendix A.2 (identification: every effect of the
entry passes through the window; bounded effects outside it). The constants are *declared*
(design file), never estimated here; Definition 7's upper confidence radius r_n(delta) is the
caller's to add to ``eps_in``/``eps_cont`` if it estimated them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kit.errors import check_param


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
            check_param(name, v, v >= 0, "a number >= 0", "SystemNuisance")


def nuisance_radius(
    a: SystemNuisance,
    b: SystemNuisance,
    *,
    L_s: float = 1.0,
    L_C: float = 1.0,
    eps_protocol: float = 0.0,
) -> float:
    """Theorem 1, Eq. (3): the bound on |Delta_obs - Delta_star| for systems A and B.

    ``xi_X`` enters only when ``eps_inX > 0`` (mu_X != mu). Infinite constants give an
    infinite radius (an unusable comparison), never an error.
    """
    for name, v in (("L_s", L_s), ("L_C", L_C), ("eps_protocol", eps_protocol)):
        check_param(name, v, v >= 0, "a number >= 0", "nuisance_radius")
    xi_a = a.xi if a.eps_in > 0 else 0.0
    xi_b = b.xi if b.eps_in > 0 else 0.0
    window = a.L_M * a.eps_in + b.L_M * b.eps_in + xi_a + xi_b
    radius = L_s * (L_C * window + a.eps_cont + b.eps_cont) + eps_protocol
    return math.inf if math.isnan(radius) else float(radius)


def largest_admissible_L_M(
    eps_fair: float, eps_in_a: float, eps_in_b: float, *, L_s: float = 1.0, L_C: float = 1.0
) -> float:
    """The largest common L_M = L_MA = L_MB for which Eq. (3) stays <= eps_fair.

    Solves L_s L_C L_M (eps_inA + eps_inB) = eps_fair, with no slack, channel or protocol
    term (the reduction of Appendix F.3). Infinite when the entries are matched.
    """
    denom = L_s * L_C * (eps_in_a + eps_in_b)
    return math.inf if denom == 0 else eps_fair / denom
