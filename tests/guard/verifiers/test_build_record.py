"""A card's build record: the machine and the load a speed was measured under."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kit.guard.verifiers import build_record


def test_others_busy_cpus_sees_another_process_spin() -> None:
    if not Path("/proc/stat").is_file():
        pytest.skip("no /proc/stat on this platform")
    spinner = subprocess.Popen(
        [sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 3: pass"]
    )
    try:
        busy = build_record.others_busy_cpus(1.0)
    finally:
        spinner.wait()
    assert busy is not None and busy > 0.5  # one spinning process is about one CPU


def test_machine_names_the_cpu_and_says_when_it_was_busy() -> None:
    m = build_record.machine()
    assert m["cpus"] >= 1 and m["cpu_model"] and m["cpu_model"] != "?"
    text = build_record.describe(
        {**m, "others_busy_cpus": 1.5, "busy": True, "load_average_1_5_15_min": [2.0, 2.0, 2.0]}
    )
    assert "other processes busy on 1.5 CPUs" in text and "lower reading" in text
    quiet = build_record.describe({**m, "others_busy_cpus": 0.01, "busy": False})
    assert "lower reading" not in quiet


def test_build_record_round_trip(tmp_path: Path) -> None:
    assert build_record.read_build_record(tmp_path) is None
    build_record.write_build_record(tmp_path, {"train_seconds": 1.5})
    assert build_record.read_build_record(tmp_path) == {"train_seconds": 1.5}
