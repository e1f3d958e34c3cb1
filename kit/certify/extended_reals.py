"""Products of bound constants in [0, inf] with the paper's rule 0 * inf = 0.

"What Can a Leaderboard Certify?" multiplies distances by Lipschitz constants in Theorem 1
(Eq. (3)), Theorem 2 (Eqs. (12)-(13)), Corollaries 2-3 (Eq. (14)) and Theorem 3 (Eq. (15)).
Its proofs decide a zero factor against an unbounded one the same way every time:

* a zero *distance* means two identical laws, and the term is 0 "with no appeal to" the
  constant multiplying it (Theorem 1, proof, Step 3: mu_X = mu charges neither L_M nor xi; the
  proof of Theorem 2: Delta_{k-1} = 0 makes the second term of the triangle inequality the
  distance between two equal laws, whatever L_k is);
* a zero *constant* means a map that forgets its input: an L_k = 0 stage satisfies Eq. (11) as
  W(nu Q, nu' Q) <= xi_k for every admissible pair, however far apart nu and nu' are (likewise
  L_M = 0, L_C = 0, L_s = 0 or L_U = 0 in Eqs. (3) and (15)).

So a product with a zero factor is 0, and otherwise a product with an infinite factor is inf
(a vacuous bound, printed as such, never NaN). This is ordinary multiplication on [0, inf] with
the measure-theory convention, which is associative and commutative, so the recursion of
Eq. (13) and the product form of Eq. (12) agree on every input. Every bound of the theory and
certify code multiplies its constants through :func:`times` / :func:`prod`; no caller
multiplies a constant by a distance itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from kit.core.errors import check_param


def times(*factors: float) -> float:
    """The product of nonnegative factors in [0, inf], with 0 * inf = 0 (module docstring).

    An empty product is 1. NaN or negative factors are refused (ConfigError).
    """
    vals = [float(f) for f in factors]
    ok = all(v >= 0 for v in vals)  # False for NaN as well
    check_param("factors", vals, ok, "numbers in [0, inf]", "times")
    if any(v == 0 for v in vals):
        return 0.0
    return math.prod(vals)


def prod(values: Iterable[float]) -> float:
    """:func:`times` over an iterable (``prod([])`` is 1, the empty product of Eq. (12))."""
    return times(*values)
