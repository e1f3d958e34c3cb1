"""Digests: one streaming implementation for every place the kit hashes a file; the sha256 of
canonical JSON (a store partition's mode)."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

CHUNK = 1 << 20


def file_digest(path: str | os.PathLike[str], algorithm: str = "sha256") -> str:
    """Hex digest of a file's bytes, read in 1 MiB chunks (sha256 pins, DVC's md5)."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    return file_digest(path, "sha256")


def is_sha256(text: str) -> bool:
    """Whether ``text`` is a sha256 in hex: 64 lower-case hex digits."""
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def json_sha256(data: Any) -> str:
    """sha256 (hex) of ``data``'s canonical JSON (sorted keys, no spaces, ASCII)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
