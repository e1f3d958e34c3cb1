"""One content-addressed store of verifier scores, shared by every command and output folder.

A score is the verifier's s in [0, 1] for one (claim, full passage) pair (s = max over the
passage's windows), plus, for a cross-encoder, the class probabilities of its best window. It
is keyed by

* the verifier's ONNX sha256 (fp32 and int8 are different files, so different keys),
* the scoring mode: a canonical JSON of everything else that changes s -- kind, scoring rule,
  labels, window rule, two-stage settings, execution device (:func:`scoring_mode`), and
* the sha256 of the claim's and of the passage's UTF-8 text (:func:`pair_key`).

An entry may carry a short ``note`` (an LLM checklist judge's reason for its verdict,
:mod:`kit.grade.llm_judge`); verifier shards have none.

Layout on disk (default ``data/scores/``; ``--cache-dir`` / ``KIT_CACHE_DIR``)::

    <root>/<verifier sha256>/<mode sha256>/mode.json          the mode, for people
    <root>/<verifier sha256>/<mode sha256>/shard-*.parquet    append-only shards

Each shard (schemas/score_store_shard.yaml) is written to a temp name and renamed into place
(:func:`kit.core.atomic.staged_file`), so two processes writing at once never see or leave half a
shard; a reader takes the union of the shards. When a key occurs in several shards (two writers
scored the same pair), the shard first in name order wins -- names start with the write time,
so the oldest value is kept and a rerun reads back exactly the floats an earlier run used.
:meth:`ScoreStore.compact` merges a partition's shards into one (safe beside writers: it deletes
only the shards it read; a reader that loses a shard to it re-lists).

A changed verifier (another sha256) or mode is another folder: it can never hit old entries.

The misses of one call are scored in key order, in checkpoints of :data:`CHECKPOINT_PAIRS`
pairs, each written to the store as it completes (when there is more than one): a run that
fails part-way (a Ray cluster lost, a killed process) keeps every finished checkpoint, and the
rerun's misses are the same pairs minus a prefix of checkpoints, so it scores the remaining
checkpoints in the same batches -- the same bytes as an uninterrupted run (docs/scale.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core.errors import ClusterError, ConfigError, check_param
from kit.core.hashing import is_sha256, json_sha256
from kit.core.parallel import busy, report_progress
from kit.guard.scoring import embedding_store, shards
from kit.registry.fetch import REPO_ROOT

FORMAT = 1
DEFAULT_STORE = REPO_ROOT / "data" / "scores"
ENV_VAR = "KIT_CACHE_DIR"
SHARD_GLOB = "shard-*.parquet"
COMPACT_AT = 64  # a writer merges its partition once it holds this many shards
CHECKPOINT_PAIRS = 4096  # misses scored (and written to the store) per checkpoint
Entry = tuple[float, tuple[float, ...] | None]


# ----------------------------------------------------------------------------- pure keys


def text_sha256(text: str) -> str:
    """sha256 (hex) of ``text``'s UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pair_key(claim: str, passage: str) -> bytes:
    """The in-memory key of one pair: sha256(claim) + sha256(passage), 64 raw bytes."""
    return (
        hashlib.sha256(claim.encode("utf-8")).digest()
        + hashlib.sha256(passage.encode("utf-8")).digest()
    )


def scoring_mode(verifier: Any, device: str = "cpu") -> dict[str, Any]:
    """Everything besides the ONNX file that decides a verifier's score, as plain JSON data.

    Read from the verifier's card (kind, scoring and window rules, two-stage settings) and its
    attributes (cross-encoder ``labels`` and ``scoring``, the ``window`` spec, ``top_k``), plus
    the execution ``device`` (CPU and CUDA kernels differ in the last bits).
    """
    card = verifier.card
    mode: dict[str, Any] = {
        "format": FORMAT,
        "kind": card.kind,
        "scoring_rule": card.scoring_rule,
        "window_rule": card.window_rule,
        "device": device,
    }
    for attr in ("labels", "scoring", "top_k"):
        if hasattr(verifier, attr):
            value = getattr(verifier, attr)
            mode[attr] = list(value) if isinstance(value, list | tuple) else value
    window = getattr(verifier, "window", None)
    if window is not None and dataclasses.is_dataclass(window):
        mode["window"] = dataclasses.asdict(window)
    if isinstance(card.extra, Mapping) and "two_stage" in card.extra:
        mode["two_stage"] = card.extra["two_stage"]
    parts = [verifier, getattr(verifier, "cross", None)]
    rel = [getattr(p, "relatedness", None) for p in parts if p is not None]
    rel = [r for r in rel if r is not None]
    if rel:  # the two_signal rule reads a second model: its sha256 is part of the key
        mode["relatedness_onnx_sha256"] = rel[0].card.onnx_sha256
    fitted = [getattr(p, "fitted", None) for p in parts if p is not None]
    fitted = [f for f in fitted if f is not None]
    if fitted:  # the fitted rule's weights decide its score
        mode["fitted"] = fitted[0].to_dict()
    return mode


