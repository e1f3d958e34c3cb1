"""`--engine ray`: the verifier's ONNX graph run on a Ray cluster (docs/scale.md).

What is distributed is the one costly step, the model forward pass. The driver keeps
everything else -- the score store (hits are never shipped, the driver writes the shard),
windowing, tokenization, batching, caches, the max over windows -- so both engines feed the
graph the *same* batches in the same order, and the scores are the same bytes as with
``--engine local`` (on workers with the driver's onnxruntime build and CPU kernel family).

Mechanics: each model batch (token-id arrays, as :class:`kit.guard.verifiers.session.LocalRunner`
would feed it) is one row of a Ray Data dataset; ``map_batches`` sends rows to a fixed pool of
long-lived actors (:class:`OnnxActor`), each loading the model once, from the ONNX file's
bytes placed once in Ray's object store and checked against the card's sha256 by the actor
(nothing is downloaded on the workers). Rows carry their index, so the outputs are put back
in order whatever the completion order. Feeds stream through in groups of ``group`` batches,
which bounds the driver's memory (one model load per actor per group).

No home-made scheduling: placement, retries and back-pressure are Ray Data's.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kit.core.errors import ConfigError, IntegrityError
from kit.core.parallel import (
    CONNECT_TIMEOUT,
    ENGINES,
    EXTRA_HINT,
    Engine,
    cluster_workers,
    import_ray,
    ray_session,
)

__all__ = [
    "ENGINES",
    "EXTRA_HINT",
    "Engine",
    "OnnxActor",
    "RayRunner",
    "import_ray",
    "ray_engine",
    "scoring_engine",
    "windowed_parts",
]

GROUP = 4096  # model batches per Ray Data dataset (driver memory bound)


class OnnxActor:
    """A Ray Data actor: one onnxruntime session for its lifetime, one model batch per call."""

    def __init__(self, model: list[Any], sha256: str, device: str, threads: int) -> None:
        import ray

        from kit.guard.verifiers.session import make_session

        data = ray.get(model[0])
        got = hashlib.sha256(data).hexdigest()
        if got != sha256:
            raise IntegrityError("sha256_mismatch", f"shipped model sha256 {got} != card {sha256}")
        self.session = make_session(data, device, threads)
        self.inputs = [i.name for i in self.session.get_inputs()]

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        outs = []
        for r in range(len(batch["idx"])):
            feed = {k: np.asarray(batch[k][r], dtype=np.int64) for k in self.inputs}
            outs.append(self.session.run(None, feed)[0])
        return {"idx": np.asarray(batch["idx"]), "out": _column(outs)}


def _column(arrays: list[np.ndarray]) -> np.ndarray:
    """A column of arrays of possibly different shapes (an object array: Ray's ragged tensor)."""
    col = np.empty(len(arrays), dtype=object)
    for i, a in enumerate(arrays):
        col[i] = a
    return col


@dataclass
class RayRunner:
    """A :class:`kit.guard.verifiers.session.Runner` that runs the graph on ``workers`` Ray actors."""

    model_path: Path
    sha256: str
    device: str = "cpu"
    workers: int = 1
    threads: int = 1  # onnxruntime threads (and Ray CPUs) per actor
    group: int = GROUP
    _model_ref: Any = field(default=None, repr=False)

    def _model(self) -> Any:
        if self._model_ref is None:
            ray = import_ray()
            data = Path(self.model_path).read_bytes()
            got = hashlib.sha256(data).hexdigest()
            if got != self.sha256:
                raise IntegrityError(
                    "sha256_mismatch", f"{self.model_path}: sha256 {got} != card {self.sha256}"
                )
            self._model_ref = ray.put(data)
        return self._model_ref

    def _run_group(self, feeds: list[dict[str, np.ndarray]]) -> list[np.ndarray]:
        ray = import_ray()
        rows = [{"idx": i, **feed} for i, feed in enumerate(feeds)]
        ds = ray.data.from_items(rows, override_num_blocks=min(len(rows), 4 * self.workers))
        out = ds.map_batches(
            OnnxActor,
            batch_size=1,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=self.workers),
            fn_constructor_kwargs={
                "model": [self._model()],
                "sha256": self.sha256,
                "device": self.device,
                "threads": self.threads,
            },
            num_cpus=self.threads,
            num_gpus=1 if self.device == "cuda" else None,
        )
        got: dict[int, np.ndarray] = {}
        for row in out.iter_rows():
            got[int(row["idx"])] = np.asarray(row["out"])
        if sorted(got) != list(range(len(feeds))):
            raise ConfigError("ray_failed", f"Ray returned {len(got)} of {len(feeds)} batches")
        return [got[i] for i in range(len(feeds))]

    def run(self, feeds: Iterable[dict[str, np.ndarray]]) -> Iterator[np.ndarray]:
        it = iter(feeds)
        while group := list(itertools.islice(it, self.group)):
            yield from self._run_group(group)


def windowed_parts(verifier: Any) -> list[Any]:
    """The ONNX verifiers inside ``verifier`` (itself, or a two-stage's bi and cross parts, and
    the relatedness bi-encoder of a cross-encoder card), each once."""
    parts = [getattr(verifier, name, None) for name in ("bi", "cross")]
    parts = [verifier, *parts]
    parts += [getattr(p, "relatedness", None) for p in parts]  # a two_signal card's bi-encoder
    found = list({id(p): p for p in parts if p is not None and hasattr(p, "runner")}.values())
    if not found:
        raise ConfigError(
            "bad_parameter", f"--engine ray needs an ONNX verifier; got {type(verifier).__name__}"
        )
    return found


@contextlib.contextmanager
def ray_engine(
    verifier: Any,
    address: str | None = None,
    workers: int | None = None,
    device: str = "cpu",
    threads: int = 1,
    timeout: float = CONNECT_TIMEOUT,
) -> Iterator[int]:
    """Within the block, ``verifier`` runs its graph on Ray; yields the number of actors.

    ``address`` and ``timeout``: see :func:`kit.core.parallel.ray_session` (None: the Ray of this
    process, else RAY_ADDRESS, else a cluster ``ray start`` recorded on this machine, else a
    local one). ``workers`` None = the cluster's CPUs / ``threads``. The local runners are put
    back on exit, and a Ray started here is shut down. A cluster lost inside the block is a
    :class:`kit.core.errors.ClusterError` (exit 2).
    """
    if workers is not None and workers < 1:
        raise ConfigError("bad_parameter", f"--ray-workers must be >= 1; got {workers}")
    parts = windowed_parts(verifier)
    with ray_session(address, timeout) as ray:
        n = cluster_workers(ray, workers, threads)
        saved = [p.runner for p in parts]
        try:
            for p in parts:
                p.runner = RayRunner(p.model_path, p.card.onnx_sha256, device, n, threads)
            yield n
        finally:
            for p, r in zip(parts, saved, strict=True):
                p.runner = r


def scoring_engine(
    engine: str | Engine,
    verifier: Any,
    address: str | None = None,
    workers: int | None = None,
    device: str = "cpu",
) -> contextlib.AbstractContextManager[Any]:
    """The context a command scores in: nothing for ``local``, :func:`ray_engine` for ``ray``."""
    spec = engine if isinstance(engine, Engine) else Engine(engine, address, workers)
    if not spec.is_ray:
        return contextlib.nullcontext()
    return ray_engine(verifier, spec.address, spec.workers, device, timeout=spec.timeout)
