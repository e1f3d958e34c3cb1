"""DuckDB catalog: normalised tables, read-only queries, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.registry.catalog import build_catalog


@pytest.fixture(scope="module")
def catalog(registry_raw: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("db") / "catalog.duckdb"
    build_catalog(registry_raw, db)
    return db


def _q(db: Path, sql: str, fmt: str = "csv") -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["query", sql, "--catalog", str(db), "--format", fmt])
    return res.exit_code, res.output


def test_pubmedqa_count_is_1000(catalog: Path) -> None:
    code, out = _q(catalog, "SELECT count(*) AS n FROM pubmedqa_items")
    assert code == 0
    assert out.strip().splitlines() == ["n", "1000"]


def test_normalised_tables_agree_with_source(catalog: Path, registry_raw: Path) -> None:
    raw = json.loads((registry_raw / "pubmedqa/ori_pqal.json").read_text())
    n_sections = sum(len(v["CONTEXTS"]) for v in raw.values())
    n_mesh = sum(len(set(v["MESHES"])) for v in raw.values())
    con = duckdb.connect(str(catalog), read_only=True)
    assert con.execute("SELECT count(*) FROM pubmedqa_contexts").fetchone()[0] == n_sections
    assert con.execute("SELECT count(*) FROM pubmedqa_meshes").fetchone()[0] == n_mesh
    decisions = dict(
        con.execute("SELECT final_decision, count(*) FROM pubmedqa_items GROUP BY 1").fetchall()
    )
    assert decisions == {
        d: sum(v["final_decision"] == d for v in raw.values()) for d in ("yes", "no", "maybe")
    }
    assert (
        con.execute("SELECT count(*) FROM pubmedqa_items WHERE split='test'").fetchone()[0] == 500
    )
    assert con.execute("SELECT count(*) FROM qasa_scores").fetchone()[0] == 1000
    assert con.execute("SELECT count(*) FROM biolitbench_board").fetchone()[0] == 46
    con.close()


def test_query_json_format(catalog: Path) -> None:
    code, out = _q(
        catalog, "SELECT system FROM biolitbench_pipelines ORDER BY system LIMIT 2", "json"
    )
    assert code == 0
    assert json.loads(out) == [{"system": "AutoSurvey"}, {"system": "DR-Tulu"}]


def test_query_is_read_only(catalog: Path) -> None:
    code, out = _q(catalog, "DROP TABLE pubmedqa_items")
    assert code == 2
    assert "read-only" in out.lower() or "read only" in out.lower()
    code, out = _q(catalog, "SELECT count(*) AS n FROM pubmedqa_items")
    assert out.strip().endswith("1000")


def test_bad_sql_is_exit_2(catalog: Path) -> None:
    code, out = _q(catalog, "SELECT * FROM no_such_table")
    assert code == 2
    assert "no_such_table" in out
    assert "Traceback" not in out


def test_missing_catalog_says_how_to_build(tmp_path: Path) -> None:
    code, out = _q(tmp_path / "none.duckdb", "SELECT 1")
    assert code == 2
    assert "kit db build" in out


def test_build_refuses_unverified_raw(registry_raw: Path, tmp_path: Path) -> None:
    import shutil

    raw = tmp_path / "raw"
    shutil.copytree(registry_raw, raw)
    p = raw / "pubmedqa/ori_pqal.json"
    p.write_bytes(p.read_bytes()[:-10])
    db = tmp_path / "c.duckdb"
    res = CliRunner().invoke(cli, ["db", "build", "--raw", str(raw), "--catalog", str(db)])
    assert res.exit_code == 2
    assert "pubmedqa/ori_pqal.json" in res.output
    assert not db.exists()


# --- the sandbox of `kit query` (issue 20, item 3) -------------------------------------------


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("COPY (SELECT 1) TO '{tmp}/f.csv'", "COPY"),
        ("COPY pubmedqa_items TO '{tmp}/f.parquet' (FORMAT parquet)", "COPY"),
        ("EXPORT DATABASE '{tmp}/exported'", "EXPORT"),
        ("SELECT * FROM read_text('/etc/shadow')", "read_text"),
        ("SELECT * FROM read_csv('/etc/passwd')", "read_csv"),
        ("SELECT content FROM read_blob('/etc/passwd')", "read_blob"),
        ("SELECT * FROM glob('/etc/*')", "glob"),
        (
            "SELECT n FROM (SELECT 1 AS n) WHERE n IN (SELECT 1 FROM read_csv('/etc/passwd'))",
            "read_csv",
        ),
        ("WITH x AS (SELECT * FROM query('SELECT 1')) SELECT * FROM x", "query"),
        ("ATTACH '{tmp}/new.db' (READ_WRITE)", "ATTACH"),
        ("SELECT 1; COPY (SELECT 1) TO '{tmp}/g.csv'", "2 statements"),
        ("SELECT 1; SELECT 2", "2 statements"),
        ("INSTALL httpfs", "LOAD"),
        ("LOAD httpfs", "LOAD"),
        ("PRAGMA database_list", "PRAGMA"),
        ("SET enable_external_access = true", "SET"),
        ("CALL pragma_version()", "CALL"),
        ("CREATE TABLE x AS SELECT 1", "CREATE"),
    ],
)
def test_query_escapes_are_refused(catalog: Path, tmp_path: Path, sql: str, named: str) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    before_catalog = _snapshot(catalog.parent)
    code, out = _q(catalog, sql.format(tmp=out_dir))
    assert code == 2, out
    assert "query_refused" in out and named in out, out
    assert "not allowed" in out
    assert "Traceback" not in out
    assert "root:" not in out  # nothing of /etc/passwd or /etc/shadow came back
    assert list(out_dir.iterdir()) == []  # nothing written
    assert _snapshot(catalog.parent) == before_catalog  # the catalog untouched


def test_sandboxed_connection_refuses_files_even_without_the_parser_check(catalog: Path) -> None:
    """Layer 3 on its own: the connection cannot read files, attach, or unlock its config."""
    from kit.registry import sandbox

    con = sandbox.connect(catalog)
    try:
        for sql in (
            "SELECT * FROM read_text('/etc/passwd')",
            "SELECT * FROM read_csv('/etc/passwd')",
            "ATTACH ':memory:' AS m",
        ):
            with pytest.raises(duckdb.Error):
                con.execute(sql).fetchall()
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute("SET enable_external_access = true")
        assert con.execute("SELECT current_setting('enable_external_access')").fetchone() == (
            False,
        )
    finally:
        con.close()


@pytest.mark.parametrize(
    "sql",
    [
        "WITH d AS (SELECT final_decision FROM pubmedqa_items) SELECT count(*) AS n FROM d",
        "SELECT count(*) AS n FROM pubmedqa_items UNION ALL SELECT 0 ORDER BY n DESC LIMIT 1",
        "FROM pubmedqa_items SELECT count(*) AS n",
    ],
)
def test_normal_selects_still_work(catalog: Path, sql: str) -> None:
    code, out = _q(catalog, sql)
    assert code == 0, out
    assert out.strip().splitlines() == ["n", "1000"]


def test_db_tables_lists_the_catalog(catalog: Path) -> None:
    res = CliRunner().invoke(cli, ["db", "tables", "--catalog", str(catalog), "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert "pubmedqa_items" in res.output


def test_catalog_build_is_byte_reproducible(registry_raw: Path, tmp_path: Path) -> None:
    """Two builds of the same tables, in different folders, give the same bytes (DuckDB's random
    database identifier and the build's temporary name would otherwise differ), and the fixed
    file still opens read-write."""
    import hashlib

    shas = []
    for name in ("a", "b"):
        db = tmp_path / name / "catalog.duckdb"
        build_catalog(registry_raw, db)
        shas.append(hashlib.sha256(db.read_bytes()).hexdigest())
        assert sorted(p.name for p in db.parent.iterdir()) == ["catalog.duckdb"]
    assert shas[0] == shas[1]
    con = duckdb.connect(str(tmp_path / "a" / "catalog.duckdb"))
    con.execute("CREATE TABLE t AS SELECT 1 AS x")
    assert con.execute("SELECT count(*) FROM pubmedqa_items").fetchone()[0] == 1000
    con.close()


def test_fix_identifier_refuses_an_unknown_layout(tmp_path: Path) -> None:
    from kit.core.errors import ConfigError
    from kit.registry.duckdb_file import fix_identifier, header_checksum

    db = tmp_path / "x.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT 1 AS x")
    con.close()
    data = bytearray(db.read_bytes())
    assert int.from_bytes(data[:8], "little") == header_checksum(bytes(data[8:4096]))
    data[200] ^= 0xFF  # the header no longer matches its checksum
    db.write_bytes(bytes(data))
    with pytest.raises(ConfigError, match="storage format changed"):
        fix_identifier(db)
    assert db.read_bytes() == bytes(data)  # left untouched
    other = tmp_path / "y.duckdb"
    other.write_bytes(b"\0" * 5000)
    with pytest.raises(ConfigError, match="not a DuckDB file"):
        fix_identifier(other)
