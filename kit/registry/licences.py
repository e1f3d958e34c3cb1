"""DATA_LICENSES: generated from the source list, so the two can never disagree."""

from __future__ import annotations

from kit.registry.sources import Source, load_sources

HEADER = """\
DATA_LICENSES -- every registered external source, its licence, whether it may be redistributed.
GENERATED from kit/registry/sources.yaml by `kit registry licences --write`; do not edit by hand.
A test (tests/registry/test_licences.py) fails when this file and the source list disagree.
"""


def render_licences(sources: tuple[Source, ...] | None = None) -> str:
    sources = sources if sources is not None else load_sources()
    lines = [HEADER]
    for s in sources:
        lines.append(f"## {s.name}: {s.title}")
        lines.append(f"licence (SPDX): {s.licence}")
        lines.append(f"redistributable: {'yes' if s.redistributable else 'no'}")
        lines.append(f"citation: {s.citation}")
        lines.append("files:")
        for f in s.files:
            lines.append(f"  {f.path}  sha256:{f.sha256}  {f.bytes} bytes")
            lines.append(f"    upstream: {f.url or '(none: transcribed from the paper)'}")
        lines.append("")
    return "\n".join(lines)


def check_exportable(names: list[str], sources: tuple[Source, ...] | None = None) -> list[str]:
    """Names among ``names`` whose licence forbids redistribution (an export must refuse them)."""
    sources = sources if sources is not None else load_sources()
    by_name = {s.name: s for s in sources}
    return [n for n in names if n in by_name and not by_name[n].redistributable]
