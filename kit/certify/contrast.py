"""The certification decision of Eq. (4) and its undecided reasons (Appendix A.3).

Certified iff |gap| > q_n(delta') + eps_outside,n (strict). Otherwise undecided:
*attribution-limited* when eps_outside > 0 and |gap| <= eps_outside (more tasks cannot help),
else *sampling-limited* (a gap of exactly 0 on an exact pair is sampling-limited: with
eps_outside = 0 more tasks are all that could ever decide it). Pairs refused by Definition 1,
with too few common tasks, with fewer than two clusters, or whose standard error is at or below
:data:`kit.stats.cluster.SE_FLOOR` (no measured variation: a constant per-task gap or identical
systems -- a radius of 0 would "certify" any nonzero constant gap from one draw of tasks) get
those verdicts instead -- never a silent "not significant".
"""

from __future__ import annotations

import numpy as np

from kit.stats.cluster import SE_FLOOR

VERDICTS = (
    "certified",
    "undecided_sampling",
    "undecided_attribution",
    "refused",
    "too_few_tasks",
    "too_few_clusters",
    "too_little_variation",
)


def decide(
    admissible: np.ndarray,
    n: np.ndarray,
    k: np.ndarray,
    gap: np.ndarray,
    q: np.ndarray,
    eps_outside: np.ndarray,
    min_common_tasks: int,
    se: np.ndarray | None = None,
) -> np.ndarray:
    """Vectorised Eq. (4): one verdict string per contrast (arrays broadcast together).

    Precedence: refused (decided before scores) > too_few_tasks > too_few_clusters >
    too_little_variation (``se`` <= SE_FLOOR; skipped when ``se`` is None) > Eq. (4).
    """
    admissible = np.asarray(admissible, dtype=bool)
    absgap = np.abs(np.asarray(gap, dtype=float))
    eps = np.asarray(eps_outside, dtype=float)
    flat = np.zeros(absgap.shape, dtype=bool) if se is None else np.asarray(se) <= SE_FLOOR
    with np.errstate(invalid="ignore"):
        certified = absgap > np.asarray(q, dtype=float) + eps
        attribution = (eps > 0) & (absgap <= eps)
    return np.select(
        [
            ~admissible,
            np.asarray(n) < min_common_tasks,
            np.asarray(k) < 2,
            flat,
            certified,
            attribution,
        ],
        [
            "refused",
            "too_few_tasks",
            "too_few_clusters",
            "too_little_variation",
            "certified",
            "undecided_attribution",
        ],
        default="undecided_sampling",
    )


def mde(q: np.ndarray, eps_outside: np.ndarray) -> np.ndarray:
    """Minimum detectable effect of Eq. (4): the smallest |gap| that could certify."""
    return np.asarray(q, dtype=float) + np.asarray(eps_outside, dtype=float)
