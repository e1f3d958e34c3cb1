"""Receipts: every stage artifact sealed with the sha256 of its canonical JSON and its parent's.

``content_hash = sha256(canonical_json(artifact without content_hash))`` where canonical JSON has
sorted keys, no insignificant white space and UTF-8 text. Each receipt names its parent's hash
(null for a root), so a chain proves that every output descends from the inputs it names.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from kit import atomic
from kit.errors import IntegrityError, Location
from kit.hashing import file_sha256
from kit.schema import validate_json

__all__ = ["canonical_json", "content_hash", "file_sha256", "seal", "verify_chain", "write_receipt"]


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


def write_receipt(path: Path, artifact: dict[str, Any]) -> Path:
    validate_json(artifact, "receipt", str(path))
    return atomic.write_text(path, json.dumps(artifact, indent=2, sort_keys=True) + "\n")


def verify_chain(folder: Path) -> list[dict[str, Any]]:
    """Check every ``*.receipt.json`` under ``folder``: its own hash, and that its parent exists.

    Returns the receipts in parent-before-child order; raises :class:`IntegrityError` naming the
    first broken link (tampered content, dangling parent reference).
    """
    arts: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path in sorted(Path(folder).rglob("*.receipt.json")):
        try:
            art = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise IntegrityError("bad_receipt", f"{path}: not JSON ({exc})") from None
        validate_json(art, "receipt", str(path))
        if content_hash(art) != art["content_hash"]:
            raise IntegrityError(
                "tampered",
                f"{Location(str(path))}: content does not match its content_hash "
                f"{art['content_hash'][:12]}… (recomputed {content_hash(art)[:12]}…)",
            )
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
