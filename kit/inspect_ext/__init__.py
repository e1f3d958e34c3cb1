"""The kit as an inspect_ai extension (issue 55): the citation scorer ``kit/citation_support``.

inspect_ai finds it through the ``inspect_ai`` entry-point group of the kit's distribution
(pyproject.toml: ``kit = "kit.inspect_ext._registry"``), so ``inspect score LOG --scorer
kit/citation_support`` works wherever the kit is installed with its ``import`` extra; a task file
may also import :func:`citation_support` itself. docs/inspect.md says how its values relate to
``kit audit``.

:mod:`kit.inspect_ext.values` (pure: one sample's citation rows -> the score's value, summary
and per-citation list) and :mod:`kit.inspect_ext.scorer` (the scorer: a sample -> the kit's run
-> the audit's own citation stages, :func:`kit.audit.pipeline.open_guard` /
:func:`~kit.audit.pipeline.guard_runs`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["citation_support"]


def __getattr__(name: str) -> Any:
    """``citation_support`` on first use (importing it imports inspect_ai)."""
    if name == "citation_support":
        from kit.inspect_ext.scorer import citation_support

        return citation_support
    raise AttributeError(name)
