"""Tables as csv, markdown, LaTeX, JSON and a console view -- deterministic, byte for byte.

Floats are written with a fixed format (``float_format``, default ``%.6g`` for csv and ``%.3f``
for markdown / LaTeX) so the same inputs give byte-identical files on every machine. A csv meant
to be re-used as data (e.g. ``kit certify``'s pairs.csv) passes :data:`FULL_PRECISION`: the
shortest repr that round-trips every float64 exactly (still deterministic).
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from kit.core import atomic
from kit.core.schema import validate_frame

FORMATS = ("table", "csv", "json", "markdown", "latex")
FULL_PRECISION = None  # csv float format: Python's round-trip repr
FILE_SUFFIX = {"csv": ".csv", "markdown": ".md", "latex": ".tex", "json": ".json"}


def _cell(value: Any, float_fmt: str) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return float_fmt % value
    if isinstance(value, bool):
        return "true" if value else "false"
    try:
        if pd.isna(value):
            return ""
    except (TypeError, ValueError):
        pass
    return str(value)


def _rows(frame: pd.DataFrame, float_fmt: str) -> list[list[str]]:
    return [[_cell(v, float_fmt) for v in rec] for rec in frame.itertuples(index=False)]


def to_csv(frame: pd.DataFrame, float_fmt: str | None = "%.6g") -> str:
    buf = io.StringIO()
    frame.to_csv(buf, index=False, float_format=float_fmt, lineterminator="\n")
    return buf.getvalue()


def to_markdown(frame: pd.DataFrame, float_fmt: str = "%.3f") -> str:
    header = [str(c) for c in frame.columns]
    rows = _rows(frame, float_fmt)
    esc = [[c.replace("|", "\\|") for c in r] for r in rows]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(lines) + "\n"


_LATEX_ESC = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_ESC.get(ch, ch) for ch in text)


def to_latex(frame: pd.DataFrame, float_fmt: str = "%.3f", caption: str | None = None) -> str:
    """A booktabs tabular (needs ``\\usepackage{booktabs}``)."""
    cols = [latex_escape(str(c)) for c in frame.columns]
    align = "".join("r" if pd.api.types.is_numeric_dtype(frame[c]) else "l" for c in frame.columns)
    lines = []
    if caption:
        lines.append(f"% {caption}")
    lines += [
        f"\\begin{{tabular}}{{{align}}}",
        "\\toprule",
        " & ".join(cols) + " \\\\",
        "\\midrule",
    ]
    for r in _rows(frame, float_fmt):
        lines.append(" & ".join(latex_escape(c) for c in r) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def to_json(frame: pd.DataFrame) -> str:
    records = []
    for rec in frame.to_dict("records"):
        clean = {}
        for k, v in rec.items():
            if isinstance(v, float) and math.isnan(v):
                v = None
            elif hasattr(v, "item"):
                v = v.item()
            clean[str(k)] = v
        records.append(clean)
    return json.dumps(records, indent=2, sort_keys=False, allow_nan=False, default=str) + "\n"


CONSOLE_CELL = 60
"""Widest cell of a console table; longer text is clipped with '...' (the csv, JSON, markdown
and LaTeX forms always carry the full text)."""


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def to_console(
    frame: pd.DataFrame,
    float_fmt: str = "%.4g",
    title: str | None = None,
    max_cell: int = CONSOLE_CELL,
) -> str:
    """A plain aligned text table (no colour codes, so it pipes cleanly); cells longer than
    ``max_cell`` characters are clipped so that a row stays readable in a terminal."""
    header = [str(c) for c in frame.columns]
    rows = [[_clip(c, max_cell) for c in r] for r in _rows(frame, float_fmt)]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    out = []
    if title:
        out.append(title)
    out.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    out.append("  ".join("-" * w for w in widths))
    for r in rows:
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(out) + "\n"


def render(frame: pd.DataFrame, fmt: str, title: str | None = None) -> str:
    """Render ``frame`` in one of :data:`FORMATS`."""
    if fmt == "csv":
        return to_csv(frame)
    if fmt == "json":
        return to_json(frame)
    if fmt == "markdown":
        return to_markdown(frame)
    if fmt == "latex":
        return to_latex(frame, caption=title)
    return to_console(frame, title=title)


def write_table(
    frame: pd.DataFrame,
    stem: str | os.PathLike[str],
    formats: Iterable[str] = ("csv",),
    caption: str | None = None,
    csv_float_fmt: str | None = "%.6g",
    schema: str | None = None,
) -> list[Path]:
    """Write ``frame`` to ``stem`` + suffix for each format, each file atomically.

    ``csv_float_fmt`` is the csv's float format (:data:`FULL_PRECISION` for data to re-use);
    markdown and LaTeX always round. With ``schema`` the frame is first validated against
    ``schemas/<schema>.yaml`` (an error names ``stem``).
    """
    if schema is not None:
        validate_frame(frame, schema, str(stem))
    written = []
    for fmt in formats:
        path = Path(f"{stem}{FILE_SUFFIX[fmt]}")
        text = render(frame, fmt, title=caption) if fmt != "csv" else to_csv(frame, csv_float_fmt)
        written.append(atomic.write_text(path, text))
    return written


def emit(
    frame: pd.DataFrame, schema: str, fmt: str, out: Path | None, title: str, where: str
) -> str:
    """Validate ``frame`` against ``schemas/<schema>.yaml`` (an error names ``out``, else
    ``where``), then write it to ``out`` atomically in ``fmt``.

    Returns what the command shows: the table rendered in ``fmt`` when there is no ``out``, else
    the one line ``"<title>: <n> rows -> <out>"``.
    """
    frame = validate_frame(frame, schema, str(out) if out else where)
    text = render(frame, fmt, title=title)
    if out is None:
        return text
    atomic.write_text(out, text)
    return f"{title}: {len(frame)} rows -> {out}"


def frame_of(
    rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Records (one mapping per row) as a table; ``columns`` picks and orders the columns."""
    return pd.DataFrame(list(rows), columns=None if columns is None else list(columns))
