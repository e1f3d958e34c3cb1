"""Internal consistency of the transcribed published board (``published/biolitbench_board.csv``).

Pure: a validated board frame in, one result row per board row out. Checks, per row:

1. **Composite = equal-weight mean of the printed axes** (docs/architecture.md, "Certified
   leaderboard"). Every printed number is rounded to 3 decimals, i.e. off by at most 0.0005 from the
   value the paper computed. The mean of k rounded axes is then off by at most 0.0005 (the mean of
   errors each in [-0.0005, 0.0005]), and the printed composite by another 0.0005, so an honest row
   satisfies ``|composite - mean(axes)| <= 0.001``. :data:`ROUNDING_TOLERANCE` is that bound (plus
   1e-9 for binary floating point); anything larger cannot come from rounding alone.
2. **Rank interval**: ``1 <= rank_lo <= rank_hi <= ranked_systems``, and a table never lists more
   systems than it ranks over (the paper ranks one commercial system it does not report).
3. **Axes present as the entry condition requires**: retrieval is scored only under
   ``same_pool``; every other axis is always present.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

AXES = ("retrieval", "synthesis", "reasoning", "planning", "writing", "form")
PRINT_DECIMALS = 3
ROUNDING_TOLERANCE = 2 * 0.5 * 10.0**-PRINT_DECIMALS + 1e-9


def expected_axes(entry_condition: str) -> tuple[str, ...]:
    """Axes a row must carry: all six under same_pool, all but retrieval otherwise."""
    return AXES if entry_condition == "same_pool" else tuple(a for a in AXES if a != "retrieval")


def check_board(board: pd.DataFrame, tolerance: float = ROUNDING_TOLERANCE) -> pd.DataFrame:
    """One row per board row: the recomputed mean, |delta|, and every check that failed.

    Columns: table, system, composite, axes_mean, n_axes, abs_delta, tolerance, rank_lo,
    rank_hi, ranked_systems, ok, failures (``;``-separated reason codes, empty when ok).
    """
    listed = board.groupby("table")["system"].transform("count")
    rows = []
    for rec, n_listed in zip(board.to_dict("records"), listed, strict=True):
        failures: list[str] = []
        want = expected_axes(rec["entry_condition"])
        present = tuple(a for a in AXES if not pd.isna(rec[a]))
        missing = [a for a in want if a not in present]
        extra = [a for a in present if a not in want]
        if missing:
            failures.append("axis_missing:" + ",".join(missing))
        if extra:
            failures.append("axis_unexpected:" + ",".join(extra))
        values = np.array([rec[a] for a in present], dtype=float)
        axes_mean = float(values.mean()) if len(values) else float("nan")
        delta = abs(rec["composite"] - axes_mean) if len(values) else float("nan")
        if not len(values):
            failures.append("no_axes")
        elif delta > tolerance:
            failures.append("composite_mismatch")
        lo, hi, n = int(rec["rank_lo"]), int(rec["rank_hi"]), int(rec["ranked_systems"])
        if not 1 <= lo <= hi <= n:
            failures.append("rank_interval_invalid")
        if n_listed > n:
            failures.append("more_systems_than_ranked")
        rows.append(
            {
                "table": rec["table"],
                "entry_condition": rec["entry_condition"],
                "length_view": rec["length_view"],
                "system": rec["system"],
                "composite": float(rec["composite"]),
                "axes_mean": axes_mean,
                "n_axes": len(values),
                "abs_delta": delta,
                "tolerance": tolerance,
                "rank_lo": lo,
                "rank_hi": hi,
                "ranked_systems": n,
                "ok": not failures,
                "failures": ";".join(failures),
            }
        )
    return pd.DataFrame(rows)


def summarise(result: pd.DataFrame) -> dict[str, float | int]:
    """Rows checked, rows failing, max |delta| (over rows with axes), per-reason counts."""
    reasons: dict[str, int] = {}
    for f in result["failures"]:
        for code in filter(None, f.split(";")):
            key = code.split(":", 1)[0]
            reasons[key] = reasons.get(key, 0) + 1
    return {
        "rows_checked": len(result),
        "rows_failing": int((~result["ok"]).sum()),
        "max_abs_delta": float(np.nanmax(result["abs_delta"])) if len(result) else float("nan"),
        "tolerance": float(result["tolerance"].iloc[0]) if len(result) else float("nan"),
        **{f"failing_{k}": v for k, v in sorted(reasons.items())},
    }
