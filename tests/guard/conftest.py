"""Guard fixtures: the default verifier is built once per session into a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from kit.guard.export import build_verifier


@pytest.fixture(scope="session")
def verifier_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("verifier") / "verifier"
    build_verifier(out)
    return out


@pytest.fixture(scope="session")
def tiny_cross_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight cross-encoder card folder (see tests/guard/tiny_model.py)."""
    from tests.guard.tiny_model import build_tiny_cross_encoder

    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "tiny-cross")
