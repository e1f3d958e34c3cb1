"""Fixtures for the release tests: a fresh copy of a small release tree per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _release_tree import RAW_FILES, make_tree


@pytest.fixture(scope="session")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tree(tmp_path_factory.mktemp("template") / "tree", RAW_FILES)


@pytest.fixture()
def tree(_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the release tree for each test (it may be tampered with)."""
    dest = tmp_path / "tree"
    shutil.copytree(_template, dest, symlinks=True)
    return dest
