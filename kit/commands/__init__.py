"""CLI command groups, one module per group; ``kit/cli.py`` registers every entry here.

Groups load lazily: ``kit --help`` and ``kit --version`` import none of them (they pull in
pandas, scipy and onnxruntime), and ``kit GROUP ...`` imports only its own module.

To add a group: write ``kit/commands/<name>.py`` exposing a ``click.Group`` (or command) and
add a :class:`LazyCommand` to ``COMMANDS`` below; its ``summary`` is the first line of the
group's docstring (a test checks that they agree).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import click


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives and the one line ``kit --help`` shows for it."""

    module: str
    attr: str
    summary: str

    def load(self) -> click.Command:
        return getattr(importlib.import_module(self.module), self.attr)


COMMANDS: dict[str, LazyCommand] = {
    "registry": LazyCommand(
        "kit.commands.registry",
        "registry",
        "The data registry: every external source, pinned by sha256, with its licence.",
    ),
    "db": LazyCommand(
        "kit.commands.db", "db", "The DuckDB catalog: one normalised table per registered dataset."
    ),
    "query": LazyCommand(
        "kit.commands.db", "query", "Run read-only SQL against the catalog and print the result."
    ),
    "board": LazyCommand(
        "kit.commands.board",
        "board",
        "Checks of the published BioLitBench board (Tables 1, 4, 5a, 5b).",
    ),
    "reproduce": LazyCommand(
        "kit.commands.reproduce",
        "reproduce",
        "Reproductions of the papers' tables and figures (declared in reproduce/*.yaml).",
    ),
    "verify": LazyCommand(
        "kit.commands.verify",
        "verify",
        "Verify reproduced tables against the frozen board, and receipt chains.",
    ),
    "schema": LazyCommand(
        "kit.commands.schema",
        "schema",
        "Table schemas (pandera, schemas/*.yaml): list them, show one, validate a file.",
    ),
    "report": LazyCommand(
        "kit.commands.report",
        "report",
        "Human-readable reports: pages people would rather look at than read.",
    ),
    "guard": LazyCommand(
        "kit.commands.guard",
        "guard",
        "Citation guard: verify cited claims, flag with a split-conformal threshold, re-attribute.",
    ),
    "certify": LazyCommand(
        "kit.commands.certify",
        "certify",
        "Certify every pair of a score table, or of harness logs, under a declared design (Eq. 4).",
    ),
    "simulate": LazyCommand(
        "kit.commands.simulate",
        "simulate",
        "Synthetic inputs with known truth (clearly labelled synthetic).",
    ),
    "release": LazyCommand(
        "kit.commands.release",
        "release",
        "Release manifest (build, verify) and the reproduction inside a container.",
    ),
    "grade": LazyCommand(
        "kit.commands.grade",
        "grade",
        "Grade agent runs: frozen checklists, two-level citation audit, behaviour, replay cache.",
    ),
    "theory": LazyCommand(
        "kit.commands.theory",
        "theory",
        "Theory toolkit: L_M, composition bounds, controllability distance, graph discrepancy.",
    ),
    "anchor": LazyCommand(
        "kit.commands.anchor",
        "anchor",
        "A judge's rate anchored on a gold sample: PPI++ beside judge-only and gold-only.",
    ),
    "audit": LazyCommand(
        "kit.commands.audit", "audit", "Audit an agent's runs end to end: one report."
    ),
    "corpus": LazyCommand(
        "kit.commands.corpus",
        "corpus",
        "Corpora for citation resolution: build, list, show, search.",
    ),
    "import": LazyCommand(
        "kit.commands.imports",
        "import_group",
        "Import runs from the harnesses labs already use into the kit's run format v2.",
    ),
}
