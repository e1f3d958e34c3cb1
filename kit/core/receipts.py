"""Receipts: every stage artifact sealed with the sha256 of its canonical JSON and its parent's.

``content_hash = sha256(canonical_json(artifact without content_hash))`` where canonical JSON has
sorted keys, no insignificant white space and UTF-8 text. Each receipt names its parent's hash
(null for a root), so a chain proves that every output descends from the inputs it names.

A receipt seals output files in ``body.outputs`` (``{relative posix path: sha256}``; the legacy
``body.tables`` ``{table: sha256}`` seals ``<table>.csv``); paths are relative to the receipt's
*base*: its own folder, or the folder above when the receipt sits in a ``receipts/`` folder.
``body.untracked`` lists paths (a trailing ``/`` for a whole folder) deliberately left unsealed,
such as a cache. :func:`verify_outputs` checks a folder completely: the chain, every sealed file's
bytes, that no sealed path leaves the folder, and that every file in it is sealed or untracked.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from kit.core import atomic, boundary
from kit.core.errors import InputError, IntegrityError, Location
from kit.core.hashing import file_sha256
from kit.core.schema import validate_json

__all__ = [
    "canonical_json",
    "content_hash",
    "file_sha256",
    "seal",
    "seal_file",
    "seal_outputs",
    "verify_chain",
    "verify_file",
    "verify_outputs",
    "write_receipt",
]

SUFFIX = ".receipt.json"
RECEIPTS_DIR = "receipts"


def canonical_json(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def content_hash(artifact: dict[str, Any]) -> str:
    body = {k: v for k, v in artifact.items() if k != "content_hash"}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def seal(kind: str, name: str, body: dict[str, Any], parent: str | None) -> dict[str, Any]:
    """A sealed artifact: ``{kind, name, parent, body, content_hash}``."""
    art: dict[str, Any] = {"kind": kind, "name": name, "parent": parent, "body": body}
    art["content_hash"] = content_hash(art)
    return art


def render(artifact: dict[str, Any]) -> str:
    """The one byte form of a receipt file (verify refuses any other: no byte goes unchecked)."""
    return json.dumps(artifact, indent=2, sort_keys=True) + "\n"


def write_receipt(path: Path, artifact: dict[str, Any]) -> Path:
    validate_json(artifact, "receipt", str(path))
    return atomic.write_text(path, render(artifact))


def read_receipt(path: Path) -> dict[str, Any]:
    """One receipt, checked on its own: readable, valid, its content_hash and canonical bytes.

    Raises :class:`IntegrityError` naming the file otherwise.
    """
    try:
        art = boundary.read_json(path)
    except InputError as exc:
        raise IntegrityError("bad_receipt", f"not a readable receipt: {exc.message}") from None
    validate_json(art, "receipt", str(path))
    if content_hash(art) != art["content_hash"]:
        raise IntegrityError(
            "tampered",
            f"{Location(str(path))}: content does not match its content_hash "
            f"{art['content_hash'][:12]}… (recomputed {content_hash(art)[:12]}…)",
        )
    if path.read_bytes() != render(art).encode("utf-8"):
        raise IntegrityError(
            "tampered",
            f"{Location(str(path))}: bytes differ from the receipt's canonical form "
            "(receipts are written by the kit only; was it edited?)",
        )
    return art


def verify_chain(folder: Path) -> list[dict[str, Any]]:
    """Check every ``*.receipt.json`` under ``folder``: its own hash, and that its parent exists.

    Returns the receipts in parent-before-child order; raises :class:`IntegrityError` naming the
    first broken link (tampered content, dangling parent reference).
    """
    arts: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path in sorted(Path(folder).rglob("*.receipt.json")):
        art = read_receipt(path)
        arts[art["content_hash"]] = (path, art)
    for path, art in sorted(arts.values(), key=lambda pa: str(pa[0])):
        parent = art["parent"]
        if parent is not None and parent not in arts:
            raise IntegrityError(
                "dangling_parent",
                f"{path}: parent {parent[:12]}… is not among the receipts in {folder}",
            )
    ordered: list[dict[str, Any]] = []
    done: set[str] = set()

    def visit(h: str) -> None:
        if h in done:
            return
        parent = arts[h][1]["parent"]
        if parent is not None:
            visit(parent)
        done.add(h)
        ordered.append(arts[h][1])

    for h in sorted(arts):
        visit(h)
    return ordered


# ------------------------------------------------------------------- sealed output folders


def receipt_base(path: Path) -> Path:
    """The folder a receipt's sealed paths are relative to (see the module docstring)."""
    folder = Path(path).parent
    return folder.parent if folder.name == RECEIPTS_DIR else folder


def seal_outputs(
    base: Path,
    kind: str,
    name: str,
    parent: str | None,
    files: Iterable[str],
    body: dict[str, Any] | None = None,
    untracked: Iterable[str] = (),
) -> dict[str, Any]:
    """Seal ``files`` (posix paths relative to ``base``) in ``base/receipts/<name>.receipt.json``.

    ``body`` adds fields (inputs, parameters); returns the sealed artifact.
    """
    outputs = {rel: file_sha256(Path(base) / rel) for rel in sorted(set(files))}
    full = {**(body or {}), "outputs": outputs}
    if untracked:
        full["untracked"] = sorted(set(untracked))
    art = seal(kind, name, full, parent)
    write_receipt(Path(base) / RECEIPTS_DIR / f"{name}{SUFFIX}", art)
    return art


def sidecar(path: Path) -> Path:
    """The receipt of a single-file output: ``FILE.receipt.json`` beside ``FILE``."""
    path = Path(path)
    return path.with_name(path.name + SUFFIX)


