"""Headless Chromium screenshots for the page tests (Debian's chromium; .ci/run installs it)."""

from __future__ import annotations

import os
import shutil
import subprocess
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


def screenshot(page: Path, png: Path, size: str = "1200,1600") -> Path:
    """Render ``page`` to ``png``; fail under CI when chromium is missing, skip elsewhere."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (.ci/run installs it)")
        pytest.skip("chromium not installed: `apt-get install chromium` to run the browser check")
    cmd = [
        exe,
        *FLAGS,
        f"--user-data-dir={png.parent / (png.stem + '-profile')}",
        f"--screenshot={png}",
        f"--window-size={size}",
        page.resolve().as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert png.is_file(), proc.stderr[-2000:]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return png
