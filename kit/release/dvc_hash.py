"""DVC's directory hash, recomputed without DVC, and the ``.dvc`` file it is compared with.

DVC 3 (``hash: md5``) records a tracked folder as ``<md5>.dir`` where ``<md5>`` is the plain md5
of the folder's *tree object*: ``json.dumps(entries, sort_keys=True)`` (Python's default
separators, ASCII-escaped), UTF-8 encoded, where ``entries`` is the list of ``{"md5": <file
md5>, "relpath": <posix path relative to the folder>}`` for every file, sorted by ``relpath``
(``dvc_data.hashfile.tree.Tree.as_bytes`` / ``Tree.digest``). Files matched by ``.dvcignore``
are left out; this module honours the plain name patterns found there (``__pycache__``,
``*.pyc``: matched against every path component), not the full gitignore syntax. A test checks
the result against ``dvc add`` on a temporary folder.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from kit.core.errors import ConfigError, InputError, Location
from kit.core.hashing import file_digest


@dataclass(frozen=True)
class DirHash:
    """A folder as DVC records it: ``md5`` ends in ``.dir``."""

    md5: str
    nfiles: int
    size: int


def file_md5(path: Path) -> str:
    """Plain md5 of a file's bytes (DVC 3's ``hash: md5``)."""
    return file_digest(path, "md5")


def tree_bytes(entries: list[tuple[str, str]]) -> bytes:
    """DVC's serialisation of a tree: ``entries`` are ``(relpath, md5)`` pairs. Pure."""
    listing = sorted(
        ({"md5": md5, "relpath": rel} for rel, md5 in entries), key=lambda e: e["relpath"]
    )
    return json.dumps(listing, sort_keys=True).encode("utf-8")


def tree_md5(entries: list[tuple[str, str]]) -> str:
    """``<md5 of tree_bytes>.dir``. Pure."""
    return hashlib.md5(tree_bytes(entries)).hexdigest() + ".dir"


def read_dvcignore(path: Path) -> tuple[str, ...]:
    """Plain patterns of a ``.dvcignore`` (comments and blank lines dropped)."""
    if not path.is_file():
        return ()
    lines = (ln.strip() for ln in path.read_text().splitlines())
    return tuple(ln for ln in lines if ln and not ln.startswith("#"))


def ignored(relpath: str, patterns: tuple[str, ...]) -> bool:
    """True when any path component matches a pattern (``*.pyc``, ``__pycache__``)."""
    parts = relpath.split("/")
    return any(fnmatch.fnmatchcase(part, pat.strip("/")) for part in parts for pat in patterns)


def list_files(folder: Path, patterns: tuple[str, ...] = ()) -> list[str]:
    """Posix relative paths of every regular file under ``folder`` not ignored, sorted."""
    out = []
    for p in Path(folder).rglob("*"):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and not ignored(rel, patterns):
            out.append(rel)
    return sorted(out)


def dir_hash(folder: Path, patterns: tuple[str, ...] = ()) -> DirHash:
    """Recompute DVC's ``.dir`` md5, file count and total size of ``folder``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(
            "missing_folder",
            "folder not found (run `kit registry fetch`)",
            where=Location(str(folder)),
        )
    rels = list_files(folder, patterns)
    entries = [(rel, file_md5(folder / rel)) for rel in rels]
    size = sum((folder / rel).stat().st_size for rel in rels)
    return DirHash(tree_md5(entries), len(rels), size)


def read_dvc_out(dvc_file: Path, path: str) -> DirHash:
    """The ``outs`` entry for ``path`` in a ``.dvc`` file (``md5``, ``nfiles``, ``size``)."""
    where = Location(str(dvc_file))
    try:
        doc = yaml.safe_load(Path(dvc_file).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError("bad_dvc_file", f"{dvc_file}: cannot read ({exc})") from None
    outs = doc.get("outs") if isinstance(doc, dict) else None
    for out in outs or []:
        if isinstance(out, dict) and out.get("path") == path:
            if out.get("hash", "md5") != "md5" or "md5" not in out:
                raise InputError(
                    "bad_dvc_file",
                    f"the entry for '{path}' has no DVC 3 md5 (hash: {out.get('hash')})",
                    where=where,
                )
            return DirHash(str(out["md5"]), int(out.get("nfiles", -1)), int(out.get("size", -1)))
    raise InputError("bad_dvc_file", f"no outs entry with path '{path}'", where=where)
