"""Helpers: a small, self-contained release tree (git work tree, data.dvc, data/raw, sources)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import yaml

from kit.release import dvc_hash

RAW_FILES = {
    "alpha/items.json": b'{"a": 1, "b": [1, 2, 3]}\n',
    "alpha/LICENSE": b"MIT licence text\n",
    "beta/scores.csv": b"id,score\n1,0.5\n2,0.25\n",
}
NONREDIST_FILE = ("gamma/secret.txt", b"not for redistribution\n")


def git(root: Path, *args: str) -> None:
    """Run git in the temporary tree (never in the kit's own repository)."""
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def sources_doc(files: dict[str, bytes], nonredist: set[str] = frozenset()) -> dict:
    """A source list (schemas/json/sources.schema.json) for ``files``, one source per folder."""
    by_source: dict[str, list[dict]] = {}
    for path, data in sorted(files.items()):
        by_source.setdefault(path.split("/")[0], []).append(
            {
                "path": path,
                "what": "test file",
                "sha256": hashlib.sha256(data).hexdigest(),
                "md5": hashlib.md5(data).hexdigest(),
                "bytes": len(data),
                "url": None,
            }
        )
    return {
        "sources": [
            {
                "name": name,
                "title": f"test source {name}",
                "licence": "LicenseRef-Proprietary" if name in nonredist else "CC-BY-4.0",
                "redistributable": name not in nonredist,
                "citation": "A test.",
                "files": fl,
            }
            for name, fl in sorted(by_source.items())
        ]
    }


def make_tree(root: Path, files: dict[str, bytes], nonredist: set[str] = frozenset()) -> Path:
    """Write a git work tree with tracked files, data/raw, data.dvc and a sources.yaml."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "t"\nlicense = "MIT"\n')
    (root / "README.md").write_text("# test release\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("X = 1\n")
    (root / ".gitignore").write_text(
        "/data/raw\n/data/tables\n/data/tables-loso\n/release\n/sources.yaml\n"
    )
    raw = root / "data" / "raw"
    for rel, data in files.items():
        (raw / rel).parent.mkdir(parents=True, exist_ok=True)
        (raw / rel).write_bytes(data)
    h = dvc_hash.dir_hash(raw)
    dvc = {
        "outs": [
            {"md5": h.md5, "size": h.size, "nfiles": h.nfiles, "hash": "md5", "path": "data/raw"}
        ]
    }
    (root / "data.dvc").write_text(yaml.safe_dump(dvc, sort_keys=False))
    (root / "sources.yaml").write_text(yaml.safe_dump(sources_doc(files, nonredist)))
    git(root, "init", "-q")
    git(root, "add", "-A")
    return root
