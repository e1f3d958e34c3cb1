"""What a card's build measured about the machine that built it, kept apart from the card.

``card.json`` holds what the weights are (sha256s, recipe, validation): the same inputs on the
same machine give the same bytes, so DVC can lock it. Seconds, pairs/s, the CPU and its load are
readings of one build on one machine; they go to ``build.json`` beside the card, which
``.dvcignore`` keeps out of the locked folder hash (a rebuild must not dirty ``dvc.lock``) and
which a card fetched from the DVC cache does not carry.
"""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

from kit import atomic

BUILD_NAME = "build.json"


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; ``platform.processor()`` is empty on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine() -> dict[str, Any]:
    """The build machine, in words and numbers: CPUs, architecture, model, load average."""
    load = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    cpus = os.cpu_count() or 0
    return {
        "cpus": cpus,
        "arch": platform.machine(),
        "cpu_model": cpu_model(),
        "load_average_1_5_15_min": load,
        "busy": bool(load and load[0] > 0.5 * cpus),
    }


def describe(m: dict[str, Any]) -> str:
    """One line: ``2 CPUs, x86_64, <model>, load 1.9 (busy)``."""
    text = f"{m['cpus']} CPUs, {m['arch']}, {m['cpu_model']}"
    if m.get("load_average_1_5_15_min"):
        text += f", load {m['load_average_1_5_15_min'][0]}"
        if m.get("busy"):
            text += " (busy: other work shared the CPUs; the speed is a lower reading)"
    return text


def write_build_record(folder: Path, record: dict[str, Any]) -> None:
    atomic.write_text(
        Path(folder) / BUILD_NAME, json.dumps(record, indent=2, sort_keys=True) + "\n"
    )


def read_build_record(folder: Path) -> dict[str, Any] | None:
    """The build record beside a card, or None (a card from the DVC cache, or an old card)."""
    path = Path(folder) / BUILD_NAME
    if not path.is_file():
        return None
    return json.loads(path.read_text())
