"""Where a command runs its independent pieces of work: this process, or a Ray cluster.

An :class:`Engine` names the choice a command's ``--engine local|ray [--ray-address ADDR]
[--ray-workers N]`` made (kit/commands/scoring_options.py ``engine_options``). Two users:

* verifier scoring (:mod:`kit.guard.scoring.ray_engine`): the model's forward passes on Ray actors;
* seeded simulations (``kit certify --validate / --null-draws``): a pure function mapped over
  groups of draws. The functional core takes a *mapper* (:class:`SerialMap` by default, as it
  takes an ``rng``); :func:`mapper` gives the Ray one. Every draw is seeded by its own index,
  or drawn on the driver before the map, and the results are put back in input order, so both
  mappers return the same floats.

No home-made scheduler: a Ray map is one Ray task per item (``ray.remote``), the shared
arguments placed once in Ray's object store; placement, retries and back-pressure are Ray's.
Ray is an optional extra (``pip install -e '.[ray]'``); a missing one is a ConfigError naming it.

Failing fast (docs/scale.md, "When Ray fails"): an address is first tried with one plain TCP
connection to its port, bounded by ``--ray-connect-timeout`` (nothing listening fails in
milliseconds, a silent host in the timeout), then ``ray.init`` makes one attempt instead of
Ray's twenty (``RAY_gcs_server_port_wait_time_s``), and a refusal is explained from Ray's own
reason (token authentication, version mismatch). While the block runs, a watchdog thread probes
the cluster's GCS port; a cluster that stops answering for the timeout ends the block with a
:class:`kit.core.errors.ClusterError` (exit 2) before Ray's own 60 s reconnect limit would end the
process without a word.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kit.core.errors import ClusterError, ConfigError, KitError

ENGINES = ("local", "ray")
EXTRA_HINT = "pip install -e '.[ray]' (the 'ray' extra: ray[data])"
PARTS_PER_WORKER = 4  # tasks per Ray worker of a map (load balance against stragglers)
CONNECT_TIMEOUT = 20.0  # seconds: --ray-connect-timeout's default
LOST_AFTER_MAX = 45.0  # a silent cluster is declared lost before Ray's own 60 s limit ends us
PROBE_EVERY = 1.0  # seconds between the watchdog's probes of the GCS port
GCS_PORT = 6379  # `ray start --head`'s default port
CLIENT_PORT = 10001  # Ray Client's default port (ray://HOST)
TOKEN_FILE = "~/.ray/auth_token"


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
    connect_timeout: float | None = None  # None: CONNECT_TIMEOUT

    def __post_init__(self) -> None:
        if self.name not in ENGINES:
            raise ConfigError("bad_parameter", f"--engine must be one of {', '.join(ENGINES)}")
        ray_opts = self.address or self.workers is not None or self.connect_timeout is not None
        if self.name == "local" and ray_opts:
            raise ConfigError(
                "bad_parameter",
                "--ray-address / --ray-workers / --ray-connect-timeout need --engine ray",
            )
        if self.workers is not None and self.workers < 1:
            raise ConfigError("bad_parameter", f"--ray-workers must be >= 1; got {self.workers}")
        if self.connect_timeout is not None and not self.connect_timeout > 0:
            raise ConfigError(
                "bad_parameter", f"--ray-connect-timeout must be > 0; got {self.connect_timeout}"
            )

    @property
    def is_ray(self) -> bool:
        return self.name == "ray"

    @property
    def timeout(self) -> float:
        """The connect timeout in seconds (``--ray-connect-timeout``, or its default)."""
        return CONNECT_TIMEOUT if self.connect_timeout is None else float(self.connect_timeout)


LOCAL = Engine()


# ----------------------------------------------------------------------------- connecting


@dataclass(frozen=True)
class RayAddress:
    """A parsed ``--ray-address``: ``kind`` is ``gcs`` (HOST:PORT of ``ray start --head``),
    ``client`` (``ray://HOST[:PORT]``, Ray Client), ``auto`` (a cluster ``ray start`` recorded
    on this machine) or ``local`` (always a private Ray of this process)."""

    text: str
    kind: str
    host: str | None = None
    port: int | None = None

    @property
    def probed(self) -> bool:
        """Whether a TCP probe can check it before ``ray.init`` (a host and a port)."""
        return self.host is not None and self.port is not None


def parse_address(text: str) -> RayAddress:
    """``--ray-address`` parsed (pure); a malformed one is a ConfigError naming the forms.

    >>> parse_address("10.0.0.5:6379")
    RayAddress(text='10.0.0.5:6379', kind='gcs', host='10.0.0.5', port=6379)
    >>> parse_address("ray://head").port
    10001
    """
    text = text.strip()
    if text in ("auto", "local"):
        return RayAddress(text, text)
    kind, rest, default = "gcs", text, None
    if text.startswith("ray://"):
        kind, rest, default = "client", text[len("ray://") :], CLIENT_PORT
    rest = rest.rstrip("/")
    host, sep, port_text = rest.rpartition(":")
    if not sep:  # no port
        host, port_text = rest, ""
    host = host.strip("[]")  # [IPv6]:PORT
    port = default
    if port_text:
        port = int(port_text) if port_text.isdigit() else -1
    if not host or port is None or not 0 < port < 65536:
        raise ConfigError(
            "bad_parameter",
            f"--ray-address {text!r} is not a Ray address: expected HOST:PORT (as `ray start "
            f"--head` prints it, port {GCS_PORT} by default), ray://HOST[:{CLIENT_PORT}], "
            "'auto' or 'local'",
        )
    return RayAddress(text, kind, host, port)


def tcp_probe(host: str, port: int, timeout: float) -> str | None:
    """None when something accepts a TCP connection at ``host:port`` within ``timeout``
    seconds; else why not, in words (nothing listening, no answer, unknown host)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except TimeoutError:
        return f"no answer from {host}:{port} within {timeout:g} s (host down or firewalled?)"
    except ConnectionRefusedError:
        return f"nothing is listening at {host}:{port} (connection refused)"
    except socket.gaierror as exc:
        return f"host name {host!r} not found ({exc.strerror or exc})"
    except OSError as exc:
        return f"cannot open a connection to {host}:{port} ({exc.strerror or exc})"


