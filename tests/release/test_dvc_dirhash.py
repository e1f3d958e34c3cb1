"""DVC's ``.dir`` md5, recomputed without DVC, checked against DVC itself and data.dvc."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kit.core.errors import InputError
from kit.registry.sources import REPO_ROOT
from kit.release import dvc_hash

DVC = Path(sys.executable).parent / "dvc"

TRICKY = {
    "a.txt": b"alpha\n",
    "a-b/x.bin": bytes(range(256)),
    "a/b.txt": b"nested\n",
    "a/z/deep.json": b'{"k": [1, 2]}',
    "B.txt": b"upper case sorts first\n",
    "empty": b"",
    "caf\u00e9.txt": b"non-ASCII name\n",
}


def write(folder: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)


@pytest.mark.skipif(not DVC.exists(), reason="dvc not installed in this environment")
def test_dir_hash_equals_dvc_add(tmp_path: Path) -> None:
    write(tmp_path / "data", TRICKY)
    subprocess.run([str(DVC), "init", "--no-scm", "-q"], cwd=tmp_path, check=True)
    subprocess.run([str(DVC), "add", "-q", "data"], cwd=tmp_path, check=True)
    want = dvc_hash.read_dvc_out(tmp_path / "data.dvc", "data")
    got = dvc_hash.dir_hash(tmp_path / "data")
    assert got == want
    assert got.nfiles == len(TRICKY)


def test_one_byte_changes_the_dir_hash(tmp_path: Path) -> None:
    write(tmp_path, TRICKY)
    before = dvc_hash.dir_hash(tmp_path)
    (tmp_path / "a" / "b.txt").write_bytes(b"nested!")
    assert dvc_hash.dir_hash(tmp_path).md5 != before.md5


def test_renaming_changes_the_dir_hash_even_with_the_same_bytes() -> None:
    assert dvc_hash.tree_md5([("a", "0" * 32)]) != dvc_hash.tree_md5([("b", "0" * 32)])
    # order of the input does not matter: DVC sorts by relpath
    pairs = [("b", "1" * 32), ("a", "0" * 32)]
    assert dvc_hash.tree_md5(pairs) == dvc_hash.tree_md5(pairs[::-1])


def test_dvcignore_patterns_are_left_out(tmp_path: Path) -> None:
    write(tmp_path, {"x.txt": b"x", "__pycache__/m.pyc": b"junk", "y.pyc": b"junk"})
    pats = ("__pycache__", "*.pyc")
    assert dvc_hash.list_files(tmp_path, pats) == ["x.txt"]
    want = dvc_hash.DirHash(
        dvc_hash.tree_md5([("x.txt", dvc_hash.file_md5(tmp_path / "x.txt"))]), 1, 1
    )
    assert dvc_hash.dir_hash(tmp_path, pats) == want


def test_the_repository_data_raw_matches_data_dvc() -> None:
    raw = REPO_ROOT / "data" / "raw"
    if not raw.is_dir():
        pytest.skip("data/raw not fetched (run `kit registry fetch`)")
    pats = dvc_hash.read_dvcignore(REPO_ROOT / ".dvcignore")
    assert dvc_hash.dir_hash(raw, pats) == dvc_hash.read_dvc_out(REPO_ROOT / "data.dvc", "data/raw")


def test_read_dvc_out_errors_name_the_file(tmp_path: Path) -> None:
    f = tmp_path / "x.dvc"
    f.write_text("outs:\n- md5: abc.dir\n  hash: md5\n  path: other\n")
    with pytest.raises(InputError, match=r"x\.dvc"):
        dvc_hash.read_dvc_out(f, "data/raw")
    with pytest.raises(InputError, match="missing"):
        dvc_hash.dir_hash(tmp_path / "missing")
