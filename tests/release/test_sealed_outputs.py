"""Receipts for every output, verified completely; outputs swapped in as a set (issue 20, 4-5).

Every single-byte flip in a sealed file (csv, md, tex, html, json, png), in a receipt and in a
release manifest is caught and named; a folder is verified completely (missing, unsealed,
escaping paths); a refused `kit certify` leaves the earlier outputs byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core import atomic, receipts
from kit.core.errors import KitError

DESIGN = "alpha: 0.05\n"


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.output


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("inputs")
    scores = tmp / "scores.csv"
    code, out = run(
        "simulate", "board", "--out", str(scores), "--seed", "3", "--tasks", "20",
        "--clusters", "6", "--readouts", "r1,r2",
    )  # fmt: skip
    assert code == 0, out
    design = tmp / "design.yaml"
    design.write_text(DESIGN)
    return scores, design


def certify(inputs: tuple[Path, Path], out: Path, *extra: str) -> tuple[int, str]:
    scores, design = inputs
    return run("certify", str(scores), "--design", str(design), "--out", str(out), *extra)


@pytest.fixture(scope="module")
def sealed(inputs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A certify folder (csv, md, tex, png) plus a sealed page and summary (html, json)."""
    out = tmp_path_factory.mktemp("sealed") / "cert"
    code, text = certify(inputs, out, "--null-draws", "20")
    assert code == 0, text
    assert "sealed in receipts/certify.receipt.json" in text
    (out / "extra").mkdir()
    (out / "extra" / "report.html").write_text("<html><body><p>rate 0.12</p></body></html>\n")
    (out / "extra" / "summary.json").write_text('{"fabrication_rate": 0.12}\n')
    root = json.loads((out / "receipts" / "certify.receipt.json").read_text())
    receipts.seal_outputs(
        out / "extra", "page", "page", root["content_hash"], ["report.html", "summary.json"]
    )
    return out


