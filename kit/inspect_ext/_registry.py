"""The module inspect_ai's entry point loads (pyproject.toml, ``[project.entry-points.inspect_ai]``):
importing it registers every inspect_ai component the kit ships -- the scorer
``kit/citation_support``."""

from __future__ import annotations

from kit.inspect_ext.scorer import citation_support

__all__ = ["citation_support"]