def mode_sha256(mode: Mapping[str, Any]) -> str:
    """sha256 of the mode's canonical JSON (sorted keys, no spaces)."""
    return json_sha256(dict(mode))


# ----------------------------------------------------------------------------- shards (I/O)


def shard_frame(
    entries: Mapping[bytes, Entry], notes: Mapping[bytes, str] | None = None
) -> pd.DataFrame:
    """One shard's table: claim_sha256, passage_sha256, score, p_0 .. p_{C-1} (sorted by key),
    and ``note`` (a short text kept with a score, e.g. an LLM judge's reason) when any entry
    has one."""
    keys = sorted(entries)
    width = max((len(e[1]) for e in entries.values() if e[1] is not None), default=0)
    frame = pd.DataFrame(
        {
            "claim_sha256": [k[:32].hex() for k in keys],
            "passage_sha256": [k[32:].hex() for k in keys],
            "score": np.array([entries[k][0] for k in keys], dtype=np.float64),
        }
    )
    for j in range(width):
        col = [entries[k][1] for k in keys]
        frame[f"p_{j}"] = np.array([np.nan if p is None else p[j] for p in col], dtype=np.float64)
    if notes:
        frame["note"] = pd.Series([notes.get(k) for k in keys], dtype=object)
    return frame


def _frame_notes(frame: pd.DataFrame) -> dict[bytes, str]:
    if "note" not in frame.columns:
        return {}
    return {
        bytes.fromhex(c + p): str(n)
        for c, p, n in zip(
            frame["claim_sha256"], frame["passage_sha256"], frame["note"], strict=True
        )
        if isinstance(n, str)
    }


def _frame_entries(frame: pd.DataFrame) -> dict[bytes, Entry]:
    probs = sorted((c for c in frame.columns if c.startswith("p_")), key=lambda c: int(c[2:]))
    keys = [
        bytes.fromhex(c + p)
        for c, p in zip(frame["claim_sha256"], frame["passage_sha256"], strict=True)
    ]
    scores = frame["score"].to_numpy(dtype=np.float64).tolist()
    if not probs:
        return {k: (s, None) for k, s in zip(keys, scores, strict=True)}
    mat = frame[probs].to_numpy(dtype=np.float64)
    return {k: (s, tuple(row.tolist())) for k, s, row in zip(keys, scores, mat, strict=True)}


def read_shard(path: Path) -> dict[bytes, Entry]:
    """The entries of one shard, validated against schemas/score_store_shard.yaml."""
    return read_shard_notes(path)[0]


def read_shard_notes(path: Path) -> tuple[dict[bytes, Entry], dict[bytes, str]]:
    """The entries and notes of one shard, validated against schemas/score_store_shard.yaml."""
    frame = shards.read_frame(
        path, "score_store_shard", "score-store shard", "delete it to rescore its pairs"
    )
    return _frame_entries(frame), _frame_notes(frame)


def read_partition(folder: Path) -> dict[bytes, Entry]:
    """The union of a partition's shards (first shard in name order wins a repeated key)."""
    return read_partition_notes(folder)[0]


def _union_notes(paths: list[Path]) -> tuple[dict[bytes, Entry], dict[bytes, str]]:
    out: dict[bytes, Entry] = {}
    notes: dict[bytes, str] = {}
    for path in paths:
        entries, shard_notes = read_shard_notes(path)
        for k, e in entries.items():
            if k not in out:
                out[k] = e
                if k in shard_notes:
                    notes[k] = shard_notes[k]
    return out, notes


