"""Run the reproduction inside the kit's container image through the Docker Engine API.

The Docker SDK for Python (``docker``, optional: ``pip install docker``) talks to any engine that
serves the Docker API: Docker itself, or podman (``podman system service --time=0
unix:///run/podman/podman.sock``; point ``DOCKER_HOST`` or ``--host`` at that socket). The
container runs offline (``network_mode=none``) with the registry mirror mounted read-only at
``/mirror`` -- the data is never part of the image -- and optionally an output folder mounted on
``/out`` that receives ``data/tables`` when the run succeeds.

:func:`run_spec` (what to run) is pure; :func:`run` hands it to a client.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kit.core.errors import ConfigError

IMAGES = {"cpu": "localhost/litaudit-kit:cpu", "gpu": "localhost/litaudit-kit:gpu"}
APP_DIR = "/home/kit/app"
PODMAN_SOCKET = "unix:///run/podman/podman.sock"


@dataclass(frozen=True)
class RunSpec:
    """Arguments for ``client.containers.run`` (Docker SDK), built without touching an engine."""

    image: str
    command: list[str]
    entrypoint: list[str] | None  # None: the image's own (make)
    volumes: dict[str, dict[str, str]]
    network_mode: str = "none"
    ulimits: tuple[tuple[str, int, int], ...] = (("nofile", 1024, 1024), ("nproc", 4096, 4096))
    gpu: bool = False
    environment: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunResult:
    exit_code: int
    logs: str


def run_spec(
    kind: str,
    mirror: Path,
    target: str = "reproduce",
    out: Path | None = None,
    image: str | None = None,
) -> RunSpec:
    """What to run: ``make TARGET`` in the ``kind`` image with the mirror mounted. Pure."""
    if kind not in IMAGES:
        raise ConfigError(
            "unknown_image", f"container kind must be one of {', '.join(IMAGES)}; got {kind!r}"
        )
    volumes = {str(Path(mirror).resolve()): {"bind": "/mirror", "mode": "ro"}}
    command, entrypoint = [target], None
    if out is not None:
        # not mounted on data/tables itself: `dvc repro` deletes a stage's outputs first
        volumes[str(Path(out).resolve())] = {"bind": "/out", "mode": "rw"}
        command = [f"make {shlex.quote(target)} && cp -r data/tables/. /out/"]
        entrypoint = ["bash", "-c"]
    return RunSpec(
        image=image or IMAGES[kind],
        command=command,
        entrypoint=entrypoint,
        volumes=volumes,
        gpu=kind == "gpu",
        environment={"KIT_MIRROR": "/mirror"},
    )


def client(host: str | None = None) -> Any:
    """A Docker SDK client for ``host`` (default ``$DOCKER_HOST``, else podman's socket)."""
    try:
        import docker  # optional dependency
    except ImportError:
        raise ConfigError(
            "missing_dependency",
            "the Docker SDK for Python is not installed (pip install 'docker>=7.1,<8')",
        ) from None
    base_url = host or os.environ.get("DOCKER_HOST") or PODMAN_SOCKET
    try:
        cli = docker.DockerClient(base_url=base_url)
        cli.ping()
    except Exception as exc:  # the SDK raises many types; all mean "no engine there"
        raise ConfigError(
            "no_engine",
            f"no Docker API at {base_url} ({exc}); start one with "
            f"`podman system service --time=0 {PODMAN_SOCKET}` or set DOCKER_HOST",
        ) from None
    return cli


def run(spec: RunSpec, engine: Any) -> RunResult:
    """Run ``spec`` on a Docker SDK client (or anything with its ``containers.run`` shape),
    wait for it, and return its exit code and logs; the container is removed afterwards."""
    kwargs: dict[str, Any] = {
        "command": spec.command,
        "volumes": spec.volumes,
        "network_mode": spec.network_mode,
        "environment": spec.environment,
        "detach": True,
    }
    if spec.entrypoint is not None:
        kwargs["entrypoint"] = spec.entrypoint
    try:
        from docker.types import DeviceRequest, Ulimit

        kwargs["ulimits"] = [Ulimit(name=n, soft=s, hard=h) for n, s, h in spec.ulimits]
        if spec.gpu:
            kwargs["device_requests"] = [DeviceRequest(count=-1, capabilities=[["gpu"]])]
    except ImportError:  # a stand-in engine in tests; plain dicts carry the same fields
        kwargs["ulimits"] = [{"Name": n, "Soft": s, "Hard": h} for n, s, h in spec.ulimits]
        if spec.gpu:
            kwargs["device_requests"] = [{"Count": -1, "Capabilities": [["gpu"]]}]
    box = engine.containers.run(spec.image, **kwargs)
    try:
        status = box.wait()
        logs = box.logs().decode("utf-8", errors="replace")
    finally:
        box.remove(force=True)
    code = int(status.get("StatusCode", 1)) if isinstance(status, dict) else int(status)
    return RunResult(code, logs)


def run_reproduction(
    kind: str,
    mirror: Path | None,
    target: str = "reproduce",
    out: Path | None = None,
    image: str | None = None,
    host: str | None = None,
) -> tuple[RunResult, str]:
    """`kit release container KIND`: run ``make TARGET`` in the KIND image with the registry
    mirror (``mirror``, else $KIT_MIRROR or ../shared/registry) mounted read-only; the result
    and the line that reports it."""
    from kit.registry.fetch import default_mirror

    mirror = mirror if mirror is not None else default_mirror()
    if mirror is None:
        raise ConfigError("no_mirror", "no registry mirror: pass --mirror or set KIT_MIRROR")
    spec = run_spec(kind, mirror, target=target, out=out, image=image)
    result = run(spec, client(host))
    return result, f"container {spec.image}: make {target} exited {result.exit_code}"
