"""The review queue's deciding windows (issue 56): for each flagged citation, the window of
the passage L2 read whose score is the citation's support score (s = max over windows) -- the
sentences a reviewer must read first, highlighted on the page (the queue's order:
:func:`kit.report.review_queue.review_order`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def deciding_windows(
    pairs: Mapping[str, tuple[str, str]], scorer: Any, window: Any
) -> dict[str, str]:
    """item_id -> the window of its passage with the highest score against its claim, scored
    through ``scorer`` (the audit's score store: a re-audit rescores nothing) under the
    verifier's window rule ``window``; a passage of one window is its own. Items whose passage
    yields no window are left out."""
    from kit.guard.scoring.windows import passage_windows

    items, claims, wins, owner = list(pairs), [], [], []
    for k, item in enumerate(items):
        claim, passage = pairs[item]
        for w in passage_windows(passage, window):
            claims.append(claim)
            wins.append(w)
            owner.append(k)
    if not wins:
        return {}
    s = np.asarray(scorer.score(claims, wins), dtype=float)
    best: dict[int, int] = {}
    for j, k in enumerate(owner):
        if k not in best or s[j] > s[best[k]]:
            best[k] = j
    return {items[k]: wins[j] for k, j in best.items()}
