"""Admissibility (Definition 1), decided from declared conditions before any score is read.

A pair (A, B) under readout n is admissible when the nuisance radius of Theorem 1 is finite and
at most the declared tolerance eps_fair,n, with 0 < eps_fair < 0.5 (a tolerance of 0.5 or more
on a [0, 1] score would admit everything). Conditions come only from the metadata columns of the
score table (entry_hash, backbone, entry_condition, length_view), so permuting or changing the
scores cannot change a decision.

Terms of Eq. (3) vanish when the corresponding condition is exactly matched (Appendix A.2,
"When terms vanish"): equal entry hashes on every common task -> no entry term (and no slack);
same channel (length_view) -> no continuation term; same protocol (entry_condition) -> no
protocol term. All three matched -> exact, radius 0, admissible whatever the tolerance (the
paper's leaderboard, Section 6.1). A backbone change in a scaffold window has no finite radius.

A design with ``admissibility: assumed`` (a score table without entry metadata, where nothing
can be tested) admits every pair by the user's assertion instead: :func:`admit_assumed`, radius 0
as for an exactly matched pair, reason ``admissibility_assumed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kit.certify.design import FAIR_MAX, Design
from kit.certify.nuisance import SystemNuisance, nuisance_radius


@dataclass(frozen=True)
class PairConditions:
    """What the design and the metadata say about a pair, without reading a score."""

    entries_match: bool
    channel_match: bool
    protocol_match: bool
    backbone_match: bool

    @property
    def exact(self) -> bool:
        return self.entries_match and self.channel_match and self.protocol_match


@dataclass(frozen=True)
class Admission:
    """Definition 1's decision for one (pair, readout), with a machine-readable reason."""

    admissible: bool
    eps_outside: float  # inf where no finite radius exists
    eps_fair: float  # NaN where none is declared or needed
    reason: str


def admit(a: str, b: str, readout: str, cond: PairConditions, design: Design) -> Admission:
    """Definition 1 + Theorem 1 for systems ``a``, ``b`` under ``readout``.

    Reasons: ``exact``, ``within_tolerance`` (admitted); ``backbone_differs``,
    ``no_nuisance_constants``, ``undeclared_constants:<system>``, ``no_tolerance``,
    ``tolerance_unusable``, ``radius_infinite``, ``radius_exceeds_tolerance`` (refused).
    """
    eps_fair = design.tolerance.get(readout)
    fair = math.nan if eps_fair is None else float(eps_fair)
    if design.window == "scaffold" and not cond.backbone_match:
        return Admission(False, math.inf, fair, "backbone_differs")
    if cond.exact:
        # radius 0: admissible whatever the tolerance -- but a declared one must still be usable
        if eps_fair is not None and not 0 < fair < FAIR_MAX:
            return Admission(False, 0.0, fair, "tolerance_unusable")
        return Admission(True, 0.0, fair, "exact")
    nuis = design.nuisance
    if nuis is None:
        return Admission(False, math.inf, fair, "no_nuisance_constants")
    for s in (a, b):
        if s not in nuis.systems:
            return Admission(False, math.inf, fair, f"undeclared_constants:{s}")
    ca, cb = nuis.systems[a], nuis.systems[b]
    if cond.entries_match:  # mu_X = mu for both: no entry term and no slack (Theorem 1)
        ca = SystemNuisance(ca.L_M, 0.0, ca.xi, ca.eps_cont)
        cb = SystemNuisance(cb.L_M, 0.0, cb.xi, cb.eps_cont)
    if cond.channel_match:
        ca = SystemNuisance(ca.L_M, ca.eps_in, ca.xi, 0.0)
        cb = SystemNuisance(cb.L_M, cb.eps_in, cb.xi, 0.0)
    protocol = 0.0 if cond.protocol_match else (nuis.eps_protocol.get(readout) or 0.0)
    radius = nuisance_radius(
        ca,
        cb,
        L_s=_const(nuis.L_s.get(readout), 1.0),
        L_C=_const(nuis.L_C.get(readout), 1.0),
        eps_protocol=protocol,
    )
    if eps_fair is None:
        return Admission(False, radius, fair, "no_tolerance")
    if not 0 < fair < FAIR_MAX:
        return Admission(False, radius, fair, "tolerance_unusable")
    if not math.isfinite(radius):
        return Admission(False, radius, fair, "radius_infinite")
    if radius > fair:
        return Admission(False, radius, fair, "radius_exceeds_tolerance")
    return Admission(True, radius, fair, "within_tolerance")


ASSUMED_REASON = "admissibility_assumed"


def admit_assumed(readout: str, design: Design) -> Admission:
    """The user's assertion (``admissibility: assumed``) for one (pair, readout): admitted as if
    exactly matched (eps_outside = 0), reason ``admissibility_assumed``. Nothing is tested: the
    score table carries no entry metadata to test against."""
    eps_fair = design.tolerance.get(readout)
    return Admission(True, 0.0, math.nan if eps_fair is None else float(eps_fair), ASSUMED_REASON)


def _const(value: float | None, default: float) -> float:
    return default if value is None else float(value)
