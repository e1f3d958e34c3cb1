"""Readout normalisation, axes and the composite (paper Section 6.1).

docs/architecture.md, "Certified leaderboard".

* Quality readouts are normalised to the human band:
  z = clip((s - q10_peers) / (s_target - q10_peers), 0, 1), where q10_peers is the 10th
  percentile of the peer systems on that task and s_target the human target score.
* Style readouts score closeness to the human peer band [lo, hi]:
  z = clip(1 - dist(s, [lo, hi]) / (hi - lo), 0, 1) -- our reading of "distance to the peer
  band" (1 inside the band, falling to 0 one band-width outside it); the paper gives no formula.
* An axis is the mean of its present readouts; the composite is the equal-weight mean of the
  axes per (system, task), defined only where every axis is present.

The per-task targets are not part of the score table: they are an explicit optional input.
Readouts of kind ``normalised`` (the default) are taken as already on the human-band scale.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def normalise_quality(s: np.ndarray, q10_peers: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Human-band normalisation of a quality readout; NaN where target <= q10 (undefined)."""
    s, lo, hi = (np.asarray(x, dtype=float) for x in (s, q10_peers, target))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (s - lo) / (hi - lo)
    return np.where(hi > lo, np.clip(z, 0.0, 1.0), np.nan)


def normalise_style(s: np.ndarray, band_lo: np.ndarray, band_hi: np.ndarray) -> np.ndarray:
    """Closeness of a style readout to the peer band; NaN where the band is empty."""
    s, lo, hi = (np.asarray(x, dtype=float) for x in (s, band_lo, band_hi))
    dist = np.maximum(np.maximum(lo - s, s - hi), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = 1.0 - dist / (hi - lo)
    return np.where(hi > lo, np.clip(z, 0.0, 1.0), np.nan)


def composite(
    cube: np.ndarray, readouts: list[str], axes: Mapping[str, tuple[str, ...]] | None
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Composite (S, T) and per-axis (S, T) matrices from a (R, S, T) readout cube (NaN = missing).

    ``axes=None`` makes every readout its own axis. An axis is NaN where none of its readouts is
    present; the composite is NaN where any axis is NaN.
    """
    index = {r: i for i, r in enumerate(readouts)}
    groups = axes if axes is not None else {r: (r,) for r in readouts}
    axis_mats: dict[str, np.ndarray] = {}
    for name, members in groups.items():
        block = cube[[index[r] for r in members]]
        present = np.isfinite(block)
        count = present.sum(axis=0)
        total = np.where(present, block, 0.0).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            axis_mats[name] = np.where(count > 0, total / count, np.nan)
    stacked = np.stack(list(axis_mats.values()))
    # A plain mean propagates NaN, which is exactly "only where every axis is present".
    return stacked.mean(axis=0), axis_mats
