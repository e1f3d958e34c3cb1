"""The progress display on stderr shared by long commands: a bar (audit runs, corpus ingestion,
the verifiers' batches) and one-line steps (:func:`say`: an audit stage begun, a catalog table built)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any


@dataclass
class Progress:
    """Progress on stderr: a rich bar on a terminal, else a line every ~10% of ``total``."""

    total: int
    enabled: bool
    label: str = "audit"
    unit: str = "runs"
    done: int = 0
    _bar: Any = None
    _task: Any = None
    _last: int = -1
    lines: bool = True  # off a terminal: a line every ~10% (False: nothing, as the verifiers)

    def __enter__(self) -> Progress:
        if self.enabled and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(console=Console(stderr=True), transient=True)
            desc = f"{self.label}: {self.unit}" if self.unit else self.label
            self._task = self._bar.add_task(desc, total=self.total)
            self._bar.start()
        return self

    def advance(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.advance(self._task, n)
        elif self.enabled and self.lines and self.total:
            decile = int(10 * self.done / self.total)
            if decile != self._last:
                self._last = decile
                print(
                    f"{self.label}: {self.done}/{self.total} {self.unit}",
                    file=sys.stderr,
                    flush=True,
                )

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def say(text: str, enabled: bool = True) -> None:
    """One progress line on stderr, flushed at once; nothing when ``enabled`` is False."""
    if enabled:
        print(text, file=sys.stderr, flush=True)
