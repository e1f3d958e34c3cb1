"""The rank-interval figure (like Figure 1 of "What Can a Leaderboard Certify?").

Each bar spans every position a system can take in an order consistent with the certified
relations; a pinned rank is a single marker. Systems are sorted by composite, shown at right.
Legible at a glance: every label at least the tick size, alpha in the title, and a SYNTHETIC
stamp when the scores were generated. Written atomically as PNG with the Agg backend (no
display needed).
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from kit.core import atomic

TICK_SIZE = 10  # every text on the figure is at least this size


def figure_title(title: str, alpha: float | None, synthetic: bool) -> str:
    """The title with alpha (when known) and the SYNTHETIC label (when generated)."""
    text = title if alpha is None else f"{title} at alpha = {alpha:g}"
    return f"SYNTHETIC board: {text}" if synthetic else text


def write_rank_figure(
    ranks: pd.DataFrame,
    path: str | os.PathLike[str],
    title: str = "Certified rank intervals",
    alpha: float | None = None,
    synthetic: bool = False,
) -> Path:
    """Draw ``ranks`` (schema ``certify_ranks``) to ``path`` as a PNG; returns the path."""
    fig = rank_figure(ranks, title, alpha, synthetic)
    with atomic.staged_file(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    plt.close(fig)
    return Path(path)


def rank_figure(
    ranks: pd.DataFrame,
    title: str = "Certified rank intervals",
    alpha: float | None = None,
    synthetic: bool = False,
) -> Figure:
    """The figure itself (the caller closes it)."""
    data = ranks.sort_values(["composite", "system"], ascending=[False, True], na_position="last")
    n = len(data)
    fig, ax = plt.subplots(figsize=(6.4, 0.5 * n + 1.6), dpi=120)
    ys = list(range(n))[::-1]
    for y, rec in zip(ys, data.itertuples(index=False), strict=True):
        if rec.pinned:
            ax.plot([rec.rank_lo], [y], marker="o", color="black")
        else:
            ax.plot(
                [rec.rank_lo, rec.rank_hi], [y, y], color="tab:blue", lw=6, solid_capstyle="butt"
            )
        label = "" if pd.isna(rec.composite) else f"{rec.composite:.3f}"
        ax.text(n + 0.7, y, label, va="center", fontsize=TICK_SIZE)
    if n:
        ax.text(n + 0.7, n - 0.4, "composite", va="bottom", fontsize=TICK_SIZE, style="italic")
    ax.set_yticks(ys)
    ax.set_yticklabels(list(data["system"]))
    ax.tick_params(labelsize=TICK_SIZE)
    ax.set_xlim(0.5, n + 2.0)
    ax.set_ylim(-0.7, n + 0.1)
    ax.set_xticks(range(1, n + 1))
    ax.set_xlabel("rank (1 = best)", fontsize=TICK_SIZE + 1)
    ax.set_title(figure_title(title, alpha, synthetic), fontsize=TICK_SIZE + 2)
    if synthetic:
        ax.text(
            0.5,
            0.5,
            "SYNTHETIC",
            transform=ax.transAxes,
            fontsize=TICK_SIZE * 3,
            color="#b8860b",
            alpha=0.25,
            ha="center",
            va="center",
            rotation=20,
        )
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
