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


# -- the house's limits (issue 37's "done when"), kept from growing back ----------------------

MAX_COMMAND_MODULE_LINES = 300
MAX_FUNCTION_LINES = 120
MAX_GUARD_TOP_LEVEL_MODULES = 12


def _import_graph() -> dict[str, set[str]]:
    import grimp

    graph = grimp.build_graph("kit", cache_dir=None)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_planted_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_house_has_no_import_circle() -> None:
    assert _cycles(_import_graph()) == []


def test_no_command_module_over_the_limit() -> None:
    sizes = {
        str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for p in sorted((ROOT / "kit" / "commands").rglob("*.py"))
    }
    assert sizes
    assert {n: s for n, s in sizes.items() if s > MAX_COMMAND_MODULE_LINES} == {}


def test_no_function_over_the_limit() -> None:
    import ast

    long = {}
    for name, text in _sources().items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{name}:{node.name}"] = lines
    assert long == {}


def test_guard_top_level_stays_small() -> None:
    top = [p.name for p in (ROOT / "kit" / "guard").glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= MAX_GUARD_TOP_LEVEL_MODULES, sorted(top)
