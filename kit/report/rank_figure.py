"""The rank-interval figure (like Figure 1 of "What Can a Leaderboard Certify?").

Each bar spans every position a system can take in an order consistent with the certified
relations; a pinned rank is a single marker. Systems are sorted by composite, shown at right.
Written atomically as PNG with the Agg backend (no display needed).
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from kit import atomic


def write_rank_figure(
    ranks: pd.DataFrame, path: str | os.PathLike[str], title: str = "Certified rank intervals"
) -> Path:
    """Draw ``ranks`` (schema ``certify_ranks``) to ``path`` as a PNG; returns the path."""
    data = ranks.sort_values(["composite", "system"], ascending=[False, True], na_position="last")
    n = len(data)
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * n + 1.2), dpi=120)
    ys = list(range(n))[::-1]
    for y, rec in zip(ys, data.itertuples(index=False), strict=True):
        if rec.pinned:
            ax.plot([rec.rank_lo], [y], marker="o", color="black")
        else:
            ax.plot(
                [rec.rank_lo, rec.rank_hi], [y, y], color="tab:blue", lw=6, solid_capstyle="butt"
            )
        label = "" if pd.isna(rec.composite) else f"{rec.composite:.3f}"
        ax.text(n + 0.7, y, label, va="center", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels(list(data["system"]), fontsize=8)
    ax.set_xlim(0.5, n + 1.6)
    ax.set_xticks(range(1, n + 1))
    ax.set_xlabel("rank (1 = best)")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    with atomic.staged_file(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})
    plt.close(fig)
    return Path(path)
