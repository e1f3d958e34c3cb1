"""Claim-passage pair tables in any of csv / parquet / jsonl (the I/O edge of guard scoring).

docs/architecture.md, "Citation guard", "Pair tables": anything with columns ``claim`` and
``passage`` can be scored and evaluated; optional ``pair_id`` (the key; generated as the 1-based
record number when absent), ``label`` (gold or construction label, mapped by
:func:`normalise_labels`) and ``group`` (cluster id for bootstrap CIs). Every other column is
carried through unchanged, so the PubMedQA construction tables of ``kit guard pairs`` (item_pmid,
pair_type, label, claim, passage_pmid, passage, decision) are pair tables as they are.

Text is text: a ``[10]`` inside a claim is part of the claim, not a citation marker (markers
are only parsed by ``kit guard run`` on answers).

Errors name the file, the row and the column. Rows are counted as a person sees them: csv
rows include the header (first data row = row 2), jsonl rows are line numbers, parquet rows are
1-based record numbers. The returned frame keeps a 0-based RangeIndex; ``frame.attrs`` carries
``source`` and ``row_base`` (file row = index + row_base), which survive column selection and
row filtering, so :func:`normalise_labels` can name the row of a bad label.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core import atomic, boundary
from kit.core.errors import ConfigError, InputError, Location
from kit.core.schema import validate_frame
from kit.core.tables import to_csv
from kit.guard.evaluation.evaluate import CLASSES, canonical_label, check_label_map

PAIR_SCHEMA = "guard_pair_table"
SCORES_SCHEMA = "guard_pair_scores"
FORMATS = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
ROW_BASE = {"csv": 2, "jsonl": 1, "parquet": 1}
TEXT_COLUMNS = ("claim", "passage")
KEY_COLUMNS = ("pair_id", "label", "group")
FLOAT_FMT = "%.10g"
MAX_LISTED = 20
#: score_status of a scored pair table: ``scored``, or ``refused`` -- the instrument gave no score
#: (an LLM endpoint refused the question deterministically, kit.guard.verifiers.llm.client); the score is
#: empty then, never a number, and every reader leaves the pair out and counts it.
SCORE_STATUS = ("scored", "refused")


def table_format(path: Path, what: str = "pair table") -> str:
    """'csv' | 'parquet' | 'jsonl' from the file suffix; ConfigError for anything else."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise ConfigError(
            "bad_parameter",
            f"{path}: a {what} must end in .csv, .parquet or .jsonl; got '{Path(path).suffix}'",
        )
    return fmt


def _read_jsonl(path: Path) -> pd.DataFrame:
    lines = boundary.read_text(path).split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    records = []
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            raise InputError("bad_jsonl", "empty line", where=Location(str(path), i))
        obj = boundary.parse_json(line, str(path), i)
        if not isinstance(obj, dict):
            raise InputError(
                "bad_jsonl",
                f"expected a JSON object, got {type(obj).__name__}",
                where=Location(str(path), i),
            )
        records.append(obj)
    return pd.DataFrame.from_records(records) if records else pd.DataFrame()


def read_any(path: str | Path) -> tuple[pd.DataFrame, int]:
    """The raw table at ``path`` (csv as text, parquet, jsonl) and its row base."""
    p = Path(path)
    fmt = table_format(p)
    try:
        if fmt == "csv":
            frame = boundary.read_csv(p, dtype=str, keep_default_na=False, na_values=[""])
        elif fmt == "parquet":
            frame = boundary.read_parquet(p)
        else:
            frame = _read_jsonl(p)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise InputError(
            "unreadable_table", f"not a readable {fmt} file: {exc}", where=Location(str(p))
        ) from None
    if frame.empty and not len(frame.columns):
        raise InputError("empty_table", "the table has no rows", where=Location(str(p)))
    return frame.reset_index(drop=True), ROW_BASE[fmt]