def _exception_text(exc: BaseException) -> str:
    """The messages of ``exc`` and of every exception it was raised from (Ray wraps its
    reason, e.g. an authentication refusal, inside a generic ConnectionError)."""
    parts, seen = [], set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        parts.append(f"{type(cur).__name__}: {cur}")
        cur = cur.__cause__ or cur.__context__
    return "\n".join(parts)


def connect_failure(address: str, reason_text: str, timeout: float) -> ClusterError:
    """The kit's error for a refused ``ray.init`` (pure): Ray's reason classified, with the
    fix. ``reason_text`` is :func:`_exception_text` of Ray's exception."""
    low = reason_text.lower()
    tried = (
        f"tried: a TCP connection to the port (answered), then one ray.init attempt "
        f"(--ray-connect-timeout {timeout:g} s)"
    )
    if "invalidauthtoken" in low or "unauthenticated" in low or "authenticationerror" in low:
        mode = os.environ.get("RAY_AUTH_MODE", "unset")
        why = (
            "the cluster uses token authentication and this process sent no valid token "
            f"(RAY_AUTH_MODE is {mode}). `ray start` turns token authentication on by itself "
            f"when {TOKEN_FILE} exists (any earlier local Ray run writes it)"
        )
        fix = (
            f"run with RAY_AUTH_MODE=token (the token is read from {TOKEN_FILE}, or "
            "RAY_AUTH_TOKEN_PATH / RAY_AUTH_TOKEN; it must be the cluster's token), or start "
            "the cluster with RAY_AUTH_MODE=disabled"
        )
    elif "version" in low and "mismatch" in low:
        why = "the cluster runs another Ray or Python version than this process"
        fix = "install the same ray (and Python) version here as on the cluster"
    elif any(w in low for w in ("timed out", "deadline", "http2", "rpc error", "unavailable")):
        why = "something answers at that port, but not as a Ray cluster (wrong port, or not Ray)"
        fix = f"use the address `ray start --head` printed (port {GCS_PORT} by default)"
    else:
        why = "Ray refused the connection"
        fix = "check the address and that the cluster is up (`ray status --address ADDR`)"
    last = [ln for ln in reason_text.strip().splitlines() if ln.strip()][-1:]
    return ClusterError(
        "ray_unreachable",
        f"cannot connect to the Ray cluster at {address}: {why}",
        details=[tried, f"fix: {fix}", *(f"Ray said: {ln.strip()[:500]}" for ln in last)],
    )


