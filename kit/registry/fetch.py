"""Fetch registered files into ``data/raw/`` -- every byte checked against its pinned sha256.

Resolution order per file: already in place (sha256 matches) -> the DVC cache (content-addressed
by md5) -> a mirror folder -> the upstream URL. All files are staged first; only when every file
resolved and matched are they moved into place, so a failure leaves ``data/raw/`` unchanged.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kit.core.errors import InputError, IntegrityError, Location
from kit.core.hashing import file_sha256
from kit.registry.sources import REPO_ROOT, SourceFile, all_files

DEFAULT_DEST = REPO_ROOT / "data" / "raw"
DEFAULT_DVC_CACHE = REPO_ROOT / ".dvc" / "cache" / "files" / "md5"
CHUNK = 1 << 20


@dataclass(frozen=True)
class FetchRecord:
    path: str
    origin: str  # present | dvc-cache | mirror | upstream
    sha256: str
    bytes: int


sha256_of = file_sha256


def default_mirror() -> Path | None:
    """``$KIT_MIRROR`` if set, else ``../shared/registry`` beside the repository when it exists."""
    env = os.environ.get("KIT_MIRROR")
    if env:
        return Path(env)
    candidate = REPO_ROOT.parent / "shared" / "registry"
    return candidate if candidate.is_dir() else None


def _dvc_cache_path(cache: Path, md5: str) -> Path:
    return cache / md5[:2] / md5[2:]


def _download(url: str, target: Path, timeout: float) -> None:
    req = urllib.request.Request(url, headers={"User-Agent": "litaudit-kit"})
    with urllib.request.urlopen(req, timeout=timeout) as resp, open(target, "wb") as out:
        shutil.copyfileobj(resp, out, CHUNK)


def _check(candidate: Path, f: SourceFile, origin: str) -> None:
    got = sha256_of(candidate)
    if got != f.sha256:
        raise IntegrityError(
            "sha256_mismatch",
            f"{f.path} from {origin} ({candidate}): sha256 {got} does not match the pinned "
            f"{f.sha256}; nothing was written to data/raw",
        )


def fetch(
    dest: Path = DEFAULT_DEST,
    mirror: Path | None = None,
    dvc_cache: Path | None = DEFAULT_DVC_CACHE,
    files: Iterable[SourceFile] | None = None,
    allow_network: bool = True,
    timeout: float = 20.0,
    on_file: Callable[[FetchRecord], None] | None = None,
) -> list[FetchRecord]:
    """Resolve, verify and install every registered file (or ``files``) under ``dest``.

    Raises :class:`IntegrityError` on a sha256 mismatch and :class:`InputError` when a file
    cannot be found anywhere; in both cases ``dest`` is left exactly as it was.
    """
    wanted = list(files) if files is not None else all_files()
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".fetch-", dir=dest.parent))
    records: list[FetchRecord] = []
    staged: list[tuple[SourceFile, Path]] = []
    try:
        for f in wanted:
            final = dest / f.path
            if final.is_file() and sha256_of(final) == f.sha256:
                rec = FetchRecord(f.path, "present", f.sha256, f.bytes)
            else:
                tmp = staging / f.path
                tmp.parent.mkdir(parents=True, exist_ok=True)
                origin = _resolve(f, tmp, mirror, dvc_cache, allow_network, timeout)
                staged.append((f, tmp))
                rec = FetchRecord(f.path, origin, f.sha256, f.bytes)
            records.append(rec)
            if on_file:
                on_file(rec)
        for f, tmp in staged:
            final = dest / f.path
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return records


def _resolve(
    f: SourceFile,
    tmp: Path,
    mirror: Path | None,
    dvc_cache: Path | None,
    allow_network: bool,
    timeout: float,
) -> str:
    tried: list[str] = []
    if dvc_cache is not None:
        cached = _dvc_cache_path(dvc_cache, f.md5)
        if cached.is_file() and sha256_of(cached) == f.sha256:
            shutil.copyfile(cached, tmp)
            return "dvc-cache"
        tried.append(f"DVC cache ({dvc_cache})")
    if mirror is not None:
        candidate = Path(mirror) / f.path
        if candidate.is_file():
            _check(candidate, f, "mirror")
            shutil.copyfile(candidate, tmp)
            _check(tmp, f, "mirror copy")
            return "mirror"
        tried.append(f"mirror ({candidate})")
    if f.url and allow_network:
        try:
            _download(f.url, tmp, timeout)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            tried.append(f"upstream ({f.url}: {exc})")
        else:
            _check(tmp, f, "upstream")
            return "upstream"
    elif f.url:
        tried.append("upstream (network disabled)")
    else:
        tried.append("upstream (none: transcribed from the paper)")
    raise InputError(
        "source_not_found",
        f"{f.path}: not found; tried " + "; ".join(tried) + ". Pass --mirror DIR or set KIT_MIRROR",
        where=Location(f.path),
    )


def verify_present(dest: Path = DEFAULT_DEST) -> list[FetchRecord]:
    """Check every registered file is in ``dest`` with its pinned sha256 (no fetching)."""
    out = []
    for f in all_files():
        p = Path(dest) / f.path
        if not p.is_file():
            raise InputError(
                "not_fetched",
                f"{f.path} is missing; run `kit registry fetch`",
                where=Location(str(p)),
            )
        _check(p, f, "data/raw")
        out.append(FetchRecord(f.path, "present", f.sha256, f.bytes))
    return out


def raw_path(path: str, dest: Path = DEFAULT_DEST) -> Path:
    """The local path of registered file ``path``; a clear error if it was never fetched."""
    p = Path(dest) / path
    if not p.is_file():
        raise InputError(
            "not_fetched",
            f"registered file '{path}' is not in {dest}; run `kit registry fetch` first",
            where=Location(str(p)),
        )
    return p
