"""The review queue's order (issue 56): the flagged citations in the order a reviewer should
read them (pure).

First the identifiers that do not exist (``notfound``: one lookup confirms a fabricated
citation), then the conformal flags by support score, lowest first (the verifier is surest these
do not support their claim), then any other flag; ties by run, claim and citation. The window
each one's score was decided on is :func:`kit.audit.review.deciding_windows`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

NOT_FOUND = "notfound"
CONFORMAL = "score_at_or_below_tau"


def review_order(flagged: pd.DataFrame) -> pd.DataFrame:
    """``flagged`` (citations.csv rows with ``flagged``) in review order (module doc)."""
    reason = flagged["flag_reason"].astype(str)
    rank = np.where(reason == NOT_FOUND, 0, np.where(reason == CONFORMAL, 1, 2))
    score = pd.to_numeric(flagged["support_score"], errors="coerce").fillna(np.inf)
    keyed = flagged.assign(_rank=rank, _score=score.to_numpy())
    keyed = keyed.sort_values(["_rank", "_score", "run_id", "claim_no", "citation"], kind="stable")
    return keyed.drop(columns=["_rank", "_score"])
