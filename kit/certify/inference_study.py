"""Family-wise false certification and power of each inference method on SYNTHETIC boards.

The evidence behind :data:`kit.certify.inference.DEFAULT_INFERENCE` (docs/certify.md). Each cell
(K clusters, balanced or unequal sizes) draws ``n_boards`` null boards (every system equal in
truth) and ``n_boards`` alternative boards (system A ahead of the others by ``effect``) from
:func:`kit.certify.simulate.simulate_board`, and runs every board through the whole certify
engine (:func:`kit.certify.engine.pair_verdicts`, the verdicts of ``kit certify``) once per method -- the same boards for
every method (common random numbers), so methods differ only in their radius.

* fwer: the share of null boards with at least one certified pair of the readout (alpha = 0.05,
  all pairs, Bonferroni over the pairs of that readout: ``multiplicity: pairs``), with a Wilson
  95% interval;
* power: the mean share of the truly different pairs (A against each other system) certified
  with the right winner on the alternative boards, and its normal-approximation 95% interval
  over boards.

Pure: boards are seeded by ``np.random.default_rng([seed, cell, board])``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from kit.certify.design import Design
from kit.certify.engine import Board, pair_verdicts, prepare_board
from kit.certify.inference import INFERENCE
from kit.certify.simulate import simulate_board, unequal_sizes
from kit.stats.wilson import wilson_ci

SHAPES = ("balanced", "unequal")


@dataclasses.dataclass(frozen=True)
class StudyBoard:
    """The shape of the synthetic boards of one study (same for every cell but K, sizes)."""

    systems: tuple[str, ...] = ("A", "B", "C", "D", "E")
    n_tasks: int = 60
    effect: float = 0.15  # A's true lead on the alternative boards
    cluster_sd: float = 0.08  # system-by-cluster effect (strong: as large as the noise)
    noise_sd: float = 0.08
    size_ratio: float = 8.0  # largest / smallest cluster of the unequal shape
    alpha: float = 0.05


def rate_interval(hits: int, n: int) -> tuple[float, float, float]:
    """A share of boards with its Wilson 95% interval: (rate, lo, hi)."""
    ci = wilson_ci(hits, n)
    return hits / n, ci.lo, ci.hi


def mean_interval(x: np.ndarray) -> tuple[float, float, float]:
    """Mean of per-board shares with a normal-approximation 95% interval clipped to [0, 1];
    NaN entries (boards where the share is undefined) are left out; all NaN gives NaNs."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan, math.nan
    half = 1.96 * x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else math.nan
    mean = float(x.mean())
    return mean, float(max(mean - half, 0.0)), float(min(mean + half, 1.0))


def _certified(board: Board, design: Design) -> list[tuple[str, str]]:
    """(winner, loser) of every certified pair of the first readout (the study's only one)."""
    v = pair_verdicts(board, design)
    out = []
    for i, (a, b) in enumerate(v.fam.pairs):
        if v.verdict[i] == "certified":
            out.append((a, b) if v.ct.gap[i] > 0 else (b, a))
    return out


def inference_study(
    ks: Sequence[int],
    n_boards: int,
    seed: int,
    methods: Sequence[str] = INFERENCE,
    shapes: Sequence[str] = SHAPES,
    spec: StudyBoard = StudyBoard(),
) -> pd.DataFrame:
    """One row per (K, shape, method): fwer and power with their 95% intervals (module doc)."""
    # The study reads the verdicts of one readout only, so its family is narrowed to that
    # readout's pairs explicitly (multiplicity "pairs", m = 10): the frozen table is measured
    # on that family.
    designs = {
        m: Design(alpha=spec.alpha, min_common_tasks=2, inference=m, multiplicity="pairs")
        for m in methods
    }
    null = dict.fromkeys(spec.systems, 0.0)
    alt = {s: (spec.effect if i == 0 else 0.0) for i, s in enumerate(spec.systems)}
    leader, others = spec.systems[0], set(spec.systems[1:])
    rows = []
    for cell, (k, shape) in enumerate((k, sh) for k in ks for sh in shapes):
        sizes = unequal_sizes(spec.n_tasks, k, spec.size_ratio) if shape == "unequal" else None
        false_hits = dict.fromkeys(methods, 0)
        power = {m: np.zeros(n_boards) for m in methods}
        for i in range(n_boards):
            for effects, is_null in ((null, True), (alt, False)):
                rng = np.random.default_rng([seed, cell, i, int(is_null)])
                frame = simulate_board(
                    rng,
                    effects,
                    n_tasks=spec.n_tasks,
                    n_clusters=k,
                    cluster_sizes=sizes,
                    cluster_sd=spec.cluster_sd,
                    noise_sd=spec.noise_sd,
                    label=f"study-{shape}-k{k}",
                )
                board = prepare_board(frame, designs[methods[0]])
                for m in methods:
                    cert = _certified(board, designs[m])
                    if is_null:
                        false_hits[m] += int(len(cert) > 0)
                    else:
                        right = sum(1 for w, lo in cert if w == leader and lo in others)
                        power[m][i] = right / len(others)
        for m in methods:
            fwer, fwer_lo, fwer_hi = rate_interval(false_hits[m], n_boards)
            pw, pw_lo, pw_hi = mean_interval(power[m])
            rows.append(
                {
                    "n_clusters": k,
                    "sizes": shape,
                    "method": m,
                    "n_boards": n_boards,
                    "fwer": fwer,
                    "fwer_lo": fwer_lo,
                    "fwer_hi": fwer_hi,
                    "power": pw,
                    "power_lo": pw_lo,
                    "power_hi": pw_hi,
                }
            )
    return pd.DataFrame(rows)