@contextlib.contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    """``os.environ`` with ``values`` set inside the block (Ray reads these at ray.init)."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _init(ray: Any, address: str | None, timeout: float) -> None:
    """``ray.init``, failing fast: a TCP probe of the address first, then one attempt."""
    import kit

    kwargs: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.WARNING,
    }
    env: dict[str, str] = {}
    target, source = address, "--ray-address"
    if not target and os.environ.get("RAY_ADDRESS"):
        target, source = os.environ["RAY_ADDRESS"], "RAY_ADDRESS"
    if target in (None, "", "auto") and (recorded := recorded_cluster()) is not None:
        # what ray.init joins when given no address (docs/scale.md)
        target, source = recorded[0], f"recorded by `ray start` in {recorded[1]}"
    if target:
        parsed = parse_address(target)
        if parsed.probed:
            why = tcp_probe(parsed.host, parsed.port, timeout)  # type: ignore[arg-type]
            if why is not None:
                fix = (
                    "check the host name"
                    if "not found" in why
                    else f"start the cluster (`ray start --head --port={parsed.port}` on "
                    f"{parsed.host}) or pass the address it printed"
                )
                if source.startswith("recorded"):
                    fix = (
                        "that cluster has stopped without `ray stop`: delete that file (or run `ray stop`), "
                        "or pass --ray-address local for a private Ray"
                    )
                raise ClusterError(
                    "ray_unreachable",
                    f"cannot connect to the Ray cluster at {target} ({source}): {why}",
                    details=[
                        f"tried: one TCP connection to the port, --ray-connect-timeout "
                        f"{timeout:g} s",
                        f"fix: {fix} (docs/scale.md)",
                    ],
                )
        if parsed.kind != "local":
            kwargs["runtime_env"] = {"py_modules": [str(Path(kit.__file__).parent)]}
            # one GCS attempt instead of Ray's 20 (node.py reads this at ray.init)
            env["RAY_gcs_server_port_wait_time_s"] = "1"
            env["RAY_gcs_rpc_server_connect_timeout_s"] = str(min(5, max(1, math.ceil(timeout))))
    _tell(_WHERE + (target or "(started by this process)").encode("utf-8", "replace") + b"\n")
    try:
        with _env(env):
            ray.init(address=address or None, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        if ray.is_initialized():
            ray.shutdown()
        where = f"{target} ({source})" if target else "(a new Ray on this machine)"
        raise connect_failure(where, _exception_text(exc), timeout) from None


def recorded_cluster() -> tuple[str, Path] | None:
    """The address of the cluster ``ray start`` recorded on this machine, and the file (Ray's
    ``ray_current_cluster`` under $TMPDIR/ray, else /tmp/ray): ``ray.init`` joins it when
    given no address. None when there is none."""
    try:
        from ray._common.utils import get_ray_address_file

        path = Path(get_ray_address_file(None))
    except (ImportError, AttributeError):  # another Ray layout: the documented default
        path = Path(os.environ.get("TMPDIR") or "/tmp") / "ray" / "ray_current_cluster"
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return (text, path) if text else None


def _gcs_endpoint(ray: Any, address: str | None) -> tuple[str, int] | None:
    """Host and port the watchdog probes: the Ray Client server, else the cluster's GCS."""
    target = address or os.environ.get("RAY_ADDRESS") or ""
    if target.startswith("ray://"):
        p = parse_address(target)
        return p.host, p.port  # type: ignore[return-value]
    try:
        gcs = ray.get_runtime_context().gcs_address
        p = parse_address(gcs)
        return p.host, p.port  # type: ignore[return-value]
    except Exception:  # no GCS address to watch: no watchdog
        return None


