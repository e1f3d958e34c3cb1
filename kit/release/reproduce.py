"""Run declared reproductions and verify them cell by cell against ``reproduce/expected/``.

A declaration ``reproduce/<name>.yaml`` names the function (``module:function``), the tables it
returns with their key columns and per-column tolerances, and what it needs (``verifier``: the
bi-encoder, ``verifier_nli``: the cross-encoder; passed as ``<need>_dir``).
Running writes ``<out>/<table>.{csv,md,tex}`` and a sealed receipt per reproduction whose parent
is the registry receipt (the sha256 of every input file).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from kit.core import atomic, boundary, receipts
from kit.core.errors import ConfigError, InputError, Location
from kit.core.schema import read_yaml
from kit.core.tables import write_table
from kit.registry.fetch import verify_present
from kit.registry.sources import REPO_ROOT
from kit.release.compare import TableComparison, compare_tables

DECL_DIR = REPO_ROOT / "reproduce"
EXPECTED_DIR = DECL_DIR / "expected"
DEFAULT_OUT = REPO_ROOT / "data" / "tables"


@dataclass(frozen=True)
class TableSpec:
    key: tuple[str, ...]
    tolerance: dict[str, float] = field(default_factory=dict)
    default_tolerance: float = 0.0
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True)
class Declaration:
    name: str
    title: str
    paper: str
    section: str
    function: str
    tables: dict[str, TableSpec]
    needs: tuple[str, ...] = ()
    slow: bool = False
    notes: str = ""


def load_declarations(folder: Path = DECL_DIR) -> list[Declaration]:
    out = []
    for path in sorted(Path(folder).glob("*.yaml")):
        d = read_yaml(path, "reproduction")
        out.append(
            Declaration(
                name=path.stem,
                title=d["title"],
                paper=d["paper"],
                section=d["section"],
                function=d["function"],
                tables={
                    t: TableSpec(
                        key=tuple(s["key"]),
                        tolerance=dict(s.get("tolerance", {})),
                        default_tolerance=float(s.get("default_tolerance", 0.0)),
                        ignore=tuple(s.get("ignore", [])),
                    )
                    for t, s in d["tables"].items()
                },
                needs=tuple(d.get("needs", [])),
                slow=bool(d.get("slow", False)),
                notes=d.get("notes", ""),
            )
        )
    return out


def select(
    decls: list[Declaration],
    names: tuple[str, ...],
    skip_slow: bool = False,
    skip: tuple[str, ...] = (),
) -> list[Declaration]:
    """The named declarations (all when ``names`` is empty), less the slow ones if asked and
    less those named in ``skip``. An unknown name in either list is an error."""
    by = {d.name: d for d in decls}
    unknown = [n for n in (*names, *skip) if n not in by]
    if unknown:
        raise ConfigError(
            "unknown_reproduction",
            f"no reproduction named {', '.join(unknown)} (known: {', '.join(sorted(by))})",
        )
    if names:
        decls = [by[n] for n in names]
    return [d for d in decls if not (skip_slow and d.slow) and d.name not in skip]


def resolve(function: str) -> Callable[..., dict[str, pd.DataFrame]]:
    module, _, attr = function.partition(":")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            "bad_function", f"cannot load reproduction function {function}: {exc}"
        ) from None


def registry_receipt(raw: Path) -> dict[str, Any]:
    files = {r.path: r.sha256 for r in verify_present(raw)}
    return receipts.seal("registry", "registry", {"files": files}, parent=None)


@dataclass(frozen=True)
class RunResult:
    name: str
    tables: dict[str, int]  # table -> rows
    seconds: float


def run(
    decl: Declaration,
    raw: Path,
    out: Path,
    parent_hash: str,
    resources: dict[str, Any] | None = None,
) -> RunResult:
    """Run one reproduction, write its tables (csv, md, tex) and its sealed receipt."""
    resources = resources or {}
    kwargs = {}
    for need in decl.needs:
        if need not in resources:
            raise ConfigError(
                "missing_resource",
                f"reproduction {decl.name} needs --{need.replace('_', '-')}",
            )
        kwargs[f"{need}_dir"] = resources[need]
    t0 = time.perf_counter()
    tables = resolve(decl.function)(raw, **kwargs)
    seconds = time.perf_counter() - t0
    missing = [t for t in decl.tables if t not in tables]
    if missing:
        raise ConfigError(
            "missing_table",
            f"{decl.function} did not return declared table(s) {', '.join(missing)}",
        )
    outputs = {}
    for tname, frame in sorted(tables.items()):
        for path in write_table(
            frame, out / tname, formats=("csv", "markdown", "latex"), caption=decl.title
        ):
            outputs[path.name] = receipts.file_sha256(path)
    body = {
        "function": decl.function,
        "paper": decl.paper,
        "section": decl.section,
        "outputs": outputs,  # every file written (csv, md, tex): `kit verify receipts` checks all
    }
    receipts.write_receipt(
        out / f"{decl.name}.receipt.json",
        receipts.seal("reproduction", decl.name, body, parent_hash),
    )
    return RunResult(decl.name, {t: len(f) for t, f in tables.items()}, seconds)


def read_output(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise InputError(
            "missing_table",
            "table not found (run `kit reproduce run` first)",
            where=Location(str(path)),
        )
    return boundary.read_csv(path, dtype=str, keep_default_na=False)


def verify(
    decls: list[Declaration], tables_dir: Path = DEFAULT_OUT, expected_dir: Path = EXPECTED_DIR
) -> list[TableComparison]:
    """Compare every declared table in ``tables_dir`` with its frozen copy, cell by cell."""
    results = []
    for d in decls:
        for tname, spec in d.tables.items():
            exp_path = expected_dir / f"{tname}.csv"
            if not exp_path.is_file():
                raise InputError(
                    "no_expected",
                    f"no frozen output for table '{tname}' (run `kit reproduce freeze {d.name}`)",
                    where=Location(str(exp_path)),
                )
            results.append(
                compare_tables(
                    tname,
                    read_output(exp_path),
                    read_output(tables_dir / f"{tname}.csv"),
                    key=list(spec.key),
                    tolerance=spec.tolerance,
                    default_tolerance=spec.default_tolerance,
                    ignore=list(spec.ignore),
                )
            )
    return results


def freeze(
    decls: list[Declaration], tables_dir: Path = DEFAULT_OUT, expected_dir: Path = EXPECTED_DIR
) -> list[Path]:
    """Copy the current outputs into ``reproduce/expected/`` (a maintainer's deliberate act)."""
    written = []
    for d in decls:
        for tname in d.tables:
            src = tables_dir / f"{tname}.csv"
            read_output(src)  # a clear error when it was never produced
            written.append(atomic.write_bytes(expected_dir / f"{tname}.csv", src.read_bytes()))
    return written
