"""Guard fixtures: the default verifier is built once per session into a temporary folder.

It is built by the command, `kit guard build-verifier`, so every guard test that loads it
loads a sealed card folder (its receipts/ beside the files the card names).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kit.cli import cli


@pytest.fixture(scope="session")
def verifier_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("verifier") / "verifier"
    res = CliRunner().invoke(cli, ["guard", "build-verifier", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "receipts" / "guard-build-verifier.receipt.json").is_file()
    return out


@pytest.fixture(scope="session")
def tiny_cross_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight cross-encoder card folder (see tests/guard/tiny_model.py)."""
    from tests.guard.tiny_model import build_tiny_cross_encoder

    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny") / "tiny-cross")
