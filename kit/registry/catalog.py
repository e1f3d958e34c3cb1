"""The DuckDB catalog: one table per registered dataset, normalised, in one embedded file.

Tables: pubmedqa_items / pubmedqa_contexts / pubmedqa_meshes (one row per item, abstract
section, MeSH term), qasa_scores / qasa_tau_curve / qasa_flag_rates, bioasq_summary,
biolitbench_board, biolitbench_pipelines, openbiorq_board, published_constants, and
registry_files (what was loaded, with sha256 and licence). Queries run in a sandbox
(:mod:`kit.registry.sandbox`): one SELECT, read-only, no file access outside the catalog.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import duckdb
import pandas as pd

from kit.core.errors import InputError, Location
from kit.core.schema import validate_frame
from kit.registry import duckdb_file, loaders, sandbox
from kit.registry.fetch import DEFAULT_DEST, verify_present
from kit.registry.sources import REPO_ROOT, load_sources

DEFAULT_DB = REPO_ROOT / "data" / "prepared" / "catalog.duckdb"  # where `dvc repro` builds it


def catalog_tables(raw: Path) -> dict[str, pd.DataFrame]:
    """Every catalog table as a validated frame (pure apart from reading ``raw``)."""
    verify_present(raw)
    tables: dict[str, pd.DataFrame] = {}
    tables.update(loaders.pubmedqa_tables(raw))
    tables.update(loaders.qasa_tables(raw))
    tables["bioasq_summary"] = loaders.bioasq_table(raw)
    tables["biolitbench_board"] = loaders.published_board(raw)
    tables["biolitbench_pipelines"] = loaders.published_pipelines(raw)
    tables["openbiorq_board"] = loaders.openbiorq_board(raw)
    tables["published_constants"] = loaders.constants_table(raw)
    tables["registry_files"] = pd.DataFrame(
        [
            {
                "source": s.name,
                "path": f.path,
                "sha256": f.sha256,
                "bytes": f.bytes,
                "licence": s.licence,
                "redistributable": s.redistributable,
            }
            for s in load_sources()
            for f in s.files
        ]
    )
    # every catalog table is validated against its schema on the way in
    return {
        name: validate_frame(frame, name, f"catalog:{name}", row_base=1)
        for name, frame in tables.items()
    }


def build_catalog(
    raw: Path = DEFAULT_DEST,
    db_path: Path = DEFAULT_DB,
    on_table: Callable[[str, int], None] | None = None,
) -> dict[str, int]:
    """Write the catalog to ``db_path`` atomically and byte-reproducibly (the same tables give
    the same file: built single-threaded, under its final name, with DuckDB's random database
    identifier fixed by :func:`kit.registry.duckdb_file.fix_identifier`); returns rows per
    table."""
    tables = catalog_tables(raw)
    counts: dict[str, int] = {}
    target = Path(db_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # DuckDB names the catalog after the file: build under the final name in a private folder
    with tempfile.TemporaryDirectory(prefix=f".{target.name}.", dir=target.parent) as folder:
        tmp = Path(folder) / target.name
        con = duckdb.connect(str(tmp), config={"threads": 1})
        try:
            for name in sorted(tables):
                frame = tables[name]
                con.register("_frame", frame)
                con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM _frame')
                con.unregister("_frame")
                counts[name] = len(frame)
                if on_table:
                    on_table(name, len(frame))
            con.execute("CHECKPOINT")
        finally:
            con.close()
        duckdb_file.fix_identifier(tmp)
        os.replace(tmp, target)
    return counts


def run_query(sql: str, db_path: Path = DEFAULT_DB) -> pd.DataFrame:
    """Run one SELECT in the sandbox (:mod:`kit.registry.sandbox`); anything else, and every
    SQL error, is an InputError (exit 2)."""
    if not Path(db_path).is_file():
        raise InputError(
            "no_catalog",
            "catalog not built; run `kit db build` (after `kit registry fetch`)",
            where=Location(str(db_path)),
        )
    statement = sandbox.check_select(sql)
    con = sandbox.connect(Path(db_path))
    try:
        return con.execute(statement).df()
    except duckdb.Error as exc:
        raise InputError("bad_query", f"query failed: {exc}".splitlines()[0]) from None
    finally:
        con.close()


def list_tables(db_path: Path = DEFAULT_DB) -> pd.DataFrame:
    return run_query(
        "SELECT table_name AS table, estimated_size AS rows, column_count AS columns "
        "FROM duckdb_tables() ORDER BY table_name",
        db_path,
    )
