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


def _cuda_missing() -> str | None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from device_check import cuda_status

        return cuda_status()
    finally:
        sys.path.remove(str(SCRIPT.parent))


def test_skips_with_status_77_without_cuda() -> None:
    why = _cuda_missing()
    if why is None:
        pytest.skip("a CUDA GPU is here: the skip path does not apply")
    r = _run()
    assert r.returncode == 77, r.stdout + r.stderr
    assert r.stdout.strip() == f"SKIP device-check: {why} (exit 77)"


@pytest.mark.slow
def test_cpu_dry_run_reports_parity_and_rates(registry_raw: Path, tmp_path: Path) -> None:
    out = tmp_path / "check.json"
    args = ["--device", "cpu", "--pairs", "12", "--batch-sizes", "4,12", "--out", str(out)]
    r = _run(*args, "--raw", str(registry_raw))
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(out.read_text())
    assert rep["pairs"] == 12 and rep["verifiers"]
    for v in rep["verifiers"]:
        assert [d["batch_size"] for d in v["device_rows"]] == [4, 12]
        assert v["parity"] and v["max_abs_score_diff"] < 1e-6  # CPU against CPU
        assert all(d["pairs_per_s"] > 0 for d in v["device_rows"])
