"""One sample's citation rows -> the citation scorer's value, summary line and per-citation
list (pure; :mod:`kit.inspect_ext.scorer` wraps them in an inspect_ai ``Score``).

The rows are the flagged citation rows of :func:`kit.audit.pipeline.guard_runs`, the same rows
(and columns) ``kit audit`` writes to citations.csv for that run, so :func:`sample_value` of a
run's citations.csv rows is that sample's score value (tests/inspect_ext prove it).

Value keys (every one an int, but ``unsupported_rate``):

* ``cited`` -- citation rows: one per (claim, cited identifier), and one per listed reference no
  claim cites (docs/runs.md, "How `kit audit` reads a run");
* ``found`` / ``notfound`` / ``unchecked`` -- L1: in a corpus; absent from a corpus that
  declares it covered (possible fabrication); outside every declared coverage;
* ``scored`` -- rows with a support score (L1 found or unchecked, a passage to read);
* ``supported`` -- scored rows whose L2 is ``yes`` (score >= ``yes_at``);
* ``flagged`` -- rows flagged for review for any reason (notfound, no_passage, score <= tau,
  refused): the review list;
* ``unsupported_rate`` -- scored rows flagged by the conformal rule (s <= tau) / ``scored``:
  the sample's share of ``kit audit``'s ``flag_rate``. A sample with nothing scored (no
  citations, or none with a passage) has no rate: NaN, which inspect_ai 0.3.285 treats as
  *unscored for that key* (its dict-metric expansion and its epoch reducers skip a per-key NaN
  and count it in that key's ``unscored_samples``) -- never 0, which would read as "all
  supported".
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from kit.grade.citation_audit import L2_SCORED

VALUE_KEYS = (
    "cited",
    "found",
    "notfound",
    "unchecked",
    "scored",
    "supported",
    "flagged",
    "unsupported_rate",
)
CITATION_FIELDS = (
    "claim_no",
    "citation",
    "id_type",
    "value",
    "l1",
    "l2",
    "support_score",
    "flagged",
    "flag_reason",
    "evidence",
)


def _scored(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["support_score"].notna() & rows["l1"].isin(L2_SCORED)]


def sample_value(rows: pd.DataFrame) -> dict[str, int | float]:
    """The score value of one sample's citation rows (module doc)."""
    scored = _scored(rows)
    at_tau = int((scored["flag_reason"] == "score_at_or_below_tau").sum())
    l1 = rows["l1"].value_counts()
    return {
        "cited": len(rows),
        "found": int(l1.get("found", 0)),
        "notfound": int(l1.get("notfound", 0)),
        "unchecked": int(l1.get("unchecked", 0)),
        "scored": len(scored),
        "supported": int((scored["l2"] == "yes").sum()),
        "flagged": int(rows["flagged"].astype(bool).sum()),
        "unsupported_rate": at_tau / len(scored) if len(scored) else math.nan,
    }


def _plain(v: Any) -> Any:
    """A JSON-ready cell: numpy scalars as Python ones, NaN / missing as None."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if hasattr(v, "item"):
        v = v.item()
        if isinstance(v, float) and math.isnan(v):
            return None
    return v


def citation_list(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """One entry per citation row, in citations.csv's order: :data:`CITATION_FIELDS`
    (``citation`` the label, ``value`` the canonical identifier, ``support_score`` None when
    nothing was scored)."""
    return [
        {k: _plain(r[k]) for k in CITATION_FIELDS}
        for r in rows[list(CITATION_FIELDS)].to_dict("records")
    ]


def summary_line(value: dict[str, int | float], tau: float) -> str:
    """A short line for the score's ``answer``: counts, and the operating point."""
    if not value["cited"]:
        return "no citations"
    rate = value["unsupported_rate"]
    shown = "n/a" if isinstance(rate, float) and math.isnan(rate) else f"{rate:.2f}"
    return (
        f"{value['cited']} citation(s): {value['supported']} supported, {value['flagged']} "
        f"flagged, {value['unchecked']} unchecked; unsupported rate {shown} (tau {tau:.4g})"
    )
