"""The declarative source list (``kit/registry/sources.yaml``) as frozen dataclasses."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from kit.core import boundary
from kit.core.errors import ConfigError, InputError, Location
from kit.core.schema import validate_json

SOURCES_FILE = Path(__file__).resolve().parent / "sources.yaml"
REPO_ROOT = Path(__file__).resolve().parents[2]


def checkout_relative(path: Path) -> str:
    """``path`` relative to the kit's checkout when inside it (``data/raw``, not
    ``/home/me/kit/data/raw``; ``.`` for the checkout itself), else as given."""
    for p, root in ((path.absolute(), REPO_ROOT), (path.resolve(), REPO_ROOT.resolve())):
        if p.is_relative_to(root):
            return p.relative_to(root).as_posix()
    return str(path)


@dataclass(frozen=True)
class SourceFile:
    source: str
    path: str  # relative, e.g. "pubmedqa/ori_pqal.json"; also its place under data/raw/
    what: str
    sha256: str
    md5: str
    bytes: int
    url: str | None


@dataclass(frozen=True)
class Source:
    name: str
    title: str
    licence: str
    redistributable: bool
    citation: str
    files: tuple[SourceFile, ...]


@functools.cache
def load_sources(path: Path = SOURCES_FILE) -> tuple[Source, ...]:
    """Read and validate the source list. Raises InputError naming the file on any problem."""
    raw = boundary.read_yaml(path)
    validate_json(raw, "sources", str(path))
    out = []
    seen: set[str] = set()
    for s in raw["sources"]:
        files = []
        for f in s["files"]:
            if f["path"] in seen:
                raise InputError(
                    "duplicate_path",
                    f"file '{f['path']}' is declared twice",
                    where=Location(str(path)),
                )
            seen.add(f["path"])
            files.append(
                SourceFile(
                    source=s["name"],
                    path=f["path"],
                    what=f["what"],
                    sha256=f["sha256"],
                    md5=f["md5"],
                    bytes=int(f["bytes"]),
                    url=f.get("url"),
                )
            )
        out.append(
            Source(
                name=s["name"],
                title=s["title"],
                licence=s["licence"],
                redistributable=bool(s["redistributable"]),
                citation=" ".join(s["citation"].split()),
                files=tuple(files),
            )
        )
    return tuple(out)


def source_by_name(name: str) -> Source:
    for s in load_sources():
        if s.name == name:
            return s
    names = ", ".join(s.name for s in load_sources())
    raise ConfigError("unknown_source", f"no registered source '{name}' (known: {names})")


def all_files() -> list[SourceFile]:
    return [f for s in load_sources() for f in s.files]


def file_by_path(path: str) -> SourceFile:
    for f in all_files():
        if f.path == path:
            return f
    raise ConfigError("unknown_file", f"no registered file '{path}' (see `kit registry list`)")
