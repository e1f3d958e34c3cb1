"""The inspect_ai extension's tests: the scenario they share (scenario.py), built once per
session. They reuse the importer's scripted harness (tests/runs/importers/harness_spellings.py,
which imports its sibling mock_inspect.py), so that folder goes on ``sys.path`` first."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

IMPORTERS = Path(__file__).resolve().parents[1] / "runs" / "importers"
if str(IMPORTERS) not in sys.path:
    sys.path.insert(0, str(IMPORTERS))

from scenario import Setup, build_scenario, rescore  # noqa: E402


@pytest.fixture(scope="session")
def scenario(tmp_path_factory: pytest.TempPathFactory, registry_raw: Path) -> Setup:
    """The shared scenario (scenario.py), built once."""
    return build_scenario(tmp_path_factory.mktemp("inspect_ext"), registry_raw)


@pytest.fixture(scope="session")
def rescored(scenario: Setup) -> Any:
    """The scenario's log scored by the kit's scorer with the calibration file."""
    return rescore(scenario)
