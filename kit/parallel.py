"""Where a command runs its independent pieces of work: this process, or a Ray cluster.

An :class:`Engine` names the choice a command's ``--engine local|ray [--ray-address ADDR]
[--ray-workers N]`` made (kit/commands/options.py ``engine_options``). Two users:

* verifier scoring (:mod:`kit.guard.ray_engine`): the model's forward passes on Ray actors;
* seeded simulations (``kit certify --validate / --null-draws``): a pure function mapped over
  groups of draws. The functional core takes a *mapper* (:class:`SerialMap` by default, as it
  takes an ``rng``); :func:`mapper` gives the Ray one. Every draw is seeded by its own index,
  or drawn on the driver before the map, and the results are put back in input order, so both
  mappers return the same floats.

No home-made scheduler: a Ray map is one Ray task per item (``ray.remote``), the shared
arguments placed once in Ray's object store; placement, retries and back-pressure are Ray's.
Ray is an optional extra (``pip install -e '.[ray]'``); a missing one is a ConfigError naming it.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.errors import ConfigError

ENGINES = ("local", "ray")
EXTRA_HINT = "pip install -e '.[ray]' (the 'ray' extra: ray[data])"
PARTS_PER_WORKER = 4  # tasks per Ray worker of a map (load balance against stragglers)


def import_ray() -> Any:
    """The ``ray`` module, or a ConfigError (exit 2) naming the extra to install."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise ConfigError(
            "missing_extra", f"--engine ray needs Ray, which is not installed: {EXTRA_HINT}"
        ) from None
    return ray


@dataclass(frozen=True)
class Engine:
    """``--engine`` and its Ray options, checked: ``local`` takes no Ray option."""

    name: str = "local"
    address: str | None = None
    workers: int | None = None

    def __post_init__(self) -> None:
        if self.name not in ENGINES:
            raise ConfigError("bad_parameter", f"--engine must be one of {', '.join(ENGINES)}")
        if self.name == "local" and (self.address or self.workers is not None):
            raise ConfigError("bad_parameter", "--ray-address / --ray-workers need --engine ray")
        if self.workers is not None and self.workers < 1:
            raise ConfigError("bad_parameter", f"--ray-workers must be >= 1; got {self.workers}")

    @property
    def is_ray(self) -> bool:
        return self.name == "ray"


LOCAL = Engine()


@contextlib.contextmanager
def ray_session(address: str | None = None) -> Iterator[Any]:
    """Within the block, Ray is initialised; yields the ``ray`` module.

    ``address`` None uses the Ray already initialised in this process, else the cluster in
    RAY_ADDRESS, else starts a local one; otherwise a cluster address (``ray start --head``
    prints it; ``auto``; or ``ray://HOST:10001`` for Ray Client). The kit package is shipped
    to a remote cluster as a runtime_env ``py_modules``. A Ray started here is shut down on exit.
    """
    ray = import_ray()
    started = False
    if not ray.is_initialized():
        import kit

        kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.WARNING,
        }
        if address:
            kwargs["runtime_env"] = {"py_modules": [str(Path(kit.__file__).parent)]}
        try:
            ray.init(address=address or None, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ConfigError(
                "ray_unreachable", f"cannot connect to Ray at {address!r}: {exc}"
            ) from None
        started = True
    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def cluster_workers(ray: Any, workers: int | None, threads: int = 1) -> int:
    """``workers``, or (None) the cluster's CPUs / ``threads`` (at least 1)."""
    if workers is not None:
        return workers
    return max(1, int(ray.cluster_resources().get("CPU", 1)) // threads)


# ----------------------------------------------------------------------------- mappers


class SerialMap:
    """The local mapper: ``fn`` over the items in this process, in order (one part)."""

    parts = 1

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        return [fn(x) for x in items]


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    return fn(item)


@dataclass
class RayMap:
    """A mapper running each item as one Ray task (``ray`` initialised by the caller).

    ``fn`` (a picklable callable, e.g. a ``functools.partial`` of a module-level function and
    its shared arguments) is put once in the object store; results come back in item order.
    """

    ray: Any
    workers: int

    @property
    def parts(self) -> int:
        return PARTS_PER_WORKER * self.workers

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        ray = self.ray
        remote = ray.remote(num_cpus=1)(_call)
        fn_ref = ray.put(fn)
        return list(ray.get([remote.remote(fn_ref, x) for x in items]))


@contextlib.contextmanager
def mapper(engine: Engine = LOCAL) -> Iterator[SerialMap | RayMap]:
    """The mapper of ``engine``: :class:`SerialMap`, or a :class:`RayMap` on its cluster."""
    if not engine.is_ray:
        yield SerialMap()
        return
    with ray_session(engine.address) as ray:
        yield RayMap(ray, cluster_workers(ray, engine.workers))


def split(n: int, parts: int) -> list[range]:
    """``range(n)`` in at most ``parts`` contiguous, non-empty, near-equal pieces."""
    parts = max(1, min(parts, n))
    bounds = [n * i // parts for i in range(parts + 1)]
    return [range(a, b) for a, b in itertools.pairwise(bounds) if b > a]
