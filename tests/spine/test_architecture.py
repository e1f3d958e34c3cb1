"""docs/architecture.md is the map modules point to: what they cite must be in the project."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
# modules still citing the developers' design notes outside the project: none since step 1's merge
STILL_CITING_DESIGN: set[str] = set()


def _sources() -> dict[str, str]:
    return {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "kit").rglob("*.py"))
    }


def test_modules_cite_docs_that_exist() -> None:
    cited = {
        (name, ref)
        for name, text in _sources().items()
        for ref in re.findall(r"\bdocs/[\w.-]+\.md\b", text)
    }
    assert cited, "no module cites a docs page"
    missing = sorted((name, ref) for name, ref in cited if not (ROOT / ref).is_file())
    assert not missing


def test_no_module_cites_a_design_note_outside_the_project() -> None:
    citing = {name for name, text in _sources().items() if "DESIGN.md" in text}
    assert citing <= STILL_CITING_DESIGN, sorted(citing - STILL_CITING_DESIGN)


def test_cited_sections_of_the_architecture_page_exist() -> None:
    headings = {
        line.lstrip("#").strip()
        for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }
    pattern = re.compile(r'docs/architecture\.md,\s+"([^"]+)"')
    cited = {
        (name, " ".join(s.split()))  # a section name may wrap across docstring lines
        for name, text in _sources().items()
        for s in pattern.findall(text)
    }
    assert len(cited) >= 10
    assert not sorted((name, s) for name, s in cited if s not in headings)
