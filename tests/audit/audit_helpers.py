"""Helpers shared by the audit tests (constants, CLI invocation, the audit command line)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner, Result

from kit.cli import cli

REPO = Path(__file__).resolve().parents[2]
DESIGN = REPO / "examples" / "certify" / "design.yaml"
AGENT = "planted-answers"
# Small but informative: 40 answers, generous planted rates so every headline number has data.
PLANTED_ARGS = ("--seed", "0", "--n-answers", "40", "--p-wrong", "0.25", "--p-fabricated", "0.1")
PLANTED_ARGS += ("--p-transient", "0.05")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def audit_args(planted: Path, verifier: Path, raw: Path, out: Path, *extra: str) -> list[str]:
    return [
        "audit",
        str(planted / "runs.jsonl"),
        "--checklists",
        str(planted / "checklists.jsonl"),
        "--raw",
        str(raw),
        "--verifier",
        str(verifier),
        "--variant",
        "int8",
        "--n-cal",
        "30",
        "--out",
        str(out),
        *extra,
    ]


@dataclass(frozen=True)
class AuditRun:
    out: Path
    result: Result
    args: list[str]
