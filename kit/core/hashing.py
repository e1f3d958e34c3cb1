"""File digests: one streaming implementation for every place the kit hashes a file."""

from __future__ import annotations

import hashlib
import os

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
