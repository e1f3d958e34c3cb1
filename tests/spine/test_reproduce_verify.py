"""Reproductions are rebuilt, frozen, compared cell by cell, and sealed with receipts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from kit.cli import cli
from kit.core import receipts
from kit.release.compare import compare_tables
from kit.release.reproduce import load_declarations


def test_declarations_validate_and_resolve() -> None:
    from kit.release.reproduce import resolve

    decls = load_declarations()
    assert "board_check" in {d.name for d in decls}
    for d in decls:
        assert callable(resolve(d.function))


def test_compare_tables_tolerance_and_shape() -> None:
    exp = pd.DataFrame({"k": ["a", "b", "c"], "x": ["1.0", "2.0", "3"], "s": ["u", "v", "w"]})
    got = pd.DataFrame({"k": ["a", "b", "d"], "x": ["1.0000001", "2.1", "3"], "s": ["u", "V", "w"]})
    res = compare_tables("t", exp, got, key=["k"], tolerance={"x": 1e-6})
    kinds = sorted((d.kind, d.key, d.column) for d in res.diffs)
    assert kinds == [
        ("extra_row", "k=d", ""),
        ("missing_row", "k=c", ""),
        ("value", "k=b", "s"),
        ("value", "k=b", "x"),
    ]
    assert abs(res.max_abs_delta - 0.1) < 1e-12
    assert res.cells_compared == 4


def test_run_verify_and_tamper(registry_raw: Path, tmp_path: Path) -> None:
    out = tmp_path / "tables"
    runner = CliRunner()
    res = runner.invoke(
        cli, ["reproduce", "run", "board_check", "--raw", str(registry_raw), "--tables", str(out)]
    )
    assert res.exit_code == 0, res.output
    for suffix in (".csv", ".md", ".tex"):
        assert (out / f"board_check{suffix}").is_file()
    res = runner.invoke(cli, ["verify", "board", "board_check", "--tables", str(out)])
    assert res.exit_code == 0, res.output
    assert "cells differing: 0" in res.output
    res = runner.invoke(cli, ["verify", "receipts", str(out)])
    assert res.exit_code == 0, res.output

    # one cell changed -> verify board exits 1 and names the cell
    path = out / "board_check.csv"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.loc[frame["system"] == "SCRIBE", "axes_mean"] = "0.9"
    frame.to_csv(path, index=False)
    res = runner.invoke(cli, ["verify", "board", "board_check", "--tables", str(out)])
    assert res.exit_code == 1
    assert "system=SCRIBE" in res.output and "axes_mean" in res.output
    # ... and the receipt no longer matches that file
    res = runner.invoke(cli, ["verify", "receipts", str(out)])
    assert res.exit_code == 1  # verified and found a difference
    assert "changed" in res.output and "board_check.csv" in res.output


def test_rebuild_is_byte_identical(registry_raw: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        res = runner.invoke(
            cli,
            ["reproduce", "run", "--raw", str(registry_raw), "--tables", str(out), "board_check"],
        )
        assert res.exit_code == 0, res.output
        outs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outs[0] == outs[1]


def test_receipt_tamper_and_dangling_parent(tmp_path: Path) -> None:
    root = receipts.seal("registry", "registry", {"files": {"a": "0" * 64}}, None)
    child = receipts.seal("reproduction", "x", {"tables": {}}, root["content_hash"])
    receipts.write_receipt(tmp_path / "registry.receipt.json", root)
    receipts.write_receipt(tmp_path / "x.receipt.json", child)
    assert [a["name"] for a in receipts.verify_chain(tmp_path)] == ["registry", "x"]
    # tampered content
    bad = json.loads((tmp_path / "x.receipt.json").read_text())
    bad["body"]["tables"] = {"t": "1" * 64}
    (tmp_path / "x.receipt.json").write_text(json.dumps(bad))
    res = CliRunner().invoke(cli, ["verify", "receipts", str(tmp_path)])
    assert res.exit_code == 2 and "x.receipt.json" in res.output and "content_hash" in res.output
    # dangling parent
    receipts.write_receipt(tmp_path / "x.receipt.json", child)
    (tmp_path / "registry.receipt.json").unlink()
    res = CliRunner().invoke(cli, ["verify", "receipts", str(tmp_path)])
    assert res.exit_code == 2 and "parent" in res.output


def test_content_hash_is_canonical() -> None:
    a = receipts.seal("k", "n", {"b": 1, "a": [1, 2]}, None)
    b = receipts.seal("k", "n", {"a": [1, 2], "b": 1}, None)
    assert a["content_hash"] == b["content_hash"]
    assert receipts.content_hash(a) == a["content_hash"]


def test_container_run_needs_an_engine(tmp_path: Path, monkeypatch) -> None:
    # no Docker API at this address: a clear configuration error, exit 2, nothing written
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    res = CliRunner().invoke(cli, ["release", "container", "cpu", "--out", str(tmp_path / "out")])
    assert res.exit_code == 2
    assert "error [" in res.output and ("Docker" in res.output or "docker" in res.output)
    assert not (tmp_path / "out").exists()


def test_skip_leaves_a_reproduction_out_of_run_and_verify(
    registry_raw: Path, tmp_path: Path
) -> None:
    from kit.release.reproduce import select

    decls = load_declarations()
    kept = {d.name for d in select(decls, (), skip=("guard_verifier_loso",))}
    assert kept == {d.name for d in decls} - {"guard_verifier_loso"}
    assert (
        select(decls, ("board_check", "guard_verifier_loso"), skip=("guard_verifier_loso",))[0].name
        == "board_check"
    )
    out = tmp_path / "tables"
    runner = CliRunner()
    run = ["reproduce", "run", "board_check", "guard_qasa_small_n", "--skip", "guard_qasa_small_n"]
    res = runner.invoke(cli, [*run, "--raw", str(registry_raw), "--tables", str(out)])
    assert res.exit_code == 0, res.output
    assert "reproductions: 1," in res.output and not (out / "guard_qasa_small_n.csv").exists()
    # verify board: without --skip the unbuilt table is bad input; with it, it is not looked for
    check = ["verify", "board", "board_check", "guard_qasa_small_n", "--tables", str(out)]
    res = runner.invoke(cli, check)
    assert res.exit_code == 2 and "guard_qasa_small_n" in res.output
    res = runner.invoke(cli, [*check, "--skip", "guard_qasa_small_n"])
    assert res.exit_code == 0, res.output
    assert "tables: 1," in res.output
    # an unknown name in --skip is bad input (exit 2), not silently ignored
    res = runner.invoke(cli, ["verify", "board", "--tables", str(out), "--skip", "nope"])
    assert res.exit_code == 2 and "no reproduction named nope" in res.output
