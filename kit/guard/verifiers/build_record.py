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
import time
from pathlib import Path
from typing import Any

from kit.core import atomic

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


def _cpu_jiffies() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, from ``/proc/stat``; None elsewhere."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def others_busy_cpus(seconds: float = 1.0) -> float | None:
    """CPUs kept busy by other processes: this process sleeps for ``seconds`` while the kernel's
    counters are read before and after, so every busy jiffy in between is someone else's.
    (The load average cannot tell: right after a training it counts the training itself.)"""
    before = _cpu_jiffies()
    if before is None:
        return None
    time.sleep(seconds)
    after = _cpu_jiffies()
    if after is None or after[1] <= before[1]:
        return None
    share = (after[0] - before[0]) / (after[1] - before[1])
    return round(share * (os.cpu_count() or 1), 2)


def machine() -> dict[str, Any]:
    """The build machine, in words and numbers: CPUs, architecture, model, load average (which
    includes this build's own recent work) and the CPUs other processes kept busy in the second
    before a measurement; ``busy`` when they used more than a quarter of one CPU."""
    load = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    others = others_busy_cpus()
    return {
        "cpus": os.cpu_count() or 0,
        "arch": platform.machine(),
        "cpu_model": cpu_model(),
        "load_average_1_5_15_min": load,
        "others_busy_cpus": others,
        "busy": bool(others is not None and others > 0.25),
    }


def describe(m: dict[str, Any]) -> str:
    """One line: ``2 CPUs, x86_64, <model>, other processes busy on 0.1 CPUs``."""
    text = f"{m['cpus']} CPUs, {m['arch']}, {m['cpu_model']}"
    if m.get("others_busy_cpus") is not None:
        text += f", other processes busy on {m['others_busy_cpus']} CPUs"
        if m.get("busy"):
            text += " (other work shared the CPUs: the speed is a lower reading)"
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