def _key_text(v: object) -> str | None:
    """An id / label / group value as text (2.0 -> '2'); None when missing."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, float | np.floating) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _as_text(frame: pd.DataFrame, source: str, row_base: int) -> pd.DataFrame:
    """Check text columns hold strings; turn key columns (ids, labels, groups) into strings."""
    out = frame.copy()
    problems = []
    for col in TEXT_COLUMNS:
        if col not in out.columns:
            continue
        for idx, v in out[col].items():
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            if not isinstance(v, str):
                problems.append(
                    f"{Location(source, int(idx) + row_base, col)}: expected text, got {v!r}"
                )
    if problems:
        shown = problems[:MAX_LISTED]
        if len(problems) > MAX_LISTED:
            shown.append(f"... and {len(problems) - MAX_LISTED} more")
        raise InputError(
            "bad_pair_table",
            f"{len(problems)} non-text value(s) in claim/passage",
            where=Location(source),
            details=shown,
        )
    for col in KEY_COLUMNS:
        if col in out.columns:
            out[col] = pd.Series([_key_text(v) for v in out[col]], index=out.index, dtype="str")
    return out


def _check_unique_ids(frame: pd.DataFrame, source: str, row_base: int) -> None:
    ids = frame["pair_id"]
    dup = ids[ids.notna() & ids.duplicated(keep=False)]
    if dup.empty:
        return
    details = []
    for value, rows in dup.groupby(dup, sort=False).groups.items():
        where = ", ".join(str(int(r) + row_base) for r in rows)
        details.append(f"{source}: pair_id {value!r} on rows {where}")
    raise InputError(
        "duplicate_pair_id",
        f"{len(details)} duplicated pair_id value(s); pair_id must be unique",
        where=Location(source, column="pair_id"),
        details=details[:MAX_LISTED],
    )


def _finish(frame: pd.DataFrame, schema: str, source: str, row_base: int) -> pd.DataFrame:
    frame = _as_text(frame, source, row_base)
    if "pair_id" not in frame.columns:
        ids = [str(i + 1) for i in range(len(frame))]
        frame.insert(0, "pair_id", pd.Series(ids, index=frame.index, dtype="str"))
    else:
        frame = frame[["pair_id", *[c for c in frame.columns if c != "pair_id"]]]
    _check_unique_ids(frame, source, row_base)
    out = validate_frame(frame, schema, source, row_base=row_base)
    out.attrs.update({"source": source, "row_base": row_base})
    return out


def read_pair_table(path: str | Path) -> pd.DataFrame:
    """Read and validate any pair table (schemas/guard_pair_table.yaml).

    Returns a frame with ``pair_id`` first, then the file's columns in order (``claim``,
    ``passage`` and optional ``label``, ``group``, anything else). ``pair_id`` is generated as
    the 1-based record number ("1", "2", ...) when the file has none; ids, labels and groups
    are strings. Raises InputError naming file, row and column for: a missing file, an
    unreadable file, a missing ``claim``/``passage`` column, an empty claim or passage,
    non-text claims/passages, a duplicated ``pair_id`` (naming all its rows).
    """
    frame, row_base = read_any(path)
    return _finish(frame, PAIR_SCHEMA, str(path), row_base)


def read_scores_table(path: str | Path, keep_missing: bool = False) -> pd.DataFrame:
    """Read and validate a scored pair table (schemas/guard_pair_scores.yaml; needs ``score``).

    Pairs without a score (``score_status`` refused, :data:`SCORE_STATUS`) are left out and
    counted in ``attrs["n_missing"]`` (the frame keeps the file's row index, so errors still
    name file rows), unless ``keep_missing``. A row whose score and status disagree (an empty
    score marked scored, a number marked refused) is an InputError naming its row."""
    frame, row_base = read_any(path)
    out = _finish(frame, SCORES_SCHEMA, str(path), row_base)
    missing = missing_scores(out, str(path), row_base)
    out.attrs["n_missing"] = int(missing.sum())
    if keep_missing or not missing.any():
        return out
    kept = out[~missing]
    kept.attrs.update(out.attrs)
    return kept


def missing_scores(frame: pd.DataFrame, source: str, row_base: int) -> np.ndarray:
    """Which rows of a scored table have no score (boolean, row-aligned); checks that
    ``score_status`` (when present) agrees with the score being empty."""
    empty = frame["score"].isna().to_numpy()
    if "score_status" not in frame.columns:
        if empty.any():
            i = int(np.flatnonzero(empty)[0])
            raise InputError(
                "missing_score",
                "an empty score without a score_status column saying why (refused)",
                where=Location(source, int(frame.index[i]) + row_base, "score"),
            )
        return empty
    refused = (frame["score_status"] == "refused").to_numpy()
    bad = np.flatnonzero(empty != refused)
    if bad.size:
        i = int(bad[0])
        raise InputError(
            "bad_score_status",
            f"score_status {frame['score_status'].iloc[i]!r} with "
            + ("an empty score" if empty[i] else f"score {frame['score'].iloc[i]!r}")
            + f" ({bad.size} such row(s)): refused rows have no score, scored rows one",
            where=Location(source, int(frame.index[i]) + row_base, "score_status"),
        )
    return empty


def with_score_status(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (from :func:`score_pairs`) with ``score_status`` right after ``score``:
    ``scored``, or ``refused`` where the instrument gave no score (the score stays empty)."""
    out = frame.drop(columns=[c for c in ("score_status",) if c in frame.columns])
    status = np.where(out["score"].isna().to_numpy(), "refused", "scored")
    out.insert(int(out.columns.get_loc("score")) + 1, "score_status", status)
    out.attrs.update(frame.attrs)
    return out


