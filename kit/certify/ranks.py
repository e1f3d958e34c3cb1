"""Rank intervals from certified relations (Section 3.4, Appendix A.3).

The certified relation "A above B" is closed transitively; when the closure is a strict partial
order, a system's rank interval is the range of positions it takes over all linear extensions:
rank_lo = 1 + #systems certified above it, rank_hi = n - #systems certified below it (these
bounds are attained: put the up-set first/last). A cycle is an error naming its systems, never
an interval with lo > hi.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kit.core.errors import InputError


@dataclass(frozen=True)
class RankIntervals:
    """Per-system rank intervals (arrays aligned with ``systems``)."""

    systems: tuple[str, ...]
    rank_lo: np.ndarray
    rank_hi: np.ndarray
    closure: np.ndarray  # closure[i, j]: i certified above j (transitively)
    tie_group: np.ndarray | None  # group index per system when the order is a weak order


def transitive_closure(above: np.ndarray) -> np.ndarray:
    """Boolean transitive closure (Warshall, vectorised per pivot)."""
    c = np.asarray(above, dtype=bool).copy()
    for k in range(c.shape[0]):
        c |= np.outer(c[:, k], c[k, :])
    return c


def _find_cycle(above: np.ndarray, systems: tuple[str, ...]) -> list[str]:
    """One directed cycle of ``above`` (depth-first search), as system names."""
    n = above.shape[0]
    colour = [0] * n
    stack: list[int] = []

    def visit(u: int) -> list[int] | None:
        colour[u] = 1
        stack.append(u)
        for v in np.flatnonzero(above[u]):
            v = int(v)
            if colour[v] == 1:
                return stack[stack.index(v) :]
            if colour[v] == 0:
                found = visit(v)
                if found:
                    return found
        stack.pop()
        colour[u] = 2
        return None

    for s in range(n):
        if colour[s] == 0:
            cyc = visit(s)
            if cyc:
                return [systems[i] for i in cyc]
    return []


def rank_intervals(systems: list[str] | tuple[str, ...], above: np.ndarray) -> RankIntervals:
    """Rank intervals of ``systems`` given ``above[i, j]`` = i certified above j.

    Raises :class:`InputError` (reason ``certified_cycle``) naming the systems on a cycle.
    """
    names = tuple(systems)
    above = np.asarray(above, dtype=bool)
    closure = transitive_closure(above)
    if np.any(np.diag(closure)):
        cycle = _find_cycle(above, names)
        raise InputError(
            "certified_cycle",
            "certified relations form a cycle: " + " > ".join([*cycle, cycle[0]]),
        )
    n = len(names)
    n_above = closure.sum(axis=0)
    n_below = closure.sum(axis=1)
    return RankIntervals(
        systems=names,
        rank_lo=1 + n_above,
        rank_hi=n - n_below,
        closure=closure,
        tie_group=tie_groups(closure),
    )


def tie_groups(closure: np.ndarray) -> np.ndarray | None:
    """Tie groups (1 = top) when the order is a weak order, else None.

    A strict partial order is a weak order iff incomparability is transitive; the classes of
    incomparability are then totally ordered and every system in a class shares its interval.
    """
    n = closure.shape[0]
    incomparable = ~(closure | closure.T)
    # Incomparability must be an equivalence (reflexive by construction; check transitivity).
    inc = incomparable.astype(np.int64)
    if np.any(((inc @ inc) > 0) & ~incomparable):
        return None
    groups = np.full(n, -1)
    order = np.argsort(closure.sum(axis=0), kind="stable")  # fewest above first
    g = 0
    for i in order:
        if groups[i] >= 0:
            continue
        groups[incomparable[i]] = g
        g += 1
    return groups + 1