@dataclass
class Watchdog:
    """Probes the cluster's GCS port every ``every`` seconds from a daemon thread. When it has
    not answered for ``lost_after`` seconds while the kit is scoring (:func:`busy`), the run
    ends: under the console script (:func:`supervise`) this thread prints the kit's error with
    the last progress report and exits 2 itself -- the main thread may sit in Ray's C++ wait,
    which Ray ends after 60 s with exit 1 and no message; in a library caller it interrupts
    the main thread instead (``ray_session`` turns that into the kit's error)."""

    host: str
    port: int
    lost_after: float
    where: str = ""
    every: float = PROBE_EVERY
    lost: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Watchdog:
        self._thread = threading.Thread(target=self._watch, name="kit-ray-watchdog", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        import _thread

        silent_since: float | None = None
        while not self._stop.wait(self.every):
            why = tcp_probe(self.host, self.port, min(self.every * 2, self.lost_after))
            if why is None or not _busy.is_set():
                silent_since = None if why is None else silent_since
                continue
            now = time.monotonic()
            silent_since = now if silent_since is None else silent_since
            if now - silent_since >= self.lost_after and not self._stop.is_set():
                self.lost = (
                    f"its GCS at {self.host}:{self.port} stopped answering for "
                    f"{self.lost_after:g} s (--ray-connect-timeout): {why}"
                )
                if _progress_fd is not None:  # the console script's child: end it here
                    err = _lost_error(self.where, self.lost)
                    err = ClusterError(err.reason, err.message, details=list(_last_progress))
                    sys.stderr.write(err.render() + "\n")
                    sys.stderr.flush()
                    finished(2)
                    os._exit(2)
                _thread.interrupt_main()
                return


_busy = threading.Event()  # set while the kit waits on Ray for scores or draws


@contextlib.contextmanager
def busy() -> Iterator[None]:
    """Within the block the kit waits on Ray: a lost cluster ends the run (:class:`Watchdog`).
    Outside it (writing outputs) the watchdog only notes the loss, so no output is cut."""
    _busy.set()
    try:
        yield
    finally:
        _busy.clear()


# ----------------------------------------------------------------------------- supervision

# Ray ends a driver process itself (C++ _Exit(1), no Python hook) when the local Ray node it is
# attached to goes away ("The connection to the plasma store is failed. Terminate the
# process."). So the `kit` console script, given --engine ray, forks at its start, before Ray
# (or gRPC, onnxruntime, tokenizers) is imported (kit.cli.main -> :func:`supervise`): the child
# runs the command and the Ray driver; the parent only waits, relays the child's exit status,
# and -- if the child was ended without passing through the kit's exit -- says what happened
# and what was finished (from the child's last progress report), exit 2.
_progress_fd: int | None = None
_EXIT = b"\x00exit "
_WHERE = b"\x00where "


_last_progress: list[str] = []


def report_progress(lines: Sequence[str]) -> None:
    """Note what is finished so far, for the message should the cluster be lost, and tell the
    supervising parent (if any), for its message should Ray end this process."""
    _last_progress[:] = list(lines)
    text = "\x1f".join(ln.replace("\n", " ") for ln in lines)
    _tell(text.encode("utf-8", "replace") + b"\n")


def _tell(data: bytes) -> None:
    if _progress_fd is not None:
        with contextlib.suppress(OSError):
            os.write(_progress_fd, data)


def finished(code: int) -> None:
    """The command is over with exit status ``code`` (called by kit.cli.main): the parent
    exits with it, whatever Ray's shutdown at interpreter exit does to this process."""
    _tell(_EXIT + str(int(code)).encode() + b"\n")


def wants_ray(argv: Sequence[str]) -> bool:
    """Whether a command line selects ``--engine ray`` (pure; before click parses it)."""
    args = list(argv)
    return "--engine=ray" in args or any(
        a == "--engine" and b == "ray" for a, b in itertools.pairwise(args)
    )


def supervise() -> None:
    """Fork (once; the console script with --engine ray): the child returns and runs the
    command; this process waits for it and exits with its status (module comment above)."""
    global _progress_fd
    if _progress_fd is not None or not hasattr(os, "fork"):
        return
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: the command goes on here
        os.close(read)
        _progress_fd = write
        return
    os.close(write)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the child; it decides
    forwarded: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        forwarded.append(signum)
        os.kill(pid, signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    said: int | None = None
    last, where = "", None
    with os.fdopen(read, "rb") as pipe:
        for raw in pipe:
            if raw.startswith(_EXIT):
                said = int(raw[len(_EXIT) :])
            elif raw.startswith(_WHERE):
                where = raw[len(_WHERE) :].decode("utf-8", "replace").strip()
            else:
                last = raw.decode("utf-8", "replace").rstrip("\n")
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if said is not None:  # the command ended through the kit: its status, its message
        os._exit(said)
    if code < 0 and -code in forwarded:  # ended by the signal this process was sent
        os._exit(128 - code)
    how = f"exit status {code}" if code >= 0 else f"signal {-code}"
    err = _lost_error(
        where,
        f"Ray ended this run's driver process ({how}), as it does when the Ray node the "
        "driver is attached to goes away (cluster stopped or killed)",
    )
    err = ClusterError(err.reason, err.message, details=last.split("\x1f") if last else [])
    sys.stderr.write(err.render() + "\n")
    sys.stderr.flush()
    os._exit(2)


def _lost_error(address: str | None, why: str) -> ClusterError:
    where = address or os.environ.get("RAY_ADDRESS") or "(started by this process)"
    return ClusterError("ray_lost", f"the Ray cluster {where} was lost mid-run: {why}")


@contextlib.contextmanager
def ray_session(address: str | None = None, timeout: float = CONNECT_TIMEOUT) -> Iterator[Any]:
    """Within the block, Ray is initialised; yields the ``ray`` module.

    ``address`` None uses the Ray already initialised in this process, else the cluster in
    RAY_ADDRESS, else one that ``ray start`` recorded on this machine (Ray joins it, and it is
    not shut down), else starts a private one; otherwise a cluster address (``ray start
    --head`` prints it; ``auto``; ``local``, always a private one; or ``ray://HOST:10001`` for
    Ray Client). The kit package is shipped to a remote cluster as a runtime_env
    ``py_modules``. This process's connection is shut down on exit. ``timeout``: seconds to
    wait for an answer at connection, and of silence before the cluster is declared lost.

    Errors: :class:`kit.core.errors.ClusterError` ``ray_unreachable`` (cannot connect: the address,
    what was tried, Ray's reason and the fix) or ``ray_lost`` (the cluster stopped answering,
    or a Ray system error, inside the block).
    """
    ray = import_ray()
    started = False
    if not ray.is_initialized():
        _init(ray, address, timeout)
        started = True
    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    endpoint = _gcs_endpoint(ray, address)
    dog = None
    if endpoint is not None:
        where = address or os.environ.get("RAY_ADDRESS") or "(started by this process)"
        dog = Watchdog(endpoint[0], endpoint[1], min(timeout, LOST_AFTER_MAX), where).start()
    lost = False
    try:
        yield ray
    except KeyboardInterrupt:
        if dog is None or dog.lost is None:
            raise
        lost = True
        raise _lost_error(address, dog.lost) from None
    except ray.exceptions.RayError as exc:
        if isinstance(exc, KitError):  # a kit error raised on a worker: already explained
            raise
        said = f"Ray said: {type(exc).__name__}: {str(exc).strip()[:500]}"
        why = dog.lost if dog is not None else None
        if why is None and endpoint is not None:
            silent = tcp_probe(endpoint[0], endpoint[1], min(timeout, LOST_AFTER_MAX))
            why = None if silent is None else f"its GCS stopped answering: {silent}"
        if why is None:  # the cluster answers: a failure inside it (a node, an actor)
            raise ClusterError("ray_failed", f"Ray failed mid-run; {said}") from None
        lost = True
        raise _lost_error(address, f"{why}; {said}") from None
    finally:
        if dog is not None:
            dog.stop()
        if started and not lost:
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
        with busy():
            fn_ref = ray.put(fn)
            return list(ray.get([remote.remote(fn_ref, x) for x in items]))


@contextlib.contextmanager
def mapper(engine: Engine = LOCAL) -> Iterator[SerialMap | RayMap]:
    """The mapper of ``engine``: :class:`SerialMap`, or a :class:`RayMap` on its cluster."""
    if not engine.is_ray:
        yield SerialMap()
        return
    with ray_session(engine.address, engine.timeout) as ray:
        yield RayMap(ray, cluster_workers(ray, engine.workers))


def split(n: int, parts: int) -> list[range]:
    """``range(n)`` in at most ``parts`` contiguous, non-empty, near-equal pieces."""
    parts = max(1, min(parts, n))
    bounds = [n * i // parts for i in range(parts + 1)]
    return [range(a, b) for a, b in itertools.pairwise(bounds) if b > a]
