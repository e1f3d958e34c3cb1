"""A bi-encoder's embeddings kept across runs, beside the score store (issue 38, "less work per
pair").

The score store (:mod:`kit.guard.scoring.score_store`) keeps one score per (claim, passage) pair,
so a new claim citing a passage the store has seen is a miss, scored from scratch. Under the
default card's ``two_signal`` rule that costs the cross-encoder's pass over each (claim,
window) -- which only that pair can answer -- and the relatedness bi-encoder's embedding of the
claim *and of every window of the passage*. The windows' embeddings do not depend on the claim:
this store keeps them (and the claims'), so a passage cited by many claims, in this run or a
later one, is embedded once per store.

Keyed by

* the bi-encoder's ONNX sha256 (fp32 and int8 are different files, so different keys), and
* the embedding mode: the device and the tokenizer's fingerprint (:func:`embedding_mode`), and
* the sha256 of the text's UTF-8 bytes.

Layout, inside the score store's root (``--cache-dir``, default ``data/scores``)::

    <root>/<bi-encoder ONNX sha256>/<mode sha256>/mode.json
    <root>/<bi-encoder ONNX sha256>/<mode sha256>/embeddings-*.parquet   append-only shards

Shards (schemas/embedding_store_shard.yaml) are written to a temp name and renamed into place;
a repeated key keeps the shard first in name order (names start with the write time), as the
score store does; a writer merges its partition's shards once it holds :data:`COMPACT_AT`.

What a reused embedding means for the scores: an fp32 embedding does not depend on the other
texts of its batch (to ~1e-7: padding is masked), so a pair scored with stored embeddings gets
the score a cold run gives to that precision. A dynamically quantised int8 graph scales each
batch as a whole, so an int8 embedding is the one of the batch it was first computed in -- a
warm store gives the same bytes as the run that filled it, not as a cold run with other texts
(the score store's own pairs behave the same way).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core.errors import InputError, Location, check_param
from kit.core.hashing import is_sha256, json_sha256
from kit.guard.scoring import shards

FORMAT = 1
SHARD_GLOB = "embeddings-*.parquet"
COMPACT_AT = 64  # a writer merges its partition once it holds this many shards


def embedding_mode(device: str, tokenizer_fingerprint: str) -> dict[str, Any]:
    """Everything besides the ONNX file that decides an embedding, as plain JSON data."""
    return {
        "format": FORMAT,
        "kind": "embedding",
        "device": device,
        "tokenizer": tokenizer_fingerprint,
    }


# ----------------------------------------------------------------------------- shards (I/O)


def shard_frame(entries: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """One shard's table: text_sha256, dim, embedding (little-endian float32 bytes), sorted by
    key."""
    keys = sorted(entries)
    vecs = [np.asarray(entries[k], dtype="<f4") for k in keys]
    return pd.DataFrame(
        {
            "text_sha256": pd.Series(keys, dtype=object),
            "dim": np.array([v.size for v in vecs], dtype=np.int64),
            "embedding": pd.Series([v.tobytes() for v in vecs], dtype=object),
        }
    )


def read_shard(path: Path) -> dict[str, np.ndarray]:
    """The embeddings of one shard, validated against schemas/embedding_store_shard.yaml (and
    each row's byte length against its dim)."""
    frame = shards.read_frame(
        path,
        "embedding_store_shard",
        "embedding-store shard",
        "delete it to embed its texts again",
        row_base=1,
    )
    out: dict[str, np.ndarray] = {}
    for i, (key, dim, blob) in enumerate(
        zip(frame["text_sha256"], frame["dim"], frame["embedding"], strict=True)
    ):
        if not isinstance(blob, bytes) or len(blob) != 4 * int(dim):
            raise InputError(
                "bad_score_store",
                f"embedding must be {4 * int(dim)} bytes (dim {int(dim)} float32 values); got "
                f"{len(blob) if isinstance(blob, bytes) else type(blob).__name__}; delete the "
                "shard to embed its texts again",
                where=Location(str(path), row=i + 1, column="embedding"),
            )
        out[str(key)] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    return out


def _union(paths: list[Path]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for path in paths:
        for k, v in read_shard(path).items():
            out.setdefault(k, v)
    return out


def read_partition(folder: Path) -> dict[str, np.ndarray]:
    """The union of a partition's shards (the first shard in name order wins a repeated key)."""
    return shards.union(folder, SHARD_GLOB, _union)


def write_shard(folder: Path, entries: Mapping[str, np.ndarray], stamp: int | None = None) -> Path:
    """Write ``entries`` as one new shard, atomically (temp name, then rename)."""
    from kit.core.schema import validate_frame

    path = shards.shard_path(folder, "embeddings", stamp)
    frame = validate_frame(shard_frame(entries), "embedding_store_shard", str(path), row_base=1)
    return shards.write_frame(path, frame)


def compact(folder: Path) -> int:
    """Merge a partition's embedding shards into one (:func:`kit.guard.scoring.shards.compact`:
    the oldest shard's time stamp, first value wins); returns how many were merged."""

    def merge(paths: list[Path]) -> None:
        write_shard(Path(folder), _union(paths), shards.shard_stamp(paths[0]))

    return shards.compact(Path(folder), SHARD_GLOB, merge)


# ----------------------------------------------------------------------------- the store


@dataclass
class EmbeddingStore:
    """The embeddings of one (bi-encoder sha256, embedding mode) partition of a store folder.

    Loaded lazily at the first lookup; :meth:`add` collects new embeddings and :meth:`flush`
    appends them as one shard.
    """

    root: Path
    model_sha256: str
    mode: dict[str, Any]
    _entries: dict[str, np.ndarray] | None = field(default=None, repr=False)
    _pending: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        check_param(
            "model_sha256",
            self.model_sha256,
            is_sha256(self.model_sha256),
            "64 lower-case hex digits (the bi-encoder's ONNX sha256)",
            "EmbeddingStore",
        )

    @property
    def folder(self) -> Path:
        return Path(self.root) / self.model_sha256 / json_sha256(self.mode)

    def _load(self) -> dict[str, np.ndarray]:
        if self._entries is None:
            folder = self.folder
            self._entries = read_partition(folder) if folder.is_dir() else {}
        return self._entries

    def __len__(self) -> int:
        return len(self._load())

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored embeddings of those of ``keys`` (text sha256 hex) the store holds."""
        entries = self._load()
        return {k: entries[k] for k in keys if k in entries}

    def add(self, key: str, embedding: np.ndarray) -> None:
        """Keep ``embedding`` for ``key`` (written at the next :meth:`flush`)."""
        vec = np.asarray(embedding, dtype=np.float32)
        self._load()[key] = vec
        self._pending[key] = vec

    def flush(self) -> int:
        """Append the embeddings added since the last flush as one shard; returns how many."""
        n = len(self._pending)
        if n:
            folder = self.folder
            shards.open_partition(
                folder, {"bi_encoder_onnx_sha256": self.model_sha256, "mode": self.mode}
            )
            write_shard(folder, self._pending)
            if len(list(folder.glob(SHARD_GLOB))) >= COMPACT_AT:
                compact(folder)
        self._pending = {}
        return n


def bi_encoders(verifier: Any) -> list[Any]:
    """The ONNX bi-encoders a verifier embeds with: itself (minilm-bi), a cross-encoder's
    relatedness model, a two-stage verifier's first stage (each once)."""
    out: list[Any] = []
    todo = [verifier]
    while todo:
        v = todo.pop(0)
        if v is None or any(v is o for o in out):
            continue
        if hasattr(v, "embed") and hasattr(v, "embedding_store"):
            out.append(v)
        todo.extend(getattr(v, name, None) for name in ("bi", "cross", "relatedness"))
    return out


def bind_embeddings(verifier: Any, root: Path | None, device: str = "cpu") -> int:
    """Give each bi-encoder of ``verifier`` its partition of the store under ``root`` (None:
    none, embeddings stay in this process); returns how many were bound."""
    parts = bi_encoders(verifier)
    for bi in parts:
        bi.embedding_store = (
            None
            if root is None
            else EmbeddingStore(
                Path(root), bi.card.onnx_sha256, embedding_mode(device, bi.tokens.fingerprint)
            )
        )
    return len(parts)
