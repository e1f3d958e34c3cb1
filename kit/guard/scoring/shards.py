"""Append-only parquet shards, the storage both stores share (pure I/O helpers).

A store partition is a folder of shards named ``<prefix>-<time ns>-<pid>-<random>.parquet``,
each written once to a temp name and renamed into place (:func:`kit.core.atomic.staged_file`);
readers take the union in name order, so the oldest value of a repeated key wins. Used by the
score store (:mod:`kit.guard.scoring.score_store`, prefix ``shard``) and the embedding store
(:mod:`kit.guard.scoring.embedding_store`, prefix ``embeddings``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pandas as pd

from kit.core import atomic
from kit.core.errors import InputError, Location

RELIST = 5  # how often a reader re-lists shards that a concurrent compaction removed
T = TypeVar("T")


def shard_path(folder: Path, prefix: str, stamp: int | None = None) -> Path:
    """A new shard's path: the write time (or ``stamp``) first, so name order is time order."""
    t = time.time_ns() if stamp is None else stamp
    return folder / f"{prefix}-{t:020d}-{os.getpid()}-{secrets.token_hex(4)}.parquet"


def shard_stamp(path: Path) -> int:
    """The time stamp in a shard's name (a compaction's merged shard keeps the oldest one)."""
    return int(path.name.split("-")[1])


def open_partition(folder: Path, about: dict[str, object]) -> None:
    """Create a partition folder with its ``mode.json`` (``about``: what keys it, for people),
    written once, atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    mode_file = folder / "mode.json"
    if not mode_file.is_file():
        atomic.write_text(mode_file, json.dumps(about, indent=2, sort_keys=True) + "\n")


def write_frame(path: Path, frame: pd.DataFrame) -> Path:
    """Write ``frame`` to ``path`` atomically (temp name, then rename), zstd-compressed."""
    with atomic.staged_file(path) as tmp:
        frame.to_parquet(tmp, index=False, compression="zstd")
    return path


def read_frame(path: Path, schema: str, what: str, recover: str, row_base: int = 2) -> pd.DataFrame:
    """A shard's table, validated against ``schemas/<schema>.yaml``; a file that is not a
    readable parquet is an InputError naming it, ``what`` it should be and how to ``recover``.
    A shard that vanished (a concurrent compaction) raises FileNotFoundError for the caller."""
    from kit.core.schema import validate_frame

    try:
        frame = pd.read_parquet(path)
    except FileNotFoundError:
        raise
    except Exception as exc:  # a truncated or foreign file: say which, and how to recover
        raise InputError(
            "bad_score_store",
            f"not a readable {what} ({type(exc).__name__}: {exc}); {recover}",
            where=Location(str(path)),
        ) from None
    return validate_frame(frame, schema, str(path), row_base=row_base)


def union(folder: Path, glob: str, read: Callable[[list[Path]], T]) -> T:
    """``read`` of the partition's shards in name order, listed again (up to :data:`RELIST`
    times) when one is compacted away between listing and reading."""
    for _ in range(RELIST):
        try:
            return read(sorted(folder.glob(glob)))
        except FileNotFoundError:
            continue
    raise InputError(
        "bad_score_store",
        f"shards kept disappearing while reading ({RELIST} tries); is a compaction looping?",
        where=Location(str(folder)),
    )


def compact(folder: Path, glob: str, merge: Callable[[list[Path]], object]) -> int:
    """Merge a partition's shards into one; returns how many were merged.

    ``merge(paths)`` reads the shards (in name order) and writes the merged one under the
    oldest shard's time stamp (:func:`shard_stamp`), so it keeps its place in the first-wins
    order; then exactly the shards that were read are deleted. A writer adding a shard
    meanwhile loses nothing; two compactions at once leave duplicate entries, not gaps."""
    paths = sorted(Path(folder).glob(glob))
    if len(paths) < 2:
        return 0
    try:
        merge(paths)
    except FileNotFoundError:  # another compaction got there first
        return 0
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return len(paths)
