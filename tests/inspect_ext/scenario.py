"""The scenario the extension's tests share (conftest.py builds it once per session): the
spellings eval of tests/runs/importers/harness_spellings.py, scored by includes(); its import;
the tiny cross-encoder; a calibration file whose tau is the median support score of the audited
citations (so some are flagged and some are not, and tau does not depend on which runs are
audited: docs/inspect.md); `kit audit` of the runs with it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from click.testing import CliRunner

from kit.cli import cli
from kit.core.schema import read_table
from kit.inspect_ext.values import sample_value

SCORER = "citation_support"
FINISHED = ("s_bracket", "s_legacy", "s_same", "s_unread", "s_refs", "s_uncited")


@dataclass(frozen=True)
class Setup:
    log: Path  # the spellings eval, scored by includes()
    runs: Path  # kit import inspect-ai of it
    verifier: Path
    calibration: Path
    tau: float
    audit: Path  # kit audit of the runs with the calibration file
    raw: Path

    def args(self, **more: Any) -> dict[str, Any]:
        """The scorer's arguments for this setup (kit audit's option names)."""
        return {
            "verifier": str(self.verifier),
            "raw": str(self.raw),
            "n_cal": 10,
            "calibration": str(self.calibration),
            **more,
        }


def kit(*args: str) -> str:
    """A `kit` command run in process; its output (exit 0 asserted)."""
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.output


def _median_tau_calibration(scores: list[float], path: Path) -> float:
    """A calibration CSV of 19 unsupported scores whose conformal tau at alpha 0.1
    (k = ceil(20 * 0.9) = 18) is the median of ``scores``."""
    m = float(pd.Series(scores).median())
    rows = [0.0] * 17 + [m, 1.0]
    pd.DataFrame({"score": rows, "label": "unsupported"}).to_csv(path, index=False)
    return m


def build_scenario(d: Path, registry_raw: Path) -> Setup:
    """The scenario (module doc) in the folder ``d``."""
    from harness_spellings import write_spellings_log

    from tests.guard.tiny_model import build_tiny_cross_encoder

    log, _ = write_spellings_log(d / "logs", registry_raw)
    runs = d / "runs.jsonl"
    kit("import", "inspect-ai", str(log), "--out", str(runs))
    verifier = build_tiny_cross_encoder(d / "tiny")
    common = ["--raw", str(registry_raw), "--verifier", str(verifier), "--n-cal", "10", "--quiet"]
    first = d / "audit-default"
    kit("audit", str(runs), "--out", str(first), *common)
    cites = read_table(first / "citations.csv", "audit_citations")
    scored = cites["support_score"].dropna().tolist()
    assert len(set(scored)) >= 4  # distinct scores: a median tau splits them
    calibration = d / "calibration.csv"
    tau = _median_tau_calibration(scored, calibration)
    audit = d / "audit"
    kit("audit", str(runs), "--out", str(audit), "--calibration", str(calibration), *common)
    return Setup(log, runs, verifier, calibration, tau, audit, registry_raw)


def audit_tables(setup: Setup) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`kit audit`'s citations.csv and runs.csv."""
    cites = read_table(setup.audit / "citations.csv", "audit_citations")
    runs = read_table(setup.audit / "runs.csv", "audit_runs")
    return cites, runs


def sample_of(run_id: str) -> str:
    """``<task>:<eval id>:<sample id>:<epoch>`` -> the sample id."""
    return run_id.split(":")[-2]


def audit_values(setup: Setup) -> dict[str, dict[str, Any]]:
    """kit audit's citations.csv aggregated per run, keyed by sample id (finished runs)."""
    cites, runs = audit_tables(setup)
    done = runs[runs["status"] == "ok"]
    return {sample_of(rid): sample_value(cites[cites["run_id"] == rid]) for rid in done["run_id"]}


def same_value(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal score values (NaN equal to NaN)."""

    def eq(x: Any, y: Any) -> bool:
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            return True
        return x == y

    return a.keys() == b.keys() and all(eq(a[k], b[k]) for k in a)


def rescore(setup: Setup, **args: Any) -> Any:
    """The includes()-scored log scored again by the kit's scorer (``inspect_ai.score``)."""
    from inspect_ai import score
    from inspect_ai.log import read_eval_log

    from kit.inspect_ext import citation_support

    log = read_eval_log(str(setup.log))
    return score(log, citation_support(**setup.args(**args)), display="none")
