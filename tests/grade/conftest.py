"""Shared fixtures for kit.grade tests: a built DuckDB catalog and the planted corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.grade import planted as pl
from kit.registry.catalog import build_catalog
from kit.registry.loaders import pubmedqa_tables

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "grade"


@pytest.fixture(scope="session")
def grade_catalog(registry_raw: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("grade_catalog") / "catalog.duckdb"
    build_catalog(registry_raw, db)
    return db


@pytest.fixture(scope="session")
def planted_corpus(registry_raw: Path) -> pl.PlantedCorpus:
    t = pubmedqa_tables(registry_raw)
    return pl.build_corpus(t["pubmedqa_items"], t["pubmedqa_contexts"], t["pubmedqa_meshes"])
