"""Schemas are the contract: load pandera (tables) and JSON Schema (artifacts) definitions.

Every table the kit reads or writes has a pandera schema in ``schemas/<name>.yaml`` (pandera's
own YAML format: language-neutral and diffable); every JSON artifact has a JSON Schema in
``schemas/json/<name>.schema.json``. Validation is lazy: all failures are collected and raised
as one :class:`kit.core.errors.InputError` naming file, row, column and the failed check.

CSV files are read as text first and coerced by the schema, so a wrong type is reported per row
("row 7, column 'score': failed coerce_dtype('float64') (got 'abc')") instead of as a whole
column of the wrong dtype.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa

from kit.core import boundary
from kit.core.errors import ConfigError, InputError, Location

SCHEMA_DIR = Path(__file__).resolve().parent.parent.parent / "schemas"
NA_VALUES = ["", "NA", "NaN", "nan", "null", "None"]
_TRUE = {"true", "1", "yes", "t"}
_FALSE = {"false", "0", "no", "f"}
MAX_LISTED = 20
_SCHEMA_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")


def schema_path(name: str) -> Path:
    """``schemas/<name>.yaml``; a name that is not a plain schema name (a path, ``..``) is refused,
    so no schema is ever loaded from outside ``schemas/``."""
    if not _SCHEMA_NAME.fullmatch(name):
        raise ConfigError(
            "unknown_schema",
            f"{name!r} is not a schema name (letters, digits, '_' and '-'; "
            "see `kit schema list`); schemas are loaded only from schemas/",
        )
    return SCHEMA_DIR / f"{name}.yaml"


@functools.cache
def load_schema(name: str) -> pa.DataFrameSchema:
    """The pandera schema stored in ``schemas/<name>.yaml``."""
    path = schema_path(name)
    if not path.is_file():
        raise ConfigError("unknown_schema", f"no table schema named '{name}' (looked for {path})")
    try:
        return pa.DataFrameSchema.from_yaml(path)
    except Exception as exc:  # a broken schema file is the kit's fault, say so plainly
        raise ConfigError("bad_schema", f"{path}: not a valid pandera schema: {exc}") from exc


def schema_names() -> list[str]:
    return sorted(p.stem for p in SCHEMA_DIR.glob("*.yaml"))


def _precoerce(
    frame: pd.DataFrame, schema: pa.DataFrameSchema, source: str, row_base: int
) -> tuple[pd.DataFrame, dict[tuple[int, str], str]]:
    """Coerce numeric and boolean columns cell by cell, so a wrong type is reported per row.

    Returns the coerced frame and ``{(frame_index, column): message}`` for cells that could not
    be read; those cells become null so the remaining checks still run on the rest.
    """
    out = frame.copy()
    bad: dict[tuple[int, str], str] = {}
    for name, col in schema.columns.items():
        if name not in out.columns:
            continue
        dtype = str(col.dtype)
        series = out[name]
        if series.empty:  # an empty table (zero citations, zero runs of a kind) is valid
            out[name] = series.astype(col.dtype.type)
            continue
        if dtype.startswith(("str", "string")):
            # a column with no value at all has no strings to infer its dtype from
            if not isinstance(series.dtype, pd.StringDtype) and series.isna().all():
                out[name] = series.astype(col.dtype.type)
            continue
        if dtype == "bool":
            if series.dtype == bool:
                continue
            values = []
            for idx, v in series.items():
                if isinstance(v, bool | np.bool_):
                    values.append(bool(v))
                elif isinstance(v, str) and v.strip().lower() in _TRUE | _FALSE:
                    values.append(v.strip().lower() in _TRUE)
                else:
                    bad[(idx, name)] = f"got {v!r}; expected true or false"
                    values.append(False)
            out[name] = pd.Series(values, index=series.index, dtype=bool)
        elif dtype.startswith(("float", "int")):
            if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
                continue
            num = pd.to_numeric(series, errors="coerce")
            for idx in series.index[num.isna() & series.notna()]:
                bad[(idx, name)] = f"got {series[idx]!r}; expected a number"
            if dtype.startswith("int"):  # inf is a number but no whole one (and cannot be cast)
                infinite = num.notna() & ~np.isfinite(num.to_numpy(dtype=float, na_value=0.0))
                for idx in series.index[infinite]:
                    bad[(idx, name)] = f"got {series[idx]!r}; expected a whole number"
                num = num.where(~infinite, np.nan)
            if dtype.startswith("int") and num.notna().all():
                frac = num != np.floor(num)
                for idx in series.index[frac]:
                    bad[(idx, name)] = f"got {series[idx]!r}; expected a whole number"
                num = num.where(~frac, np.nan)
            whole = dtype.startswith("float") or not num.isna().any()
            out[name] = num.astype(dtype) if whole else num
    return out, bad


def _problems(
    err: pa.errors.SchemaErrors | None,
    bad: dict[tuple[int, str], str],
    schema: pa.DataFrameSchema,
    source: str,
    row_base: int,
) -> list[str]:
    """Turn pandera's failure cases (plus pre-coercion failures) into one line per problem."""
    lines: list[tuple[int, str]] = []
    for (idx, column), msg in bad.items():
        lines.append(
            (int(idx) + row_base, f"{Location(source, int(idx) + row_base, column)}: {msg}")
        )
    dup_rows: set[int] = set()
    cases = err.failure_cases.to_dict("records") if err is not None else []
    for rec in cases:
        check = str(rec.get("check"))
        column = str(rec.get("column"))
        idx = rec.get("index")
        case = rec.get("failure_case")
        row = None if idx is None or (isinstance(idx, float) and np.isnan(idx)) else int(idx)
        if check == "column_in_dataframe":
            lines.append(
                (-1, f"{source}: column '{case}': missing (schema '{schema.name}' requires it)")
            )
        elif check == "column_in_schema":
            lines.append((-1, f"{source}: column '{case}': not in schema '{schema.name}'"))
        elif check == "multiple_fields_uniqueness":
            if row is not None:
                dup_rows.add(row)
        elif row is not None and (row, column) in bad:
            continue  # already reported as unreadable
        elif row is None:
            if check.startswith("dtype") and any(c == column for (_, c) in bad):
                continue
            lines.append((-1, f"{source}, column '{column}': failed {check} (got {case!r})"))
        else:
            where = Location(source, row + row_base, column)
            lines.append((row + row_base, f"{where}: failed {check} (got {case!r})"))
    if dup_rows and err is not None:
        key = list(schema.unique or [])
        frame = err.data
        for row in sorted(dup_rows):
            values = ", ".join(str(frame.loc[row, k]) for k in key) if key else ""
            where = Location(source, row + row_base)
            lines.append(
                (row + row_base, f"{where}: duplicate key ({', '.join(key)}) = ({values})")
            )
    ordered = sorted(dict.fromkeys(lines), key=lambda t: (t[0], t[1]))
    return [text for _, text in ordered]


