"""bench/device_check.py (`make device-check`): a distinct skip status without a GPU, and its
steps dry-run on CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "device_check.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, str(SCRIPT), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, check=False)


def _device_check() -> object:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import device_check

        return device_check
    finally:
        sys.path.remove(str(SCRIPT.parent))


def test_skips_with_status_77_without_cuda() -> None:
    dc = _device_check()
    why = {"training": dc.torch_status(), "scoring": dc.cuda_status()}
    if None in why.values():
        pytest.skip(
            "a CUDA GPU with torch or onnxruntime-gpu is here: the skip path does not apply"
        )
    r = _run()
    assert r.returncode == 77, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        f"SKIP device-check training: {why['training']}",
        f"SKIP device-check scoring: {why['scoring']}",
        "device-check: no part could run here (exit 77)",
    ]
    # what is missing is named: no GPU, and this torch / onnxruntime build
    assert "torch" in why["training"] and "GPU" in why["scoring"]


def test_plan_runs_what_the_machine_allows() -> None:
    dc = _device_check()
    both = ("training", "scoring")
    no_ort = {"training": None, "scoring": "no CUDAExecutionProvider"}
    assert dc.plan(both, "cuda", no_ort) == (
        ["training"],
        ["SKIP device-check scoring: no CUDAExecutionProvider"],
    )
    assert dc.plan(both, "cuda", {"training": "cpu torch", "scoring": None}) == (
        ["scoring"],
        ["SKIP device-check training: cpu torch"],
    )
    assert dc.plan(both, "cpu", {"training": "x", "scoring": "y"}) == (list(both), [])
    assert dc.exit_status([], {}) == 77
    assert dc.exit_status(["training"], {"training": {}}) == 0
    fail = {"scoring": {"verifiers": [{"parity": True}, {"parity": False}]}}
    assert dc.exit_status(["scoring"], fail) == 1


def test_unknown_part_is_a_usage_error() -> None:
    r = _run("--parts", "training,inference")
    assert r.returncode == 2 and "inference" in r.stdout


@pytest.mark.slow
def test_cpu_dry_run_reports_parity_and_rates(registry_raw: Path, tmp_path: Path) -> None:
    out = tmp_path / "check.json"
    args = ["--device", "cpu", "--pairs", "12", "--batch-sizes", "4,12", "--out", str(out)]
    r = _run(*args, "--raw", str(registry_raw))
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(out.read_text())["scoring"]
    assert rep["pairs"] == 12 and rep["verifiers"]
    for v in rep["verifiers"]:
        assert [d["batch_size"] for d in v["device_rows"]] == [4, 12]
        assert v["parity"] and v["max_abs_score_diff"] < 1e-6  # CPU against CPU
        assert all(d["pairs_per_s"] > 0 for d in v["device_rows"])


@pytest.mark.slow
def test_cpu_dry_run_of_training(registry_raw: Path, tmp_path: Path) -> None:
    """The training part's plumbing on CPU: a tiny base, --train-batch-size 4 reaches the
    recipe, and the report sets the card's time, pairs/s and AUC beside the CPU card's."""
    from tests.guard.tiny_model import build_tiny_base

    out = tmp_path / "check.json"
    base = build_tiny_base(tmp_path / "base")
    args = ["--device", "cpu", "--parts", "training", "--base", str(base), "--train-epochs", "1"]
    args += ["--train-cap", "8", "--train-batch-size", "4", "--train-val", "12"]
    r = _run(*args, "--raw", str(registry_raw), "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(out.read_text())["training"]["device_card"]
    assert d["device"] == "cpu" and d["batch_size"] == 4 and d["epochs"] == 1
    assert d["pairs_per_s"] > 0 and d["rule"] in d["biomedical_mean_auc"]
    assert "device-check training: cpu, batch 4, 1 epochs" in r.stdout
