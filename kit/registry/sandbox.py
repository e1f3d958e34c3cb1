"""The sandbox of `kit query`: one SELECT statement, on a read-only, locked, offline connection.

Three layers, each enough on its own for the escapes we know of, together for the ones we don't:

1. **Parse with DuckDB's own parser** (``duckdb.extract_statements``): exactly one statement,
   and its type must be SELECT (so COPY, EXPORT, ATTACH, INSTALL/LOAD, PRAGMA, SET, CALL,
   CREATE, ... are refused by name before anything runs).
2. **Walk the parsed tree** (``json_serialize_sql``): every table function the statement calls
   must be one of :data:`ALLOWED_TABLE_FUNCTIONS` (catalog introspection and ``range``); file
   readers (``read_csv``, ``read_text``, ``read_parquet``, ``glob``, ...) and SQL-in-a-string
   (``query``, ``query_table``) are refused by name.
3. **Open the catalog read-only** with external access disabled and the configuration locked
   (:data:`CONNECTION_CONFIG`): even a statement that got past 1 and 2 cannot touch a file
   other than the catalog, install or load an extension, or re-enable either.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from kit.core.errors import InputError, Location

# DuckDB settings of every `kit query` connection (documented DuckDB configuration options).
CONNECTION_CONFIG: dict[str, Any] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,  # last: nothing above can be changed back by a statement
}

# Table functions a catalog query may call: introspection of the catalog itself and generators.
ALLOWED_TABLE_FUNCTIONS = frozenset(
    {
        "duckdb_columns",
        "duckdb_constraints",
        "duckdb_databases",
        "duckdb_functions",
        "duckdb_indexes",
        "duckdb_keywords",
        "duckdb_schemas",
        "duckdb_tables",
        "duckdb_types",
        "duckdb_views",
        "pragma_table_info",
        "range",
        "generate_series",
        "unnest",
    }
)


def _refuse(what: str, source: str) -> InputError:
    return InputError(
        "query_refused",
        f"{what} is not allowed: kit query runs exactly one read-only SELECT on the catalog "
        "(no COPY, EXPORT, ATTACH, INSTALL/LOAD, PRAGMA, SET, file-reading table functions, "
        "or several statements)",
        where=Location(source),
    )


def _table_functions(node: Any) -> list[str]:
    """Names of every table function in a serialized DuckDB parse tree (any depth)."""
    found: list[str] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            if cur.get("type") == "TABLE_FUNCTION":
                fn = cur.get("function") or {}
                found.append(str(fn.get("function_name", "?")))
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
    return found


def check_select(sql: str, source: str = "kit query") -> str:
    """Return the single SELECT statement of ``sql``; raise InputError naming what is refused."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise InputError(
            "bad_query", f"query does not parse: {str(exc).splitlines()[0]}", where=Location(source)
        ) from None
    if len(statements) != 1:
        raise _refuse(f"{len(statements)} statements in one call", source)
    stmt = statements[0]
    if stmt.type != duckdb.StatementType.SELECT:
        raise _refuse(f"a {stmt.type.name} statement", source)
    con = duckdb.connect(":memory:", config=CONNECTION_CONFIG)
    try:
        tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [stmt.query]).fetchone()[0])
    finally:
        con.close()
    if tree.get("error"):
        raise InputError(
            "bad_query",
            f"query does not parse: {tree.get('error_message', '?')}",
            where=Location(source),
        )
    refused = sorted({f for f in _table_functions(tree)} - ALLOWED_TABLE_FUNCTIONS)
    if refused:
        raise _refuse(f"table function {', '.join(refused)}", source)
    return stmt.query


def connect(db_path: Path) -> duckdb.DuckDBPyConnection:
    """The catalog, read-only, offline, with its configuration locked."""
    return duckdb.connect(str(db_path), read_only=True, config=CONNECTION_CONFIG)
