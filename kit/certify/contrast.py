"""The certification decision of Eq. (4) and its undecided reasons (Appendix A.3).

Certified iff |gap| > q_n(delta') + eps_outside,n (strict). Otherwise undecided:
*attribution-limited* when |gap| <= eps_outside (more tasks cannot help), else
*sampling-limited*. Pairs refused by Definition 1, with too few common tasks, or with fewer
than two clusters get those verdicts instead -- never a silent "not significant".
"""

from __future__ import annotations

import numpy as np

VERDICTS = (
    "certified",
    "undecided_sampling",
    "undecided_attribution",
    "refused",
    "too_few_tasks",
    "too_few_clusters",
)


def decide(
    admissible: np.ndarray,
    n: np.ndarray,
    k: np.ndarray,
    gap: np.ndarray,
    q: np.ndarray,
    eps_outside: np.ndarray,
    min_common_tasks: int,
) -> np.ndarray:
    """Vectorised Eq. (4): one verdict string per contrast (arrays broadcast together).

    Precedence: refused (decided before scores) > too_few_tasks > too_few_clusters > Eq. (4).
    """
    admissible = np.asarray(admissible, dtype=bool)
    absgap = np.abs(np.asarray(gap, dtype=float))
    eps = np.asarray(eps_outside, dtype=float)
    with np.errstate(invalid="ignore"):
        certified = absgap > np.asarray(q, dtype=float) + eps
        attribution = absgap <= eps
    return np.select(
        [
            ~admissible,
            np.asarray(n) < min_common_tasks,
            np.asarray(k) < 2,
            certified,
            attribution,
        ],
        ["refused", "too_few_tasks", "too_few_clusters", "certified", "undecided_attribution"],
        default="undecided_sampling",
    )


def mde(q: np.ndarray, eps_outside: np.ndarray) -> np.ndarray:
    """Minimum detectable effect of Eq. (4): the smallest |gap| that could certify."""
    return np.asarray(q, dtype=float) + np.asarray(eps_outside, dtype=float)