def write_pair_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` atomically as csv / parquet / jsonl, chosen by the suffix of ``path``."""
    p = Path(path)
    fmt = table_format(p, "output table")
    if fmt == "csv":
        return atomic.write_text(p, to_csv(frame, FLOAT_FMT))
    if fmt == "parquet":
        with atomic.staged_file(p) as tmp:
            frame.to_parquet(tmp, index=False)
        return p
    lines = []
    for rec in frame.to_dict("records"):
        clean: dict[str, Any] = {}
        for k, v in rec.items():
            if v is None or (isinstance(v, float) and math.isnan(v)):
                clean[str(k)] = None
            elif isinstance(v, np.generic):
                clean[str(k)] = v.item()
            else:
                clean[str(k)] = v
        lines.append(json.dumps(clean, ensure_ascii=False, allow_nan=False) + "\n")
    return atomic.write_text(p, "".join(lines))


def group_values(frame: pd.DataFrame, column: str | None) -> tuple[np.ndarray | None, str]:
    """The cluster ids for bootstrap CIs: --group-column, else `group` when present."""
    if column is None:
        column = "group" if "group" in frame.columns else None
        if column is None:
            return None, ""
    if column not in frame.columns:
        raise ConfigError("bad_parameter", f"--group-column {column!r} is not a column")
    g = frame[column]
    if g.isna().any():
        idx = int(g.index[g.isna()][0])
        base = int(frame.attrs.get("row_base", 0))
        raise InputError(
            "bad_group",
            "empty cluster id",
            where=Location(frame.attrs.get("source"), idx + base, column),
        )
    return g.astype(str).to_numpy(), column


def parse_label_map(text: str | None) -> dict[str, str]:
    """'SRC=DST,SRC=DST' -> {SRC: DST}; DST must name a class (ConfigError otherwise)."""
    if not text:
        return {}
    out = {}
    for part in text.split(","):
        if not part.strip():
            continue
        src, eq, dst = part.partition("=")
        if not eq or not src.strip() or not dst.strip():
            raise ConfigError(
                "bad_parameter", f"--label-map must be SRC=DST[,SRC=DST...]; got {part!r}"
            )
        out[src.strip()] = dst.strip()
    return check_label_map(out)


def normalise_labels(
    series: pd.Series,
    extra_map: Mapping[str, str] | None = None,
    *,
    source: str | None = None,
    row_base: int | None = None,
) -> pd.Series:
    """Gold labels as canonical classes ``entailment`` / ``neutral`` / ``contradiction``.

    The mapping is :data:`kit.guard.evaluation.evaluate.LABEL_TABLE` (SUPPORT / SUPPORTS / supported ->
    entailment; NEI / NOT_ENOUGH_INFO / neutral / unsupported -> neutral; CONTRADICT /
    REFUTES / contradiction -> contradiction; case and '-'/' ' vs '_' ignored), overridden by
    ``extra_map`` (e.g. ``{"0": "entailment", "1": "neutral", "2": "contradiction"}``).
    An empty or unknown label raises InputError naming the file row and the value; the file
    and row base come from ``series.attrs`` (set by :func:`read_pair_table`) unless given.
    """
    extra = check_label_map(dict(extra_map or {}))
    src = source if source is not None else series.attrs.get("source")
    base = row_base if row_base is not None else int(series.attrs.get("row_base", 0))
    col = str(series.name) if series.name is not None else "label"
    out = []
    problems = []
    for idx, v in series.items():
        if v is None or (isinstance(v, float) and math.isnan(v)) or not str(v).strip():
            problems.append(f"{Location(src, int(idx) + base, col)}: empty label")
            out.append(None)
            continue
        c = canonical_label(v, extra)
        if c is None:
            problems.append(f"{Location(src, int(idx) + base, col)}: unknown label {str(v)!r}")
        out.append(c)
    if problems:
        shown = problems[:MAX_LISTED]
        if len(problems) > MAX_LISTED:
            shown.append(f"... and {len(problems) - MAX_LISTED} more")
        raise InputError(
            "unknown_label",
            f"{len(problems)} label(s) not mappable to {'/'.join(CLASSES)}; first: "
            f"{problems[0]} (map custom labels with --label-map SRC=DST,...)",
            where=Location(src, column=col),
            details=shown,
        )
    result = pd.Series(out, index=series.index, name=series.name, dtype="str")
    result.attrs.update(series.attrs)
    return result


def read_labelled_table(
    path: str | Path, label_map: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """A labelled pair table (claim, passage, label): :func:`read_pair_table` with its labels
    mapped by :func:`normalise_labels`; a table without a ``label`` column is an InputError."""
    frame = read_pair_table(path)
    if "label" not in frame.columns:
        raise InputError(
            "missing_column",
            "a labelled pair table needs a 'label' column (SUPPORT/CONTRADICT/NEI or "
            "entailment/neutral/contradiction)",
            where=Location(str(path), column="label"),
        )
    frame = frame.copy()
    frame["label"] = normalise_labels(frame["label"], label_map or {})
    return frame


def probability_column(label: str) -> str:
    """The output column of a class probability: 'p_' + the card label, lower case, [a-z0-9_]."""
    return "p_" + (re.sub(r"[^0-9a-z]+", "_", str(label).strip().lower()).strip("_") or "class")


def score_pairs(verifier: Any, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``score`` (and, for a cross-encoder, ``p_<label>`` per card label) added.

    ``verifier`` is any :class:`kit.guard.verifiers.card.Verifier`; one with ``score_classes`` and
    ``labels`` (a cross-encoder) also yields the class probabilities of its best-scoring
    window. Existing ``score`` / ``p_*`` columns are replaced (they are output columns).
    """
    claims = frame["claim"].tolist()
    passages = frame["passage"].tolist()
    out = frame.drop(columns=[c for c in frame.columns if c == "score" or c.startswith("p_")])
    if hasattr(verifier, "score_classes") and hasattr(verifier, "labels"):
        s, probs = verifier.score_classes(claims, passages)
        out["score"] = np.asarray(s, dtype=float)
        cols = [probability_column(lab) for lab in verifier.labels]
        if len(set(cols)) != len(cols):
            raise ConfigError(
                "bad_parameter", f"card labels {verifier.labels} give clashing column names"
            )
        for j, col in enumerate(cols):
            out[col] = np.asarray(probs, dtype=float)[:, j]
    else:
        out["score"] = np.asarray(verifier.score(claims, passages), dtype=float)
    out.attrs.update(frame.attrs)
    return out
