"""Release manifest: every released file with its sha256, size, source and licence.

The released files are

* ``repo``  -- the repository files git tracks (``git ls-files``), under the kit's licence;
* ``raw``   -- the registry files under ``data/raw`` with the source and licence that
  ``kit/registry/sources.yaml`` records for them (their sha256 must equal the pinned one), and the
  folder as a whole must hash to the ``.dir`` md5 that ``data.dvc`` records (recomputed the way
  DVC does, see :mod:`kit.release.dvc_hash`);
* ``table`` -- the reproduced outputs under ``data/tables`` and ``data/tables-loso`` (the
  leave-one-source-out table, `make reproduce-loso`), for each of those folders that exists.

Files of a source whose licence forbids redistribution are never exported: they are left out of
``files`` and listed under ``withheld`` (``kit.registry.licences.check_exportable``).

``verify`` recomputes the same collection and reports every file that changed, is missing, or is
extra, plus a ``data/raw`` folder that no longer matches ``data.dvc``. The comparison itself
(:func:`compare`) is pure.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kit import __version__
from kit.core import atomic, boundary
from kit.core.errors import ConfigError, InputError, IntegrityError, Location
from kit.core.hashing import file_sha256
from kit.core.schema import validate_json
from kit.registry.licences import check_exportable
from kit.registry.sources import REPO_ROOT, Source, load_sources
from kit.release import dvc_hash

FORMAT = "litaudit-kit-release-manifest/1"
DEFAULT_MANIFEST = Path("release") / "manifest.json"
RAW_DIR = "data/raw"
TABLES_DIRS = ("data/tables", "data/tables-loso")
DVC_FILE = "data.dvc"
KIT_SOURCE = "litaudit-kit"
DERIVED_SOURCE = "litaudit-kit (derived: kit reproduce run)"
UNREGISTERED = "(unregistered)"
# Names that usually hold credentials: a release containing one is refused, not silently trimmed.
SECRET_PATTERNS = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_ed25519*",
    ".netrc",
    ".pypirc",
    "credentials*",
)


@dataclass(frozen=True)
class Entry:
    """One released file. ``path`` is posix, relative to the release root."""

    path: str
    sha256: str
    bytes: int
    kind: str  # repo | raw | table
    source: str
    licence: str


@dataclass(frozen=True)
class Difference:
    """One way the tree differs from its manifest."""

    kind: str  # changed | missing | extra | field | dvc | licence
    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind:<8} {self.path}  {self.detail}".rstrip()


@dataclass(frozen=True)
class Collection:
    """What ``build`` found: the entries to export, the withheld sources, the DVC hash."""

    entries: tuple[Entry, ...]
    withheld: tuple[dict[str, Any], ...]
    dvc: dict[str, Any]
    includes_tables: bool


def kit_licence(root: Path = REPO_ROOT) -> str:
    """The SPDX licence of the kit itself (``project.license`` in pyproject.toml)."""
    for candidate in (Path(root) / "pyproject.toml", REPO_ROOT / "pyproject.toml"):
        if candidate.is_file():
            lic = tomllib.loads(candidate.read_text()).get("project", {}).get("license")
            if isinstance(lic, str) and lic:
                return lic
    raise ConfigError("no_licence", "pyproject.toml declares no project.license")


def _git(root: Path, *args: str) -> str | None:
    """Output of ``git -C root args`` or None when git or the work tree is unavailable."""
    try:
        res = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        return None
    return res.stdout if res.returncode == 0 else None


def tracked_files(root: Path) -> list[str] | None:
    """Paths git tracks under ``root`` (``git ls-files``); None outside a git work tree."""
    out = _git(root, "ls-files", "-z")
    if out is None:
        return None
    return sorted(p for p in out.split("\0") if p)


def head_commit(root: Path) -> str | None:
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() if out and len(out.strip()) == 40 else None


def looks_secret(path: str) -> bool:
    """True when the file name matches :data:`SECRET_PATTERNS` (``.env``, ``*.pem``, ...)."""
    name = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(name, pat) for pat in SECRET_PATTERNS)


def _rel(path: Path, root: Path) -> str | None:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return None


def _entry(root: Path, rel: str, kind: str, source: str, licence: str) -> Entry:
    """One released file; a symbolic link (or a path through one) is refused, never followed."""
    p = root / rel
    linked = [q for q in (p, *p.parents) if q.is_symlink() and root in q.parents]
    if linked or _rel(p, root) is None:
        raise InputError(
            "symlink_in_release",
            f"is (or lies under) a symbolic link to {p.resolve()}; a release holds regular files "
            "only: replace the link by the file it points to, or remove it",
            where=Location(rel),
        )
    return Entry(rel, file_sha256(p), p.stat().st_size, kind, source, licence)


def collect(
    root: Path = REPO_ROOT,
    sources: tuple[Source, ...] | None = None,
    exclude: tuple[str, ...] = (),
    strict: bool = True,
) -> Collection:
    """Hash every released file under ``root``.

    ``strict`` (build): a tracked file missing from the work tree, an unregistered file in
    ``data/raw``, a raw file off its sha256 pin, or a ``data/raw`` folder whose DVC hash differs
    from ``data.dvc`` raises. Non-strict (verify): those become differences reported by
    :func:`verify`, so collection records what is there and skips what is not.
    """
    root = Path(root)
    sources = sources if sources is not None else load_sources()
    licence = kit_licence(root)
    skip = set(exclude)
    entries: list[Entry] = []

    tracked = tracked_files(root)
    if tracked is None:
        raise ConfigError(
            "not_a_git_tree",
            f"{root} is not a git work tree (the released repository files are `git ls-files`)",
        )
    secret = [p for p in tracked if looks_secret(p)]
    if secret:
        raise ConfigError(
            "secret_in_release",
            f"tracked file(s) that look like credentials would be released: {', '.join(secret)}; "
            "remove them from git (git rm --cached) before building a release",
        )
    missing = [p for p in tracked if p not in skip and not (root / p).is_file()]
    if missing and strict:
        raise InputError(
            "tracked_file_missing",
            f"{len(missing)} tracked file(s) missing from the work tree: {', '.join(missing[:10])}",
            where=Location(str(root)),
        )
    for rel in tracked:
        if rel in skip or not (root / rel).is_file():
            continue
        if rel.startswith((f"{RAW_DIR}/", *(f"{t}/" for t in TABLES_DIRS))):
            continue  # released below, with the data's source and licence
        entries.append(_entry(root, rel, "repo", KIT_SOURCE, licence))

    raw = root / RAW_DIR
    patterns = dvc_hash.read_dvcignore(root / ".dvcignore")
    by_path = {f.path: (s, f) for s in sources for f in s.files}
    forbidden = set(check_exportable([s.name for s in sources], sources))
    withheld: dict[str, list[str]] = {}
    for rel in dvc_hash.list_files(raw, patterns) if raw.is_dir() else []:
        full = f"{RAW_DIR}/{rel}"
        if rel not in by_path:
            if strict:
                raise InputError(
                    "unregistered_file",
                    "not declared in the registry source list; remove it or register it in "
                    "kit/registry/sources.yaml",
                    where=Location(full),
                )
            entries.append(_entry(root, full, "raw", UNREGISTERED, "NOASSERTION"))
            continue
        src, sf = by_path[rel]
        if src.name in forbidden:
            withheld.setdefault(src.name, []).append(full)
            continue
        e = _entry(root, full, "raw", src.name, src.licence)
        if strict and e.sha256 != sf.sha256:
            raise IntegrityError(
                "sha256_mismatch",
                f"{full}: sha256 {e.sha256} differs from the pinned {sf.sha256} "
                "(run `kit registry fetch`)",
            )
        entries.append(e)
    if strict and not raw.is_dir():
        raise InputError(
            "missing_folder",
            "no registry data (run `kit registry fetch`)",
            where=Location(str(raw)),
        )
    dvc = _dvc_check(root, patterns, strict)

    built = [t for t in TABLES_DIRS if (root / t).is_dir()]
    includes_tables = bool(built)
    for folder in built:
        for rel in dvc_hash.list_files(root / folder, patterns):
            full = f"{folder}/{rel}"
            if full not in skip:
                entries.append(_entry(root, full, "table", DERIVED_SOURCE, licence))

    by_name = {s.name: s for s in sources}
    held = tuple(
        {"source": n, "licence": by_name[n].licence, "paths": sorted(paths)}
        for n, paths in sorted(withheld.items())
    )
    return Collection(tuple(sorted(entries, key=lambda e: e.path)), held, dvc, includes_tables)


def _dvc_check(root: Path, patterns: tuple[str, ...], strict: bool) -> dict[str, Any]:
    """Recompute the ``data/raw`` DVC hash; in strict mode it must equal ``data.dvc``'s."""
    raw = root / RAW_DIR
    got = dvc_hash.dir_hash(raw, patterns) if raw.is_dir() else dvc_hash.DirHash("", 0, 0)
    if strict:
        want = dvc_hash.read_dvc_out(root / DVC_FILE, RAW_DIR)
        if got.md5 != want.md5:
            raise IntegrityError(
                "dvc_mismatch",
                f"{root / DVC_FILE}: records {RAW_DIR} as md5 {want.md5} ({want.nfiles} files, "
                f"{want.size} bytes) but the folder hashes to {got.md5} ({got.nfiles} files, "
                f"{got.size} bytes); run `kit registry fetch` or `dvc add {RAW_DIR}`",
            )
    return {"file": DVC_FILE, "path": RAW_DIR, **asdict(got)}


