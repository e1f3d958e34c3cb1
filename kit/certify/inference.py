"""The sampling radius q_n(delta') of Eq. (4), by the design's small-sample inference method.

``inference`` in the design picks how the half-width of the interval for a mean paired
difference is built from K clusters (kit/stats/cluster.py and kit/stats/signflip.py hold the
formulas):

* ``cr1``      CR1 sandwich with t(K-1): the paper's radius, anti-conservative with few or
               unequal clusters.
* ``cr2``      bias-reduced CR2 with Bell-McCaffrey (Satterthwaite) degrees of freedom
               (Imbens and Kolesar 2016; Pustejovsky and Tipton 2018).
* ``crv3``     the cluster jackknife CV3 with t(K-1) (MacKinnon, Nielsen and Webb 2023).
* ``signflip`` the exact cluster sign-flip randomisation test (all 2^K sign vectors when
               2^K <= draws), inverted at the point of {|mu| <= eps_outside} nearest the gap.

The default, :data:`DEFAULT_INFERENCE`, is the method that kept family-wise false
certification at or below alpha (plus Monte-Carlo slack) in every cell of the simulation of
docs/certify.md (reproduce/certify_inference_simulation.yaml) at the best power there.
Whatever the method, the ``q`` it returns is the radius the verdict uses (q = crit * se).
"""

from __future__ import annotations

import numpy as np

from kit.core.errors import check_param
from kit.stats.cluster import ClusterT, cluster_t
from kit.stats.signflip import signflip_t

INFERENCE = ("cr1", "cr2", "crv3", "signflip")
DEFAULT_INFERENCE = "cr2"
DEFAULT_DRAWS = 9999


def sampling_radius(
    d: np.ndarray,
    codes: np.ndarray,
    n_clusters: int,
    delta: float | np.ndarray,
    method: str,
    eps_outside: np.ndarray,
    draws: int,
    rng: np.random.Generator,
) -> ClusterT:
    """q_n(delta') of every row of ``d`` (P, T) by ``method``; ``eps_outside`` (P,) is used by
    ``signflip`` only (its null point), as are ``draws`` and ``rng`` (when 2^K > draws).
    """
    check_param("inference", method, method in INFERENCE, f"one of {INFERENCE}", "sampling_radius")
    if method != "signflip":
        return cluster_t(d, codes, n_clusters, delta, method)
    return signflip_t(d, codes, n_clusters, delta, eps_outside, draws, rng)
