"""The ONNX verifiers: sessions, windowing, batches (seed 001 S2; docs/architecture.md, "Citation
guard").

Any verifier implements :class:`~kit.guard.verifiers.card.Verifier`: ``score(claims, passages) -> s in [0, 1]`` per pair,
reading each passage *in full* through sliding windows (:mod:`kit.guard.scoring.windows`), s = max over
windows. Two ONNX implementations share the plumbing:

* :class:`OnnxBiEncoder` -- the embedded default (all-MiniLM-L6-v2, built by
  :mod:`kit.guard.verifiers.export`): s = (1 + cos(claim, window)) / 2, clipped to [0, 1]. Each distinct
  text (claim or window) is embedded once per verifier object (cache keyed by sha256 of the
  text), so a passage cited by many claims is encoded once per run.
* :class:`OnnxCrossEncoder` -- an NLI-style cross-encoder exported to ONNX: inputs
  (input_ids, attention_mask[, token_type_ids]) of the pair (claim, window), output logits
  [batch, classes] named by the card's labels; s by the card's scoring rule
  (:meth:`OnnxCrossEncoder.rule_scores`: :func:`class_score`, :func:`two_signal_score` with the
  card's relatedness bi-encoder, or a rule fitted on a lab's sample, :mod:`kit.guard.verifiers.fitted_rule`).

Both tokenize each distinct text once (a cross-encoder shares its tokens with a relatedness
bi-encoder of the same tokenizer) and batch rows of similar length (by tokens; by characters,
as always, for a dynamically quantised int8 graph, whose scores depend on the batch):
:mod:`kit.guard.verifiers.batching`.

Assumption stated on the card: a similarity bi-encoder measures topical relatedness, not
entailment -- it cannot see a negated conclusion. That limit is measured, not hidden
(kit.reproductions.guard.pubmedqa_auc, negative type ``negated``).

Runtime needs only onnxruntime, tokenizers, onnx (to read a graph's op types) and numpy.
``device`` picks the onnxruntime provider: ``cpu`` -> CPUExecutionProvider, ``cuda`` ->
CUDAExecutionProvider (a ConfigError when this onnxruntime build has no CUDA provider).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kit.core.errors import ConfigError, InputError, Location
from kit.core.progress import Progress
from kit.guard.scoring.windows import WindowSpec, passage_windows
from kit.guard.verifiers.batching import (
    Tokens,
    batch_order,
    chunked,
    graph_op_types,
    pad_feed,
    scales_per_batch,
)
from kit.guard.verifiers.card import DEFAULT_WINDOW, ModelCard
from kit.guard.verifiers.fitted_rule import (
    FittedRule,
    best_rows,
    feature_matrix,
    fitted_score,
)
from kit.guard.verifiers.rules import (
    CLASS_RULES,
    FITTED_RULE,
    SCORING_RULES,
    class_score,
    softmax,
    two_signal_score,
)


def providers_for(device: str) -> list[str]:
    """onnxruntime providers for ``device``; a ConfigError when CUDA is asked for but absent."""
    import onnxruntime as ort

    if device == "cpu":
        return ["CPUExecutionProvider"]
    if device == "cuda":
        available = ort.get_available_providers()
        if "CUDAExecutionProvider" not in available:
            raise ConfigError(
                "no_cuda",
                "--device cuda needs onnxruntime's CUDAExecutionProvider, which this install "
                f"does not have (available: {', '.join(available)}); install onnxruntime-gpu "
                "or use --device cpu",
            )
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    raise ConfigError("bad_parameter", f"device must be 'cpu' or 'cuda'; got {device!r}")


def make_session(model: Path | bytes, device: str = "cpu", threads: int = 0) -> Any:
    """An onnxruntime session of an ONNX file (or of its bytes, as a Ray worker gets them)."""
    import onnxruntime as ort

    if not isinstance(model, bytes):
        if not Path(model).is_file():
            raise InputError("missing_file", "ONNX model not found", where=Location(str(model)))
        model = str(model)  # type: ignore[assignment]
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.log_severity_level = 3
    return ort.InferenceSession(model, sess_options=opts, providers=providers_for(device))


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=32)
def _scales_per_batch(model_path: str, onnx_sha256: str) -> bool:
    """Whether the graph quantises per batch (read once per file and sha256: parsing a 90 MB
    graph costs a few tenths of a second, and a verifier is loaded many times a run)."""
    return scales_per_batch(graph_op_types(Path(model_path)))


def pair_feed(encodings: Sequence[Any]) -> dict[str, np.ndarray]:
    """onnxruntime inputs of a padded batch of encoded pairs (a graph takes what it declares)."""
    return {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }


def flatten_windows(
    claims: Sequence[str], passages: Sequence[str], window: WindowSpec
) -> tuple[list[str], list[str], list[int]]:
    """Every (claim, window) of the pairs, flat, with the index of the pair each came from.

    Each distinct passage is windowed once. An empty passage contributes no window."""
    if len(claims) != len(passages):
        raise ConfigError("bad_parameter", "claims and passages must have the same length")
    cache: dict[str, list[str]] = {}
    flat_c: list[str] = []
    flat_w: list[str] = []
    owner: list[int] = []
    for i, (c, p) in enumerate(zip(claims, passages, strict=True)):
        key = _text_key(p)
        if key not in cache:
            cache[key] = passage_windows(p, window)
        for w in cache[key]:
            flat_c.append(c)
            flat_w.append(w)
            owner.append(i)
    return flat_c, flat_w, owner


def best_window(
    scores: np.ndarray, probs: np.ndarray, owner: Sequence[int], n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair: the max window score (0 without windows) and that window's class
    probabilities (NaN without windows); ties keep the earlier window."""
    rows = best_rows(np.asarray(scores), np.asarray(owner, dtype=int), n)
    has = rows >= 0
    s = np.zeros(n)
    s[has] = np.asarray(scores)[rows[has]]
    best = np.full((n, probs.shape[1] if probs.ndim == 2 else 0), np.nan)
    if probs.ndim == 2:
        best[has] = probs[rows[has]]
    return s, best