def build(
    root: Path = REPO_ROOT,
    sources: tuple[Source, ...] | None = None,
    exclude: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The manifest of the release under ``root`` (validated against its JSON Schema)."""
    col = collect(root, sources, exclude, strict=True)
    manifest = {
        "format": FORMAT,
        "kit_version": __version__,
        "commit": head_commit(root),
        "dvc": col.dvc,
        "includes_tables": col.includes_tables,
        "totals": {"files": len(col.entries), "bytes": sum(e.bytes for e in col.entries)},
        "withheld": list(col.withheld),
        "files": [asdict(e) for e in col.entries],
    }
    return validate_json(manifest, "manifest", "release manifest")


def write(path: Path, manifest: dict[str, Any]) -> Path:
    """Write the manifest atomically (sorted keys, stable order: byte-identical rebuilds)."""
    validate_json(manifest, "manifest", str(path))
    return atomic.write_text(path, render(manifest))


def render(manifest: dict[str, Any]) -> str:
    """The one byte form of a manifest file (read refuses any other)."""
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def read(path: Path) -> dict[str, Any]:
    """Read and validate a manifest; InputError (exit 2) when unreadable or invalid."""
    doc = boundary.read_json(path)  # UTF-8, finite numbers, bounded depth; errors name the file
    validate_json(doc, "manifest", str(path))
    if Path(path).read_bytes() != render(doc).encode("utf-8"):
        raise IntegrityError(
            "tampered",
            f"{path}: bytes differ from the manifest's canonical form (`kit release build` writes it; "
            "was it edited?)",
        )
    paths = [f["path"] for f in doc["files"]]
    if len(set(paths)) != len(paths):
        raise InputError("bad_manifest", "a path is listed twice", where=Location(str(path)))
    return doc


def compare(manifest: dict[str, Any], current: list[Entry]) -> list[Difference]:
    """Every file that changed, is missing, or is extra. Pure."""
    listed = {f["path"]: f for f in manifest["files"]}
    now = {e.path: e for e in current}
    out: list[Difference] = []
    for path in sorted(set(listed) | set(now)):
        if path not in now:
            out.append(Difference("missing", path, "listed in the manifest, not in the tree"))
        elif path not in listed:
            out.append(Difference("extra", path, "in the tree, not in the manifest"))
        else:
            want, got = listed[path], now[path]
            if want["sha256"] != got.sha256 or want["bytes"] != got.bytes:
                out.append(
                    Difference(
                        "changed",
                        path,
                        f"sha256 {got.sha256[:12]}… ({got.bytes} bytes), manifest "
                        f"{want['sha256'][:12]}… ({want['bytes']} bytes)",
                    )
                )
            for name in ("kind", "source", "licence"):
                if want[name] != getattr(got, name):
                    out.append(
                        Difference(
                            "field",
                            path,
                            f"{name} {getattr(got, name)!r}, manifest records {want[name]!r}",
                        )
                    )
    return out


def compare_header(manifest: dict[str, Any], col: Collection, commit_ok: bool) -> list[Difference]:
    """Every manifest field outside ``files``: format, kit_version, commit, totals, withheld,
    dvc, includes_tables, each against what the tree (and the running kit) gives. Pure."""
    out: list[Difference] = []

    def differs(name: str, want: Any, got: Any) -> None:
        if want != got:
            out.append(Difference("field", name, f"{got!r}, manifest records {want!r}"))

    differs("format", manifest["format"], FORMAT)
    differs("kit_version", manifest["kit_version"], __version__)
    if not commit_ok:
        out.append(
            Difference(
                "field",
                "commit",
                f"manifest records {manifest['commit']!r}, which is not HEAD or an ancestor of it",
            )
        )
    files = manifest["files"]
    differs(
        "totals",
        manifest["totals"],
        {"files": len(files), "bytes": sum(int(f["bytes"]) for f in files)},
    )
    differs("withheld", manifest["withheld"], list(col.withheld))
    differs("includes_tables", manifest["includes_tables"], col.includes_tables)
    differs("dvc", manifest["dvc"], col.dvc)
    return out


def _commit_ok(root: Path, recorded: str | None) -> bool:
    """The recorded commit is HEAD or one of its ancestors (a manifest committed after it was
    built moves HEAD on); None only when the tree has no commit."""
    if recorded is None:
        return head_commit(root) is None
    return _git(root, "merge-base", "--is-ancestor", recorded, "HEAD") is not None


def verify(
    manifest: dict[str, Any],
    root: Path = REPO_ROOT,
    sources: tuple[Source, ...] | None = None,
    exclude: tuple[str, ...] = (),
) -> tuple[int, list[Difference]]:
    """Recompute the release under ``root``; return (files checked, differences)."""
    root = Path(root)
    sources = sources if sources is not None else load_sources()
    col = collect(root, sources, exclude, strict=False)
    withheld = {p for w in manifest["withheld"] for p in w["paths"]}
    current = [e for e in col.entries if e.path not in withheld]
    if not manifest["includes_tables"]:
        current = [e for e in current if e.kind != "table"]
    diffs = compare(manifest, current)
    diffs += compare_header(manifest, col, _commit_ok(root, manifest["commit"]))
    want = dvc_hash.read_dvc_out(root / DVC_FILE, RAW_DIR)
    if col.dvc["md5"] != want.md5 or manifest["dvc"]["md5"] != want.md5:
        diffs.append(
            Difference(
                "dvc",
                DVC_FILE,
                f"{RAW_DIR} hashes to {col.dvc['md5'] or '(missing)'}; {DVC_FILE} records "
                f"{want.md5}; manifest records {manifest['dvc']['md5']}",
            )
        )
    forbidden = set(check_exportable([s.name for s in sources], sources))
    for f in manifest["files"]:
        if f["kind"] == "raw" and f["source"] in forbidden:
            diffs.append(
                Difference("licence", f["path"], f"source {f['source']} may not be redistributed")
            )
    return len(manifest["files"]), diffs


def exclusions(root: Path, manifest_path: Path) -> tuple[str, ...]:
    """The manifest never lists itself."""
    rel = _rel(manifest_path, root)
    return (rel,) if rel is not None else ()