def read_partition_notes(folder: Path) -> tuple[dict[bytes, Entry], dict[bytes, str]]:
    """The union of a partition's shards and of their notes (first shard in name order wins a
    repeated key; its note, or none, goes with it)."""
    return shards.union(folder, SHARD_GLOB, _union_notes)


def write_shard(
    folder: Path,
    entries: Mapping[bytes, Entry],
    stamp: int | None = None,
    notes: Mapping[bytes, str] | None = None,
) -> Path:
    """Write ``entries`` (and their ``notes``) as one new shard, atomically (temp name, then
    rename)."""
    from kit.core.schema import validate_frame

    path = shards.shard_path(folder, "shard", stamp)
    frame = validate_frame(shard_frame(entries, notes), "score_store_shard", str(path))
    return shards.write_frame(path, frame)


def scorer_name(scorer: object) -> str:
    """The instrument's name: ``name`` attribute, else the guard verifier card's name."""
    name = getattr(scorer, "name", None)
    if isinstance(name, str):
        return name
    card = getattr(scorer, "card", None)
    if card is not None and isinstance(getattr(card, "name", None), str):
        return f"guard verifier: {card.name}"
    return type(scorer).__name__


@dataclass
class ScoreStore:
    """The scores of one (verifier sha256, scoring mode) partition of a store folder.

    ``root=None`` keeps scores in memory only (``--no-cache``). Entries load lazily on the first
    lookup; :meth:`add` collects new scores and :meth:`flush` appends them as one shard.
    """

    root: Path | None
    verifier_sha256: str
    mode: dict[str, Any]
    _entries: dict[bytes, Entry] | None = field(default=None, repr=False)
    _pending: dict[bytes, Entry] = field(default_factory=dict, repr=False)
    _notes: dict[bytes, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        check_param(
            "verifier_sha256",
            self.verifier_sha256,
            is_sha256(self.verifier_sha256),
            "64 lower-case hex digits (the verifier's ONNX sha256)",
            "ScoreStore",
        )

    @property
    def folder(self) -> Path | None:
        if self.root is None:
            return None
        return Path(self.root) / self.verifier_sha256 / mode_sha256(self.mode)

    def _load(self) -> dict[bytes, Entry]:
        if self._entries is None:
            folder = self.folder
            if folder is None or not folder.is_dir():
                self._entries = {}
            else:
                self._entries, notes = read_partition_notes(folder)
                self._notes = notes | self._notes
        return self._entries

    def __len__(self) -> int:
        return len(self._load())

    def get(self, key: bytes) -> Entry | None:
        return self._load().get(key)

    def note(self, key: bytes) -> str | None:
        """The note kept with a key's score (None: none)."""
        self._load()
        return self._notes.get(key)

    def add(
        self,
        key: bytes,
        score: float,
        probs: Sequence[float] | None = None,
        note: str | None = None,
    ) -> None:
        """Keep ``score`` for ``key`` (written at the next :meth:`flush`). A missing score (NaN:
        an instrument refused the question, :mod:`kit.guard.verifiers.llm.client`) is kept in memory for
        this process only and never written: the store holds numbers, so a rerun asks again."""
        entry = (float(score), None if probs is None else tuple(float(p) for p in probs))
        self._load()[key] = entry
        if not np.isfinite(entry[0]):
            return
        self._pending[key] = entry
        if note is not None:
            self._notes[key] = note

    def flush(self) -> int:
        """Append the scores added since the last flush as one shard; returns how many."""
        n = len(self._pending)
        folder = self.folder
        if n and folder is not None:
            shards.open_partition(
                folder, {"verifier_sha256": self.verifier_sha256, "mode": self.mode}
            )
            pending_notes = {k: self._notes[k] for k in self._pending if k in self._notes}
            write_shard(folder, self._pending, notes=pending_notes)
            if len(list(folder.glob(SHARD_GLOB))) >= COMPACT_AT:
                compact(folder)
        self._pending = {}
        return n


def compact(folder: Path) -> int:
    """Merge the shards of one partition into one; returns how many shards were merged
    (:func:`kit.guard.scoring.shards.compact`: the oldest shard's time stamp, first value wins)."""

    def merge(paths: list[Path]) -> None:
        merged, notes = _union_notes(paths)
        write_shard(Path(folder), merged, shards.shard_stamp(paths[0]), notes=notes)

    return shards.compact(Path(folder), SHARD_GLOB, merge)


def compact_store(root: Path) -> dict[str, int]:
    """Compact every partition under ``root``: {partition folder: shards merged}."""
    out: dict[str, int] = {}
    for folder in sorted(p for p in Path(root).glob("*/*") if p.is_dir()):
        # a partition holds scores or a bi-encoder's embeddings (kit.guard.scoring.embedding_store)
        merged = compact(folder) + embedding_store.compact(folder)
        out[str(folder.relative_to(root))] = merged
    return out


# ----------------------------------------------------------------------------- the scorer


def checkpoint_slices(n: int, size: int) -> list[slice]:
    """``n`` items in consecutive slices of ``size`` (the last one shorter): the checkpoints.

    Cut from the front, so dropping a prefix of whole checkpoints leaves the others as they
    were -- what a resumed run relies on to score the same batches.
    """
    return [slice(a, min(a + size, n)) for a in range(0, n, size)]


@dataclass
class StoredScorer:
    """A verifier that answers from a :class:`ScoreStore` and scores only the misses.

    Misses are scored in one call, in key order (deterministic batches), and added to the
    store; ``hits`` / ``misses`` count pairs (a pair repeated within one call counts as a hit).
    For a cross-encoder (``score_classes`` and ``labels``) the class probabilities are stored
    too, so :meth:`score_classes` is served from the store as well.
    """

    inner: Any
    store: ScoreStore
    hits: int = 0
    misses: int = 0
    engine: Any = None  # a kit.core.parallel.Engine: where misses are scored (None: this process)
    device: str = "cpu"
    _engaged: contextlib.ExitStack | None = field(default=None, repr=False)

    def _engage(self) -> None:
        """Enter the engine's scoring context at the first miss (a warm store starts no Ray);
        it stays entered until :meth:`close` (or the end of the process, for a Ray started
        here: Ray shuts itself down at exit)."""
        if self._engaged is None and self.engine is not None and self.engine.is_ray:
            from kit.guard.scoring.ray_engine import scoring_engine

            stack = contextlib.ExitStack()
            stack.enter_context(scoring_engine(self.engine, self.inner, device=self.device))
            self._engaged = stack

    def close(self) -> None:
        """Leave the engine's context (puts the local runners back; shuts a Ray started here)."""
        if self._engaged is not None:
            stack, self._engaged = self._engaged, None
            stack.close()

    def __enter__(self) -> StoredScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def name(self) -> str:
        return scorer_name(self.inner)

    @property
    def card(self) -> Any:
        return self.inner.card

    @property
    def labels(self) -> list[str]:
        if not self._classes:
            raise AttributeError("labels")  # a bi-encoder: no class probabilities
        return list(self.inner.labels)

    @property
    def _classes(self) -> bool:
        return hasattr(self.inner, "score_classes") and hasattr(self.inner, "labels")

    def _entries(self, claims: Sequence[str], passages: Sequence[str]) -> list[Entry]:
        if len(claims) != len(passages):
            raise ConfigError("bad_parameter", "claims and passages must have the same length")
        keys = [pair_key(c, p) for c, p in zip(claims, passages, strict=True)]
        todo: dict[bytes, tuple[str, str]] = {}
        for k, c, p in zip(keys, claims, passages, strict=True):
            if k not in todo and self.store.get(k) is None:
                todo[k] = (c, p)
        self.misses += len(todo)
        self.hits += len(keys) - len(todo)
        if todo:
            items = sorted(todo.items())
            checkpoints = checkpoint_slices(len(items), CHECKPOINT_PAIRS)
            done = 0
            self._engage()
            report_progress(self._progress(0, len(items)))
            try:
                for part in checkpoints:
                    with busy():
                        self._score_items(items[part])
                    if len(checkpoints) > 1:
                        self.flush()
                    done = part.stop
                    report_progress(self._progress(done, len(items)))
            except BaseException as exc:
                err = self._engine_failed(exc)
                if err is None:
                    raise
                self.flush()  # every finished pair, this step's and earlier steps'
                raise self._explained(err, done, len(items)) from None
        return [self.store.get(k) for k in keys]  # type: ignore[misc]

    def _score_items(self, items: list[tuple[bytes, tuple[str, str]]]) -> None:
        """Score ``items`` ((key, (claim, passage)), in key order) and add them to the store."""
        cs = [c for _, (c, _) in items]
        ps = [p for _, (_, p) in items]
        if self._classes:
            s, probs = self.inner.score_classes(cs, ps)
            probs = np.asarray(probs, dtype=np.float64)
            for (k, _), v, row in zip(items, np.asarray(s, dtype=float), probs, strict=True):
                self.store.add(k, float(v), row.tolist())
        else:
            s = np.asarray(self.inner.score(cs, ps), dtype=float)
            for (k, _), v in zip(items, s, strict=True):
                self.store.add(k, float(v))

    def _engine_failed(self, exc: BaseException) -> ClusterError | None:
        """Hand ``exc`` to the engine's context (which turns a lost cluster into a
        :class:`ClusterError`) and close it; the ClusterError, or None if it is not one."""
        if isinstance(exc, ClusterError):
            return exc
        if self._engaged is None:
            return None
        stack, self._engaged = self._engaged, None
        try:
            stack.__exit__(type(exc), exc, exc.__traceback__)
        except ClusterError as err:
            return err
        except BaseException:
            return None
        return None

    def _progress(self, done: int, todo: int) -> list[str]:
        """What is finished, what the store kept and how to resume, in words."""
        folder = self.store.folder
        kept = (
            f"the score store kept them ({folder}): rerun the same command to resume from it"
            if folder is not None
            else "--no-cache: they were not kept"
        )
        return [
            f"done: {done} of the {todo} pairs this step had to score (checkpoints of "
            f"{CHECKPOINT_PAIRS}, in score-store key order) and the {self.misses - todo} of "
            f"earlier steps; {kept}",
            "nothing was written: no output file or folder of this run",
        ]

    def _explained(self, err: ClusterError, done: int, todo: int) -> ClusterError:
        """``err`` with what was finished, what was kept and how to resume."""
        return ClusterError(
            err.reason, err.message, details=[*err.details, *self._progress(done, todo)]
        )

    def score(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        return np.array([e[0] for e in self._entries(claims, passages)], dtype=float)

    def score_classes(
        self, claims: Sequence[str], passages: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(s [n], class probabilities [n, C]) as the inner cross-encoder's ``score_classes``."""
        if not self._classes:
            raise ConfigError("bad_parameter", "score_classes needs a cross-encoder verifier")
        entries = self._entries(claims, passages)
        width = len(self.inner.labels)
        probs = np.array([e[1] for e in entries], dtype=np.float64).reshape(len(entries), width)
        return np.array([e[0] for e in entries], dtype=float), probs

    def flush(self) -> int:
        return self.store.flush()


def open_scorer(
    verifier: Any, root: Path | None, device: str = "cpu", engine: Any = None
) -> StoredScorer:
    """``verifier`` wrapped by the store partition of its identity sha256 (an ONNX card's weights
    sha256; an LLM card's instrument sha256) and scoring mode.

    ``engine`` (a :class:`kit.core.parallel.Engine`; None = local): where the store's misses are
    scored. With ``ray`` the extra and the verifier are checked here (exit 2 before any work);
    Ray itself starts at the first miss, so a re-audit from a warm store never starts it. The
    scores are the same bytes either way (:mod:`kit.guard.scoring.ray_engine`), so the engine is not
    part of the store key.
    """
    if engine is not None and engine.is_ray:
        from kit.guard.scoring.ray_engine import import_ray, windowed_parts

        import_ray()
        windowed_parts(verifier)
    bind = getattr(verifier, "bind_store", None)
    if bind is not None:  # an LLM verifier stores its (claim, window) answers in the same root
        bind(None if root is None else Path(root))
    # a bi-encoder's embeddings (windows, claims) are kept in the same root, across runs
    embedding_store.bind_embeddings(verifier, None if root is None else Path(root), device)
    store = ScoreStore(
        None if root is None else Path(root),
        verifier.card.identity_sha256,  # an ONNX card's onnx_sha256, an LLM card's instrument
        scoring_mode(verifier, device),
    )
    return StoredScorer(verifier, store, engine=engine, device=device)
