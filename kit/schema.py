"""Schemas are the contract: load pandera (tables) and JSON Schema (artifacts) definitions.

Every table the kit reads or writes has a pandera schema in ``schemas/<name>.yaml`` (pandera's
own YAML format: language-neutral and diffable); every JSON artifact has a JSON Schema in
``schemas/json/<name>.schema.json``. Validation is lazy: all failures are collected and raised
as one :class:`kit.errors.InputError` naming file, row, column and the failed check.

CSV files are read as text first and coerced by the schema, so a wrong type is reported per row
("row 7, column 'score': failed coerce_dtype('float64') (got 'abc')") instead of as a whole
column of the wrong dtype.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pandera.pandas as pa
import yaml

from kit.errors import ConfigError, InputError, Location

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"
NA_VALUES = ["", "NA", "NaN", "nan", "null", "None"]
_TRUE = {"true", "1", "yes", "t"}
_FALSE = {"false", "0", "no", "f"}
MAX_LISTED = 20


def schema_path(name: str) -> Path:
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


def _bool_columns(schema: pa.DataFrameSchema) -> list[str]:
    return [c for c, col in schema.columns.items() if str(col.dtype) == "bool"]


def _parse_bools(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Map textual booleans to bool; leave anything else for the schema to reject by row."""
    out = frame.copy()
    for col in columns:
        if col not in out.columns or out[col].dtype == bool:
            continue

        def conv(v: Any) -> Any:
            if isinstance(v, bool):
                return v
            if isinstance(v, str):
                low = v.strip().lower()
                if low in _TRUE:
                    return True
                if low in _FALSE:
                    return False
            return v

        converted = out[col].map(conv)
        if converted.map(lambda v: isinstance(v, bool)).all():
            out[col] = converted.astype(bool)
        else:
            out[col] = converted.astype(object)
    return out


def _problems(err: pa.errors.SchemaErrors, source: str, row_base: int) -> list[str]:
    cases = err.failure_cases
    lines: list[str] = []
    coerce_failed: set[str] = set()
    for rec in cases.to_dict("records"):
        check = str(rec.get("check"))
        if check.startswith("coerce_dtype"):
            coerce_failed.add(str(rec.get("column")))
    for rec in cases.to_dict("records"):
        check = str(rec.get("check"))
        column = rec.get("column")
        idx = rec.get("index")
        case = rec.get("failure_case")
        if check == "column_in_dataframe":
            lines.append(f"{source}: column '{case}': missing (the schema requires it)")
            continue
        if check.startswith("column_in_schema"):
            lines.append(f"{source}: column '{case}': not in the schema (strict table)")
            continue
        # once a column failed coercion, dtype/range checks on it only repeat that failure
        if str(column) in coerce_failed and not check.startswith("coerce_dtype"):
            if idx is None or pd.isna(idx) or check.startswith("dtype"):
                continue
        row = None if idx is None or (isinstance(idx, float) and pd.isna(idx)) else int(idx)
        where = Location(source, None if row is None else row + row_base, str(column))
        lines.append(f"{where}: failed {check} (got {case!r})")
    # stable order: by row then column
    return sorted(dict.fromkeys(lines), key=_row_key)


def _row_key(line: str) -> tuple[int, str]:
    marker = ", row "
    if marker in line:
        try:
            return int(line.split(marker, 1)[1].split(",", 1)[0]), line
        except ValueError:
            pass
    return -1, line


def validate_frame(
    frame: pd.DataFrame, name: str, source: str = "<table>", row_base: int = 2
) -> pd.DataFrame:
    """Validate (and coerce) ``frame`` against schema ``name``; raise one InputError listing all.

    ``row_base`` maps the 0-based frame index to the row a person sees: 2 for a CSV with a
    header line, 1 for JSON lines.
    """
    schema = load_schema(name)
    frame = _parse_bools(frame, _bool_columns(schema))
    try:
        return schema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as err:
        problems = _problems(err, source, row_base)
        shown = problems[:MAX_LISTED]
        if len(problems) > MAX_LISTED:
            shown.append(f"... and {len(problems) - MAX_LISTED} more")
        raise InputError(
            "schema_violation",
            f"{len(problems)} problem(s) against schema '{name}' (schemas/{name}.yaml)",
            where=Location(source),
            details=shown,
        ) from None
    except pa.errors.SchemaError as err:  # pragma: no cover - lazy=True raises SchemaErrors
        raise InputError("schema_violation", str(err), where=Location(source)) from None


def read_csv(path: str | os.PathLike[str], name: str) -> pd.DataFrame:
    """Read a CSV as text and validate it against schema ``name``."""
    p = Path(path)
    if not p.is_file():
        raise InputError("missing_file", "file not found", where=Location(str(p)))
    try:
        frame = pd.read_csv(p, dtype=str, keep_default_na=False, na_values=NA_VALUES)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise InputError("unreadable_csv", f"not a readable CSV: {exc}", where=Location(str(p)))
    return validate_frame(frame, name, str(p))


def read_table(path: str | os.PathLike[str], name: str) -> pd.DataFrame:
    """Read a table in CSV or Parquet (by suffix) and validate it against schema ``name``."""
    p = Path(path)
    if p.suffix.lower() in {".parquet", ".pq"}:
        if not p.is_file():
            raise InputError("missing_file", "file not found", where=Location(str(p)))
        return validate_frame(pd.read_parquet(p), name, str(p))
    return read_csv(p, name)


# --- JSON artifacts -------------------------------------------------------------------------


@functools.cache
def load_json_schema(name: str) -> dict[str, Any]:
    path = SCHEMA_DIR / "json" / f"{name}.schema.json"
    if not path.is_file():
        raise ConfigError("unknown_schema", f"no JSON Schema named '{name}' (looked for {path})")
    return json.loads(path.read_text())


def validate_json(obj: Any, name: str, source: str = "<json>") -> Any:
    """Validate a JSON-able object against ``schemas/json/<name>.schema.json``."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_json_schema(name))
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
    """Read a YAML file (optionally validated against a JSON Schema); errors name the file."""
    p = Path(path)
    if not p.is_file():
        raise InputError("missing_file", "file not found", where=Location(str(p)))
    try:
        obj = yaml.safe_load(p.read_text())
    except yaml.YAMLError as exc:
        raise InputError("unreadable_yaml", f"not valid YAML: {exc}", where=Location(str(p)))
    return validate_json(obj, name, str(p)) if name else obj
