"""Headless Chromium screenshots for the page tests (Debian's chromium; .ci/run installs it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (.ci/run installs it)")
        pytest.skip("chromium not installed: `apt-get install chromium` to run the browser check")
    return exe


def artifact(tmp_path: Path, name: str) -> Path:
    """Where a test keeps a screenshot: $KIT_TEST_ARTIFACTS/NAME when set, else tmp_path/NAME."""
    root = os.environ.get("KIT_TEST_ARTIFACTS")
    base = Path(root) if root else tmp_path
    base.mkdir(parents=True, exist_ok=True)
    return base / name


def dump_dom(page: Path, profile: Path, fragment: str = "") -> str:
    """The DOM after the page's scripts ran (headless Chromium ``--dump-dom``); ``fragment``
    is appended to the address (``#verdict=refused``)."""
    exe = _chromium()
    cmd = [
        exe,
        *FLAGS,
        f"--user-data-dir={profile}",
        "--dump-dom",
        page.resolve().as_uri() + fragment,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and "<body" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def screenshot(page: Path, png: Path, size: str = "1200,1600") -> Path:
    """Render ``page`` to ``png``; fail under CI when chromium is missing, skip elsewhere."""
    exe = _chromium()
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        cmd = [
            exe,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size={size}",
            page.resolve().as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert png.is_file(), proc.stderr[-2000:]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return png
