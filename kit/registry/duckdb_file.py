"""A DuckDB database file made byte-reproducible.

DuckDB writes two things into a database file that differ between two builds of the same
tables: the catalog name, taken from the file's name (so a file built under a temporary name
and renamed into place carries the temporary name), and a random 16-byte database identifier
in the main header (block 0), covered by that block's checksum. The catalog builder
(:func:`kit.registry.catalog.build_catalog`) builds under the final file name in a private
folder, single-threaded; :func:`fix_identifier` then replaces the random
identifier by one derived from the rest of the file and recomputes the header checksum, so
the same tables give the same bytes (``tests/registry/test_catalog.py`` builds twice and
compares). The identifier only pairs a database with its write-ahead log; a catalog is
checkpointed and closed before it is fixed, so it has no log to pair.

File layout used here (DuckDB storage format of the pinned duckdb 2.x, checked by the test):
the main header is the first 4,096 bytes; bytes 0-7 hold its checksum, a little-endian
uint64 over bytes 8-4095 read as uint64 words w_i: ``5381 XOR_i (w_i * 0xbf58476d1ce4e5b9)``
(mod 2^64); the identifier is bytes 124-139. A file whose stored checksum does not match
that formula is left untouched and reported, so a future storage format fails loudly rather
than being corrupted.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import numpy as np

from kit.core.errors import ConfigError

HEADER_BYTES = 4096
IDENTIFIER = slice(124, 140)
_MULTIPLIER = np.uint64(0xBF58476D1CE4E5B9)
_SEED = np.uint64(5381)


def header_checksum(block: bytes) -> int:
    """DuckDB's block checksum of ``block`` (a multiple of 8 bytes)."""
    words = np.frombuffer(block, dtype="<u8")
    with np.errstate(over="ignore"):
        mixed = words * _MULTIPLIER
    return int(np.bitwise_xor.reduce(mixed, initial=_SEED))


def fix_identifier(path: Path) -> str:
    """Replace the file's random database identifier by the first 16 bytes of the sha256 of
    everything after the main header; recompute the header checksum. Returns the file's
    sha256 afterwards. Raises ConfigError if the header is not the layout described above."""
    data = bytearray(Path(path).read_bytes())
    if len(data) < HEADER_BYTES or data[8:12] != b"DUCK":
        raise ConfigError("duckdb_layout", f"{path}: not a DuckDB file (no DUCK magic at byte 8)")
    stored = struct.unpack_from("<Q", data, 0)[0]
    if stored != header_checksum(bytes(data[8:HEADER_BYTES])):
        raise ConfigError(
            "duckdb_layout",
            f"{path}: the main header's checksum is not the one this kit knows; the duckdb "
            "storage format changed, so the catalog cannot be made byte-reproducible",
        )
    data[IDENTIFIER] = hashlib.sha256(data[HEADER_BYTES:]).digest()[:16]
    struct.pack_into("<Q", data, 0, header_checksum(bytes(data[8:HEADER_BYTES])))
    Path(path).write_bytes(bytes(data))
    return hashlib.sha256(data).hexdigest()