def validate_frame(
    frame: pd.DataFrame, name: str, source: str = "<table>", row_base: int = 2
) -> pd.DataFrame:
    """Validate (and coerce) ``frame`` against schema ``name``; raise one InputError listing all.

    ``row_base`` maps the 0-based frame index to the row a person sees: 2 for a CSV with a
    header line, 1 for JSON lines.
    """
    schema = load_schema(name)
    frame = frame.reset_index(drop=True)
    missing_key = [k for k in schema.unique or [] if k not in frame.columns]
    if missing_key:  # pandera's uniqueness check would raise a KeyError on these
        raise InputError(
            "schema_violation",
            f"missing key column(s) against schema '{name}' (schemas/{name}.yaml)",
            where=Location(source),
            details=[
                f"{source}: column '{k}': missing (schema '{name}' requires it)"
                for k in missing_key
            ],
        )
    frame, bad = _precoerce(frame, schema, source, row_base)
    err: pa.errors.SchemaErrors | None = None
    try:
        validated = schema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        err = exc
    if err is None and not bad:
        return validated
    problems = _problems(err, bad, schema, source, row_base)
    shown = problems[:MAX_LISTED]
    if len(problems) > MAX_LISTED:
        shown.append(f"... and {len(problems) - MAX_LISTED} more")
    raise InputError(
        "schema_violation",
        f"{len(problems)} problem(s) against schema '{name}' (schemas/{name}.yaml)",
        where=Location(source),
        details=shown,
    )


def read_frame(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A table in CSV (as text, cells in ``NA_VALUES`` null) or Parquet (by suffix), NOT yet
    validated: for a reader that must see the columns to choose the schema (then
    :func:`validate_frame`)."""
    p = Path(path)
    if p.suffix.lower() in {".parquet", ".pq"}:
        return boundary.read_parquet(p)
    return boundary.read_csv(p, dtype=str, keep_default_na=False, na_values=NA_VALUES)


def read_table(path: str | os.PathLike[str], name: str) -> pd.DataFrame:
    """Read a table in CSV or Parquet (by suffix) and validate it against schema ``name``."""
    p = Path(path)
    return validate_frame(read_frame(p), name, str(p))


# --- JSON artifacts -------------------------------------------------------------------------


@functools.cache
def load_json_schema(name: str) -> dict[str, Any]:
    path = SCHEMA_DIR / "json" / f"{name}.schema.json"
    if not path.is_file():
        raise ConfigError("unknown_schema", f"no JSON Schema named '{name}' (looked for {path})")
    return json.loads(path.read_text())


@functools.cache
def _json_schema_registry() -> Any:
    """Every schema of ``schemas/json/`` under its ``$id`` (the file name), so one schema may
    ``$ref`` another (``verifier_card`` -> ``instrument_validation``)."""
    from referencing import Registry, Resource

    return Registry().with_resources(
        (p.name, Resource.from_contents(json.loads(p.read_text())))
        for p in sorted((SCHEMA_DIR / "json").glob("*.schema.json"))
    )


def validate_json(obj: Any, name: str, source: str = "<json>") -> Any:
    """Validate a JSON-able object against ``schemas/json/<name>.schema.json`` (its ``$ref`` to
    another schema of that folder resolved by file name)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(
        load_json_schema(name), registry=_json_schema_registry()
    )
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        details = [
            f"at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:MAX_LISTED]
        ]
        raise InputError(
            "schema_violation",
            f"{len(errors)} problem(s) against JSON Schema '{name}'",
            where=Location(source),
            details=details,
        )
    return obj


def read_yaml(path: str | os.PathLike[str], name: str | None = None) -> Any:
    """Read a YAML file through :mod:`kit.core.boundary` (UTF-8, duplicate keys refused), optionally
    validated against a JSON Schema; errors name the file, line and column."""
    p = Path(path)
    obj = boundary.read_yaml(p)
    return validate_json(obj, name, str(p)) if name else obj