class EmbeddingCache(Protocol):
    """Where a bi-encoder keeps embeddings across runs, by the sha256 of the text
    (:class:`kit.guard.scoring.embedding_store.EmbeddingStore`)."""

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]: ...

    def add(self, key: str, embedding: np.ndarray) -> None: ...

    def flush(self) -> int: ...


class Runner(Protocol):
    """Runs the ONNX graph on a stream of model batches (feeds), yielding the first output of
    each, in order. The verifier tokenizes, batches and reduces; a runner only runs the graph,
    so every engine sees the very same batches (kit.guard.scoring.ray_engine runs them on a cluster)."""

    def run(self, feeds: Iterable[dict[str, np.ndarray]]) -> Iterator[np.ndarray]: ...


@dataclass
class LocalRunner:
    """The default runner: this process's onnxruntime session, one batch after another."""

    session: Any

    def run(self, feeds: Iterable[dict[str, np.ndarray]]) -> Iterator[np.ndarray]:
        for feed in feeds:
            yield self.session.run(None, feed)[0]


class _WindowedVerifier:
    """Shared plumbing: windows per passage, batching, progress bar, max over windows."""

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        card: ModelCard,
        device: str,
        batch_size: int,
        window: WindowSpec,
        progress: bool,
        threads: int,
    ) -> None:
        from tokenizers import Tokenizer

        self.card = card
        self.model_path = Path(model_path)
        self.session = make_session(model_path, device, threads)
        self.runner: Runner = LocalRunner(self.session)
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # each distinct text tokenized once; shared with a relatedness bi-encoder whose
        # tokenizer is the same (OnnxCrossEncoder); kit.guard.verifiers.batching
        self.tokens = Tokens(self.tokenizer)
        # a dynamically quantised graph scales each batch as a whole: keep its batches as they
        # always were (by characters); any other graph batches by token length (less padding)
        self.by_tokens = not _scales_per_batch(str(self.model_path), card.onnx_sha256)
        self.batch_size = batch_size
        self.window = window
        self.progress = progress

    def _pair_scores(self, claims: list[str], windows: list[str]) -> np.ndarray:
        raise NotImplementedError

    def score(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        flat_c, flat_w, owner = flatten_windows(claims, passages, self.window)
        out = np.zeros(len(claims), dtype=float)  # an empty passage supports nothing: s = 0
        if flat_c:
            s = self._pair_scores(flat_c, flat_w)
            np.maximum.at(out, np.asarray(owner), s)
        return out

    def window_scores(self, claim: str, passage: str) -> tuple[list[str], np.ndarray]:
        """Every window of ``passage`` and its score against ``claim`` (for audit tables)."""
        wins = passage_windows(passage, self.window)
        if not wins:
            return [], np.zeros(0)
        return wins, self._pair_scores([claim] * len(wins), wins)


class OnnxBiEncoder(_WindowedVerifier):
    """Bi-encoder verifier over an ONNX sentence-embedding graph (input_ids, attention_mask)."""

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        card: ModelCard,
        device: str = "cpu",
        batch_size: int = 32,
        window: WindowSpec = DEFAULT_WINDOW,
        progress: bool = False,
        threads: int = 0,
    ) -> None:
        super().__init__(
            model_path, tokenizer_path, card, device, batch_size, window, progress, threads
        )
        self._cache: dict[str, np.ndarray] = {}
        self.tokens_seen = 0  # real (non-pad) tokens encoded, for throughput accounting
        # embeddings kept across runs (kit.guard.scoring.embedding_store, bound by open_scorer)
        self.embedding_store: EmbeddingCache | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised embeddings [n, d]; each distinct text is encoded once (cached in this
        object, and in the bound embedding store across runs)."""
        keys = [_text_key(t) for t in texts]
        todo = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self._cache}.items()
        )
        if self.embedding_store is not None and todo:
            self._cache.update(self.embedding_store.get_many([k for k, _ in todo]))
            todo = [(k, t) for k, t in todo if k not in self._cache]
        rows = self.tokens.texts([t for _, t in todo])
        # rows of similar length share a batch (less padding; deterministic batches)
        order = batch_order(
            [len(ids) for ids, _ in rows],
            [len(t) for _, t in todo],
            [k for k, _ in todo],
            self.by_tokens,
        )
        chunks = chunked(order, self.batch_size)

        def feeds() -> Iterator[dict[str, np.ndarray]]:
            for chunk in chunks:
                feed = pad_feed([rows[i] for i in chunk], self.tokens.padding)
                self.tokens_seen += int(feed["attention_mask"].sum())
                yield {"input_ids": feed["input_ids"], "attention_mask": feed["attention_mask"]}

        with Progress(
            len(chunks), self.progress and len(chunks) > 4, "embedding", "", lines=False
        ) as bar:
            for chunk, emb in zip(chunks, self.runner.run(feeds()), strict=True):
                for i, v in zip(chunk, emb, strict=True):
                    self._cache[todo[i][0]] = v
                    if self.embedding_store is not None:
                        self.embedding_store.add(todo[i][0], v)
                bar.advance(1)
        if self.embedding_store is not None and todo:
            self.embedding_store.flush()
        return np.stack([self._cache[k] for k in keys]) if keys else np.zeros((0, 0))

    def _pair_scores(self, claims: list[str], windows: list[str]) -> np.ndarray:
        uniq = list(dict.fromkeys([*claims, *windows]))
        emb = self.embed(uniq)
        index = {t: i for i, t in enumerate(uniq)}
        a = emb[[index[c] for c in claims]].astype(np.float64)
        b = emb[[index[w] for w in windows]].astype(np.float64)
        cos = np.sum(a * b, axis=1)
        return np.clip((1.0 + cos) / 2.0, 0.0, 1.0)


class OnnxCrossEncoder(_WindowedVerifier):
    """Cross-encoder (NLI) verifier: the pair (claim, window) in, class logits out.

    ``labels`` names the output columns in order (the card's ``extra.labels``); ``scoring`` is
    the card's rule (:meth:`rule_scores`). ``score`` is the max over windows;
    :meth:`score_classes` also returns the class probabilities of that best window.
    ``relatedness`` is the card's companion bi-encoder (``relatedness/``), which the
    ``two_signal`` rule reads beside the class probabilities.
    """

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        card: ModelCard,
        labels: Sequence[str] = ("entailment", "neutral", "contradiction"),
        scoring: str = "entailment",
        device: str = "cpu",
        batch_size: int = 16,
        window: WindowSpec = DEFAULT_WINDOW,
        progress: bool = False,
        threads: int = 0,
        relatedness: OnnxBiEncoder | None = None,
        fitted: FittedRule | None = None,
    ) -> None:
        super().__init__(
            model_path, tokenizer_path, card, device, batch_size, window, progress, threads
        )
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.labels = list(labels)
        self.scoring = scoring
        self.relatedness = relatedness
        self.fitted = fitted
        self._cache: dict[tuple[str, str], np.ndarray] = {}
        if relatedness is not None and relatedness.tokens.fingerprint == self.tokens.fingerprint:
            # the same tokenizer (the default card's two MiniLM models): a claim or window is
            # tokenized once for the pair and for the relatedness embedding
            relatedness.tokens = self.tokens

    def _pair_probs(self, claims: list[str], windows: list[str]) -> np.ndarray:
        keys = [(_text_key(c), _text_key(w)) for c, w in zip(claims, windows, strict=True)]
        todo = sorted(
            {
                k: (c, w)
                for k, c, w in zip(keys, claims, windows, strict=True)
                if k not in self._cache
            }.items()
        )
        rows = self.tokens.pairs([pair for _, pair in todo])
        # similar lengths share a batch: less padding (kit.guard.verifiers.batching.batch_order)
        order = batch_order(
            [len(ids) for ids, _ in rows],
            [len(c) + len(w) for _, (c, w) in todo],
            [k for k, _ in todo],
            self.by_tokens,
        )
        chunks = chunked(order, self.batch_size)

        def feeds() -> Iterator[dict[str, np.ndarray]]:
            for chunk in chunks:
                feed = pad_feed([rows[i] for i in chunk], self.tokens.padding)
                yield {k: v for k, v in feed.items() if k in self.inputs}

        with Progress(
            len(chunks), self.progress and len(chunks) > 4, "cross-encoding", "", lines=False
        ) as bar:
            for chunk, out in zip(chunks, self.runner.run(feeds()), strict=True):
                logits = np.asarray(out, dtype=np.float64)
                if logits.ndim != 2 or logits.shape[1] not in (1, len(self.labels)):
                    raise ConfigError(
                        "bad_model",
                        f"cross-encoder output must be [batch, {len(self.labels)}] (one column "
                        f"per card label); got {logits.shape}",
                    )
                for i, p in zip(chunk, softmax(logits), strict=True):
                    self._cache[todo[i][0]] = p
                bar.advance(1)
        width = len(self.labels) if len(self.labels) > 1 else 2
        if not keys:
            return np.zeros((0, width))
        return np.stack([self._cache[k] for k in keys])

    def rules(self) -> tuple[str, ...]:
        """The scoring rules this verifier can apply (``two_signal`` needs a relatedness model,
        ``fitted`` its fitted weights)."""
        return tuple(
            r
            for r in SCORING_RULES
            if (r != "two_signal" or self.relatedness is not None)
            and (r != FITTED_RULE or self.fitted is not None)
        )

    def scores_by_rule(
        self, claims: Sequence[str], passages: Sequence[str]
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """(s, best-window class probabilities) of every pair under each rule of :meth:`rules`
        -- the one loop that scores a pair table under every rule (validation, adaptation).
        The class probabilities are computed once (cached); only the rule changes."""
        keep = self.scoring
        try:
            out = {}
            for rule in self.rules():
                self.scoring = rule
                out[rule] = self.score_classes(claims, passages)
            return out
        finally:
            self.scoring = keep

    def rule_scores(
        self, claims: Sequence[str], windows: Sequence[str], probs: np.ndarray
    ) -> np.ndarray:
        """The card's scoring rule on (claim, window) pairs whose class probabilities are
        ``probs`` -- the one place a cross-encoder's window score is made."""
        if self.scoring in CLASS_RULES:
            return class_score(probs, self.labels, self.scoring)
        if self.scoring == FITTED_RULE:
            if self.fitted is None:
                raise ConfigError(
                    "bad_card", "the fitted scoring rule needs its weights (extra.fitted)"
                )
            sig = self.signals(claims, windows, probs, self.fitted.features)
            return fitted_score(self.fitted, feature_matrix(sig, self.fitted.features))
        sig = self.signals(claims, windows, probs, ("entailment", "relatedness"))
        return two_signal_score(sig["entailment"], sig["relatedness"])

    def signals(
        self,
        claims: Sequence[str],
        windows: Sequence[str],
        probs: np.ndarray,
        names: Sequence[str] = ("entailment", "contradiction", "relatedness"),
    ) -> dict[str, np.ndarray]:
        """The per-(claim, window) signals the rules combine: P(entailment), P(contradiction)
        (0 for a model without that class) and the relatedness bi-encoder's score."""
        out: dict[str, np.ndarray] = {}
        for name in names:
            if name == "relatedness":
                if self.relatedness is None:
                    raise ConfigError(
                        "bad_card",
                        f"the {self.scoring} scoring rule needs the card's relatedness "
                        "bi-encoder (extra.relatedness); this verifier has none",
                    )
                out[name] = self.relatedness._pair_scores(list(claims), list(windows))
            elif name in self.labels:
                out[name] = np.asarray(probs, dtype=np.float64)[:, self.labels.index(name)]
            else:
                out[name] = np.zeros(len(claims))
        return out

    def _pair_scores(self, claims: list[str], windows: list[str]) -> np.ndarray:
        probs = self._pair_probs(claims, windows)
        if probs.size == 0:
            return np.zeros(0)
        return self.rule_scores(claims, windows, probs)

    def score_classes(
        self, claims: Sequence[str], passages: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(s [n], class probabilities [n, C] of the best-scoring window); an empty passage has
        s = 0 and probabilities NaN."""
        flat_c, flat_w, owner = flatten_windows(claims, passages, self.window)
        if not flat_c:
            return np.zeros(len(claims)), np.full((len(claims), len(self.labels)), np.nan)
        probs = self._pair_probs(flat_c, flat_w)[:, : len(self.labels)]
        return best_window(self.rule_scores(flat_c, flat_w, probs), probs, owner, len(claims))
