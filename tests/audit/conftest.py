"""Audit fixtures: the verifier (int8, built once), a small planted set, a board, one audit."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from audit_helpers import AGENT, DESIGN, PLANTED_ARGS, AuditRun, audit_args, invoke

from kit.guard.verifiers.export import build_verifier


@pytest.fixture(scope="session")
def audit_verifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit_verifier") / "verifier"
    build_verifier(out)
    return out


@pytest.fixture(scope="session")
def planted_dir(tmp_path_factory: pytest.TempPathFactory, registry_raw: Path) -> Path:
    out = tmp_path_factory.mktemp("audit_planted") / "planted"
    r = invoke("grade", "planted", "--out", str(out), "--raw", str(registry_raw), *PLANTED_ARGS)
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="session")
def board_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A synthetic board (A, B, C) and the agent's rows on the same tasks, in two files."""
    d = tmp_path_factory.mktemp("audit_board")
    full = d / "full.csv"
    r = invoke(
        "simulate",
        "board",
        "--out",
        str(full),
        "--seed",
        "3",
        "--systems",
        f"A=0.1,B=0.0,C=-0.1,{AGENT}=0.3",
    )
    assert r.exit_code == 0, r.output
    frame = pd.read_csv(full, dtype=str, keep_default_na=False)
    board, agent = d / "board.csv", d / "agent.csv"
    frame[frame["system"] != AGENT].to_csv(board, index=False)
    frame[frame["system"] == AGENT].to_csv(agent, index=False)
    return board, agent


@pytest.fixture(scope="session")
def audited(
    tmp_path_factory: pytest.TempPathFactory,
    planted_dir: Path,
    audit_verifier: Path,
    registry_raw: Path,
    board_files: tuple[Path, Path],
) -> AuditRun:
    """One end-to-end audit of the planted set, with a board (int8 verifier for speed)."""
    out = tmp_path_factory.mktemp("audit_out") / "report"
    board, agent = board_files
    args = audit_args(
        planted_dir,
        audit_verifier,
        registry_raw,
        out,
        "--board",
        str(board),
        "--design",
        str(DESIGN),
        "--agent-scores",
        str(agent),
    )
    r = invoke(*args)
    assert r.exit_code == 0, r.output
    return AuditRun(out, r, args)
