"""Cell-by-cell comparison of a recomputed table against its frozen expected version. Pure."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class CellDiff:
    table: str
    key: str  # "col=value, col=value"
    column: str
    expected: str
    got: str
    abs_delta: float | None  # numeric cells only
    tolerance: float | None
    kind: str  # value | missing_row | extra_row | missing_column | extra_column


@dataclass(frozen=True)
class TableComparison:
    table: str
    cells_compared: int
    max_abs_delta: float
    diffs: tuple[CellDiff, ...]


def _is_num(v: object) -> bool:
    if isinstance(v, bool):
        return False
    try:
        float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


def _text(v: object) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v)


def compare_tables(
    table: str,
    expected: pd.DataFrame,
    got: pd.DataFrame,
    key: list[str],
    tolerance: dict[str, float] | None = None,
    default_tolerance: float = 0.0,
    ignore: list[str] | None = None,
) -> TableComparison:
    """Compare ``got`` with ``expected`` row by row (matched on ``key``), cell by cell.

    Numeric cells match when ``|got - expected| <= tolerance[column]`` (default
    ``default_tolerance``); both empty counts as equal; text cells must be equal. Rows or
    columns present on one side only are differences too.
    """
    tolerance = tolerance or {}
    ignore = set(ignore or [])
    diffs: list[CellDiff] = []
    exp_cols = [c for c in expected.columns if c not in ignore]
    got_cols = [c for c in got.columns if c not in ignore]
    for c in exp_cols:
        if c not in got_cols:
            diffs.append(CellDiff(table, "", c, "(column)", "", None, None, "missing_column"))
    for c in got_cols:
        if c not in exp_cols:
            diffs.append(CellDiff(table, "", c, "", "(column)", None, None, "extra_column"))
    cols = [c for c in exp_cols if c in got_cols and c not in key]

    def keyed(frame: pd.DataFrame) -> dict[tuple[str, ...], dict[str, object]]:
        return {tuple(_text(rec[k]) for k in key): rec for rec in frame.to_dict("records")}

    e_rows, g_rows = keyed(expected), keyed(got)
    compared = 0
    max_delta = 0.0
    for k in sorted(set(e_rows) | set(g_rows)):
        label = ", ".join(f"{c}={v}" for c, v in zip(key, k, strict=True))
        if k not in g_rows:
            diffs.append(CellDiff(table, label, "", "(row)", "", None, None, "missing_row"))
            continue
        if k not in e_rows:
            diffs.append(CellDiff(table, label, "", "", "(row)", None, None, "extra_row"))
            continue
        e, g = e_rows[k], g_rows[k]
        for c in cols:
            compared += 1
            ev, gv = e[c], g[c]
            et, gt = _text(ev), _text(gv)
            if et == gt:
                if _is_num(ev) and _is_num(gv) and et != "":
                    continue
                continue
            if _is_num(ev) and _is_num(gv) and et != "" and gt != "":
                ef, gf = float(ev), float(gv)  # type: ignore[arg-type]
                if math.isinf(ef) or math.isinf(gf):
                    ok = ef == gf
                    delta = 0.0 if ok else math.inf
                else:
                    delta = abs(gf - ef)
                    ok = delta <= tolerance.get(c, default_tolerance)
                max_delta = max(max_delta, delta if np.isfinite(delta) else max_delta)
                if not ok:
                    diffs.append(
                        CellDiff(
                            table,
                            label,
                            c,
                            et,
                            gt,
                            delta,
                            tolerance.get(c, default_tolerance),
                            "value",
                        )
                    )
            else:
                diffs.append(CellDiff(table, label, c, et, gt, None, None, "value"))
    return TableComparison(table, compared, max_delta, tuple(diffs))