def _positions(n: int) -> list[int]:
    return sorted({0, n - 1, *range(0, n, max(1, n // 25))})


def test_certify_seals_every_file_it_wrote(sealed: Path) -> None:
    code, out = run("verify", "receipts", str(sealed))
    assert code == 0, out
    art = json.loads((sealed / "receipts" / "certify.receipt.json").read_text())
    written = {
        p.relative_to(sealed).as_posix()
        for p in sealed.rglob("*")
        if p.is_file() and "receipt" not in p.name and "extra" not in p.parts
    }
    assert set(art["body"]["outputs"]) == written
    assert {"pairs.csv", "ranks.csv", "ranks.md", "ranks.tex", "ranks.png"} <= written
    assert {"scores", "design_path"} <= set(art["body"]["inputs"])


@pytest.mark.parametrize(
    "name",
    ["ranks.csv", "ranks.md", "ranks.tex", "ranks.png", "extra/report.html", "extra/summary.json"],
)
def test_every_single_byte_flip_in_a_sealed_file_is_caught_and_named(
    sealed: Path, tmp_path: Path, name: str
) -> None:
    folder = tmp_path / "f"
    shutil.copytree(sealed, folder)
    path = folder / name
    data = path.read_bytes()
    # every byte of a small file (all but ranks.png); a spread of positions of a larger one
    positions = range(len(data)) if len(data) <= 4096 else _positions(len(data))
    for i in positions:
        path.write_bytes(data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1 :])
        check = receipts.verify_outputs(folder)
        assert [(f.kind, f.path) for f in check.findings] == [("changed", name)], i
    path.write_bytes(data)
    assert receipts.verify_outputs(folder).findings == ()
    code, out = run("verify", "receipts", str(folder))
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    code, out = run("verify", "receipts", str(folder))
    assert code == 1 and name in out and "changed" in out
    assert len(positions) >= 2


@pytest.mark.parametrize(
    "name", ["receipts/certify.receipt.json", "extra/receipts/page.receipt.json"]
)
def test_every_single_byte_flip_in_a_receipt_is_caught_and_named(
    sealed: Path, tmp_path: Path, name: str
) -> None:
    folder = tmp_path / "f"
    shutil.copytree(sealed, folder)
    path = folder / name
    data = path.read_bytes()
    # every byte of the small receipt; a spread of positions of the larger one (fast)
    positions = range(len(data)) if len(data) < 1000 else _positions(len(data))
    for i in positions:
        for mask in (0x01, 0x80) if len(data) >= 1000 else (0x01,):
            path.write_bytes(data[:i] + bytes([data[i] ^ mask]) + data[i + 1 :])
            with pytest.raises(KitError) as exc:
                receipts.verify_outputs(folder)
            assert path.name in exc.value.message, (i, mask)
    path.write_bytes(data[:10] + b"\xff" + data[11:])
    code, out = run("verify", "receipts", str(folder))
    assert code == 2 and path.name in out and "Traceback" not in out


def test_missing_folder_and_folder_without_receipts_cannot_be_verified(tmp_path: Path) -> None:
    code, out = run("verify", "receipts", str(tmp_path / "nonexistent"))
    assert code == 2 and "missing_folder" in out and "nonexistent" in out
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "t.csv").write_text("a\n1\n")
    code, out = run("verify", "receipts", str(tmp_path / "plain"))
    assert code == 2 and "no_receipts" in out


def test_deleted_receipt_and_stray_file_are_named(sealed: Path, tmp_path: Path) -> None:
    folder = tmp_path / "f"
    shutil.copytree(sealed, folder)
    (folder / "extra" / "receipts" / "page.receipt.json").unlink()
    (folder / "notes.txt").write_text("added later\n")
    code, out = run("verify", "receipts", str(folder))
    assert code == 1, out
    for rel in ("extra/report.html", "extra/summary.json", "notes.txt"):
        assert f"unsealed {rel}" in out


def test_untracked_cache_is_allowed_but_only_where_listed(tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "c.json").write_text("{}\n")
    (tmp_path / "t.csv").write_text("a\n1\n")
    receipts.seal_outputs(tmp_path, "t", "t", None, ["t.csv"], untracked=["cache/"])
    code, out = run("verify", "receipts", str(tmp_path))
    assert code == 0 and "1 untracked" in out, out
    (tmp_path / "other.json").write_text("{}\n")
    assert run("verify", "receipts", str(tmp_path))[0] == 1


@pytest.mark.parametrize("rel", ["../sec/secret", "/etc/passwd", "sub/../../sec/secret"])
def test_a_sealed_path_escaping_the_folder_cannot_be_verified(tmp_path: Path, rel: str) -> None:
    (tmp_path / "sec").mkdir()
    (tmp_path / "sec" / "secret").write_text("s3cret\n")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    art = receipts.seal("t", "t", {"outputs": {rel: "0" * 64}}, None)  # resealed by hand
    receipts.write_receipt(out_dir / "t.receipt.json", art)
    code, out = run("verify", "receipts", str(out_dir))
    assert code == 2 and "path_escapes" in out, out


def test_a_symlink_out_of_the_folder_cannot_be_verified(tmp_path: Path) -> None:
    (tmp_path / "sec").mkdir()
    (tmp_path / "sec" / "secret").write_text("s3cret\n")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "t.csv").symlink_to(tmp_path / "sec" / "secret")
    art = receipts.seal("t", "t", {"outputs": {"t.csv": "0" * 64}}, None)
    receipts.write_receipt(out_dir / "t.receipt.json", art)
    code, out = run("verify", "receipts", str(out_dir))
    assert code == 2 and "path_escapes" in out, out


# --- outputs swapped in as a set, mode 0644 ---------------------------------------------------


def test_refused_certify_leaves_the_earlier_outputs_intact(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "cert"
    code, text = certify(inputs, out, "--null-draws", "20")
    assert code == 0, text
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, text = certify(inputs, out, "--null-draws", "20", "--calibration-scope", "bogus")
    assert code == 2 and "bogus" in text
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cert"]  # no staging folder left
    assert run("verify", "receipts", str(out))[0] == 0


def test_certify_refuses_to_replace_a_folder_it_did_not_write(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    (tmp_path / "mine.txt").write_text("keep me\n")
    code, text = certify(inputs, tmp_path)
    assert code == 2 and "not written by `kit certify`" in text
    assert (tmp_path / "mine.txt").read_text() == "keep me\n"


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_files_get_the_umask_mode(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        path = atomic.write_text(tmp_path / "a.txt", "x\n")
        with atomic.staged_dir(tmp_path / "set") as stage:
            atomic.write_text(stage / "b.txt", "y\n")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == mode
    assert (tmp_path / "set" / "b.txt").stat().st_mode & 0o777 == mode
    assert (tmp_path / "set").stat().st_mode & 0o777 == mode | ((mode & 0o444) >> 2)


def test_staged_dir_keep_rewrites_part_and_keeps_the_rest(tmp_path: Path) -> None:
    target = tmp_path / "t"
    target.mkdir()
    (target / "a.csv").write_text("old a\n")
    (target / "b.csv").write_text("old b\n")
    with pytest.raises(RuntimeError), atomic.staged_dir(target, keep=True) as stage:
        (stage / "a.csv").write_text("half-written\n")
        raise RuntimeError("killed")
    assert (target / "a.csv").read_text() == "old a\n"
    with atomic.staged_dir(target, keep=True) as stage:
        (stage / "a.csv").write_text("new a\n")
    assert (target / "a.csv").read_text() == "new a\n"
    assert (target / "b.csv").read_text() == "old b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


# --- `kit release verify`: every manifest field, no symlinks -----------------------------------


def _release(tree: Path, *args: str) -> tuple[int, str]:
    return run(*args, "--root", str(tree), "--sources", str(tree / "sources.yaml"))


def test_release_verify_compares_every_manifest_field(tree: Path) -> None:
    assert _release(tree, "release", "build")[0] == 0
    path = tree / "release" / "manifest.json"
    from kit.release import manifest as man

    doc = json.loads(path.read_text())
    for f in doc["files"]:
        f["licence"], f["source"] = "CC0-1.0", "someone-else"
    doc["kit_version"] = "9.9.9"
    doc["commit"] = "0" * 40
    man.write(path, doc)
    code, out = _release(tree, "release", "verify")
    assert code == 1, out
    n = len(doc["files"])
    assert out.count("licence 'CC0-1.0'") == 0  # the message shows what the tree gives
    assert out.count("manifest records 'CC0-1.0'") == n
    assert out.count("manifest records 'someone-else'") == n
    assert "kit_version" in out and "commit" in out


def test_every_single_byte_flip_in_the_manifest_is_caught(tree: Path) -> None:
    assert _release(tree, "release", "build")[0] == 0
    path = tree / "release" / "manifest.json"
    data = path.read_bytes()
    for i in _positions(len(data)):
        path.write_bytes(data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1 :])
        code, out = _release(tree, "release", "verify")
        assert code in (1, 2) and "Traceback" not in out, (i, out)
        assert "manifest.json" in out, (i, out)
    path.write_bytes(data)
    assert _release(tree, "release", "verify")[0] == 0


def test_release_refuses_a_symlink(tree: Path) -> None:
    (tree / "pkg" / "passwd").symlink_to("/etc/passwd")
    subprocess.run(["git", "-C", str(tree), "add", "pkg/passwd"], check=True)
    code, out = _release(tree, "release", "build")
    assert code == 2 and "symlink_in_release" in out and "pkg/passwd" in out
