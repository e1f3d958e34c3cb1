"""Shared fixtures. Registry data enters tests only through the registry (fetched from the mirror
into a temporary folder, sha256-checked), never from a committed copy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kit.registry import fetch as fetch_mod

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def mirror() -> Path:
    m = fetch_mod.default_mirror()
    if m is None or not m.is_dir():
        pytest.fail(
            "no registry mirror: set KIT_MIRROR or place ../shared/registry beside the repo"
        )
    return m


@pytest.fixture(scope="session")
def registry_raw(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Path:
    """A data/raw folder fetched (sha256-checked) from the mirror, shared by the whole session."""
    dest = tmp_path_factory.mktemp("registry") / "raw"
    fetch_mod.fetch(dest=dest, mirror=mirror, dvc_cache=None, allow_network=False)
    return dest


@pytest.fixture(scope="session", autouse=True)
def session_score_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The score store of CLI runs in tests: a session temp folder, never the checkout's
    data/scores (KIT_CACHE_DIR; a test that needs its own store passes --cache-dir)."""
    from kit.guard.scoring.score_store import ENV_VAR

    store = tmp_path_factory.mktemp("scores")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENV_VAR, str(store))
        yield store