def seal_file(
    path: Path, kind: str, body: dict[str, Any] | None = None, companions: Iterable[Path] = ()
) -> dict[str, Any]:
    """Seal a single-file output (and ``companions`` written beside it, e.g. its ``.json``
    summary) in the sidecar ``FILE.receipt.json``; returns the sealed artifact."""
    path = Path(path)
    files = [path, *(Path(c) for c in companions)]
    outputs = {f.name: file_sha256(f) for f in files if f.parent == path.parent}
    art = seal(kind, path.name, {**(body or {}), "outputs": outputs}, None)
    write_receipt(sidecar(path), art)
    return art


def verify_file(path: Path) -> OutputCheck:
    """Verify one single-file output against its sidecar receipt (:func:`sidecar`).

    Raises (cannot verify, exit 2): no such file, no sidecar, a broken receipt, a sealed path
    leaving the file's folder or a receipt that does not seal ``path``. Returns the findings
    (exit 1): ``path`` or a companion changed or missing.
    """
    path = Path(path)
    if path.name.endswith(SUFFIX):
        path = path.with_name(path.name[: -len(SUFFIX)])
    receipt = sidecar(path)
    if not receipt.is_file():
        what = "no such file to verify" if not path.exists() else f"no receipt {receipt.name}"
        raise InputError("no_receipts", what, where=Location(str(path)))
    art = read_receipt(receipt)
    sealed = sealed_paths(art)
    if path.name not in sealed:
        raise IntegrityError("not_sealed", f"{receipt}: the receipt does not seal {path.name!r}")
    findings = []
    for rel, sha in sorted(sealed.items()):
        target = _inside(path.parent, path.parent, rel, receipt)
        finding = _compare(target, sha, rel, receipt)
        if finding is not None:
            findings.append(finding)
    return OutputCheck(1, len(sealed), 0, tuple(findings))


def _compare(path: Path, sha: str, shown: str, receipt: Path) -> Finding | None:
    """A finding when ``path`` is missing or its sha256 is not ``sha``."""
    if path.is_symlink() or not path.is_file():
        return Finding("missing", shown, f"sealed by {receipt.name}")
    got = file_sha256(path)
    if got != sha:
        return Finding(
            "changed", shown, f"sha256 {got[:12]}… differs from {receipt.name} ({sha[:12]}…)"
        )
    return None


def sealed_paths(art: dict[str, Any]) -> dict[str, str]:
    """``{relative path: sha256}`` of every file a receipt seals (outputs and legacy tables)."""
    body = art["body"]
    out = {f"{t}.csv": sha for t, sha in (body.get("tables") or {}).items()}
    out.update(body.get("outputs") or {})
    return out


@dataclass(frozen=True)
class Finding:
    """One way a sealed folder differs from its receipts."""

    kind: str  # changed | missing | unsealed
    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind:<8} {self.path}  {self.detail}"


@dataclass(frozen=True)
class OutputCheck:
    """What :func:`verify_outputs` found: counts and every difference (none: all verified)."""

    receipts: int
    sealed: int
    untracked: int
    findings: tuple[Finding, ...]


def _inside(folder: Path, base: Path, rel: str, receipt: Path) -> Path:
    """``base/rel`` when it stays inside ``folder``; IntegrityError (exit 2) otherwise."""
    pure = PurePosixPath(rel)
    if not isinstance(rel, str) or pure.is_absolute() or ".." in pure.parts or "\\" in rel:
        raise IntegrityError(
            "path_escapes",
            f"{receipt}: sealed path {rel!r} is not a plain relative path inside {folder}",
        )
    path = base / pure
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        raise IntegrityError(
            "path_escapes", f"{receipt}: sealed path {rel!r} resolves outside {folder}"
        ) from None
    return path


def verify_outputs(folder: Path) -> OutputCheck:
    """Verify ``folder`` completely against its receipts.

    Raises (cannot verify, exit 2): no such folder, no receipts, a broken chain, a sealed path
    escaping the folder. Returns the findings (verified and different, exit 1): a sealed file
    changed or missing, a file no receipt seals and none lists as untracked.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("missing_folder", "no such folder to verify", where=Location(str(folder)))
    paths = {str(p): p for p in folder.rglob(f"*{SUFFIX}")}
    if not paths:
        raise InputError(
            "no_receipts",
            f"no *{SUFFIX} in the folder: nothing to verify (was it written by the kit?)",
            where=Location(str(folder)),
        )
    chain = verify_chain(folder)
    by_hash = {}
    for p in paths.values():
        by_hash[boundary.read_json(p)["content_hash"]] = p
    findings: list[Finding] = []
    covered: set[Path] = set()
    untracked: list[Path] = []
    for art in chain:
        receipt = by_hash[art["content_hash"]]
        base = receipt_base(receipt)
        for rel in art["body"].get("untracked") or []:
            untracked.append(_inside(folder, base, str(rel).rstrip("/"), receipt))
        for rel, sha in sorted(sealed_paths(art).items()):
            path = _inside(folder, base, rel, receipt)
            shown = path.relative_to(folder).as_posix()
            covered.add(path)
            finding = _compare(path, sha, shown, receipt)
            if finding is not None:
                findings.append(finding)
    n_untracked = 0
    for path in sorted(folder.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        if path.name.endswith(SUFFIX) and not path.is_symlink():
            continue
        if path in covered:
            continue
        if any(path == u or u in path.parents for u in untracked):
            n_untracked += 1
            continue
        findings.append(
            Finding(
                "unsealed",
                path.relative_to(folder).as_posix(),
                "no receipt seals this file (a missing or deleted receipt?)",
            )
        )
    return OutputCheck(len(chain), len(covered), n_untracked, tuple(findings))
