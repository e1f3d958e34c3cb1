"""Tampering is caught: one cell of a reproduced table (`kit verify board`), one receipt or a
dangling parent (`kit verify receipts`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from kit.cli import cli
from kit.core import receipts
from kit.core.hashing import file_sha256
from kit.release import reproduce as rep

DECLARATION = """\
title: "A toy table"
paper: "test"
section: "Table 0"
function: "kit.reproductions.board:board_check"
tables:
  toy:
    key: [system]
    tolerance: {score: 0.001}
"""
TOY = "system,score,note\nA,0.5000,x\nB,0.2500,y\nC,0.1250,z\n"


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.output


def toy_folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    decl, tables, expected = (tmp_path / n for n in ("decl", "tables", "expected"))
    for d in (decl, tables, expected):
        d.mkdir()
    (decl / "toy.yaml").write_text(DECLARATION)
    (tables / "toy.csv").write_text(TOY)
    (expected / "toy.csv").write_text(TOY)
    return decl, tables, expected


def test_board_library_names_the_tampered_cell(tmp_path: Path) -> None:
    decl, tables, expected = toy_folders(tmp_path)
    decls = rep.load_declarations(decl)
    assert [d.name for d in decls] == ["toy"]
    (clean,) = rep.verify(decls, tables, expected)
    assert clean.diffs == () and clean.cells_compared == 6
    # within tolerance: not a difference
    (tables / "toy.csv").write_text(TOY.replace("0.2500", "0.2505"))
    assert rep.verify(decls, tables, expected)[0].diffs == ()
    # one cell beyond tolerance, one text cell: both named by table, key and column
    (tables / "toy.csv").write_text(TOY.replace("0.2500", "0.2600").replace(",z", ",w"))
    (res,) = rep.verify(decls, tables, expected)
    named = {(d.table, d.key, d.column, d.expected, d.got) for d in res.diffs}
    assert named == {
        ("toy", "system=B", "score", "0.2500", "0.2600"),
        ("toy", "system=C", "note", "z", "w"),
    }


def test_board_cli_exits_1_naming_the_cell(tmp_path: Path) -> None:
    """The real board_check declaration, its frozen copy, and one tampered cell."""
    tables, expected = tmp_path / "tables", tmp_path / "expected"
    tables.mkdir()
    expected.mkdir()
    frozen = rep.EXPECTED_DIR / "board_check.csv"
    shutil.copy(frozen, expected / "board_check.csv")
    shutil.copy(frozen, tables / "board_check.csv")
    args = ("verify", "board", "board_check", "--tables", str(tables), "--expected", str(expected))
    code, out = run(*args)
    assert code == 0, out
    assert "cells differing: 0" in out
    frame = pd.read_csv(tables / "board_check.csv", dtype=str, keep_default_na=False)
    system = frame.loc[3, "system"]
    table = frame.loc[3, "table"]
    frame.loc[3, "axes_mean"] = str(float(frame.loc[3, "axes_mean"]) + 0.01)
    frame.to_csv(tables / "board_check.csv", index=False)
    code, out = run(*args)
    assert code == 1, out
    assert "cells differing: 1" in out
    assert "axes_mean" in out and system in out and table in out


def _chain(folder: Path) -> tuple[Path, Path]:
    root = receipts.seal("registry", "registry", {"files": {"a": "0" * 64}}, parent=None)
    child = receipts.seal("reproduction", "toy", {"tables": {}}, parent=root["content_hash"])
    return (
        receipts.write_receipt(folder / "registry.receipt.json", root),
        receipts.write_receipt(folder / "toy.receipt.json", child),
    )


def test_receipts_clean_chain_passes(tmp_path: Path) -> None:
    _chain(tmp_path)
    code, out = run("verify", "receipts", str(tmp_path))
    assert code == 0, out
    assert "receipts: 2 verified" in out


def test_tampered_receipt_exits_2_naming_the_file(tmp_path: Path) -> None:
    _, child = _chain(tmp_path)
    art = json.loads(child.read_text())
    art["body"]["tables"] = {"toy": "f" * 64}  # content changed, content_hash left as it was
    child.write_text(json.dumps(art))
    code, out = run("verify", "receipts", str(tmp_path))
    assert code == 2
    assert "toy.receipt.json" in out and "tampered" in out


def test_dangling_parent_exits_2_naming_the_file(tmp_path: Path) -> None:
    root, _ = _chain(tmp_path)
    root.unlink()
    code, out = run("verify", "receipts", str(tmp_path))
    assert code == 2
    assert "toy.receipt.json" in out and "dangling_parent" in out


def test_table_changed_after_its_receipt_exits_1(tmp_path: Path) -> None:
    (tmp_path / "toy.csv").write_text(TOY)
    root = receipts.seal("registry", "registry", {"files": {}}, parent=None)
    body = {"tables": {"toy": file_sha256(tmp_path / "toy.csv")}}
    child = receipts.seal("reproduction", "toy", body, parent=root["content_hash"])
    receipts.write_receipt(tmp_path / "registry.receipt.json", root)
    receipts.write_receipt(tmp_path / "toy.receipt.json", child)
    assert run("verify", "receipts", str(tmp_path))[0] == 0
    (tmp_path / "toy.csv").write_text(TOY.replace("0.5000", "0.5001"))
    code, out = run("verify", "receipts", str(tmp_path))
    assert code == 1  # verified and found a difference
    assert "toy.csv" in out
