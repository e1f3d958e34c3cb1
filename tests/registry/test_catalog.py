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
    res = CliRunner().invoke(cli, ["query", sql, "--db", str(db), "--format", fmt])
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
    res = CliRunner().invoke(cli, ["db", "build", "--raw", str(raw), "--db", str(db)])
    assert res.exit_code == 2
    assert "pubmedqa/ori_pqal.json" in res.output
    assert not db.exists()
