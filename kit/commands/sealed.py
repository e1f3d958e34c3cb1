"""One decorator for commands that write a folder of outputs: staged, sealed, swapped in as a set.

``@sealed_output("out_dir", kind="certify")`` runs the command with its ``out_dir`` argument
pointing at a temp folder beside the target (:func:`kit.atomic.staged_dir`). When the command
returns, every file it wrote is sealed in ``receipts/<kind>.receipt.json`` (with the sha256 of
every input file it was given and its parameters) and the folder is swapped into place; when it
raises (a refused parameter, bad input) or is killed, the earlier outputs stay exactly as they
were. It replaces only a folder that is new, empty, or was written by the same command.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from kit import atomic
from kit.errors import ConfigError
from kit.hashing import file_sha256
from kit.release import receipts

F = TypeVar("F", bound=Callable[..., Any])


def _check_replaceable(target: Path, kind: str) -> None:
    if not target.exists():
        return
    if not target.is_dir():
        raise ConfigError("bad_out", f"--out {target} exists and is not a folder")
    own = target / receipts.RECEIPTS_DIR / f"{kind}{receipts.SUFFIX}"
    if any(target.iterdir()) and not own.is_file():
        raise ConfigError(
            "bad_out",
            f"--out {target} is a non-empty folder not written by `kit {kind}` (no {own}); "
            "it would be replaced as a whole: choose a new or empty folder",
        )


def _record(kwargs: dict[str, Any], out_param: str) -> dict[str, Any]:
    inputs: dict[str, Any] = {}
    params: dict[str, Any] = {}
    for key, value in sorted(kwargs.items()):
        if key == out_param:
            continue
        if isinstance(value, Path):
            if value.is_file():
                inputs[key] = {"path": str(value), "sha256": file_sha256(value)}
            else:
                params[key] = str(value)
        elif value is None or isinstance(value, str | int | bool):
            params[key] = value
        elif isinstance(value, float):
            params[key] = repr(value)
    return {"inputs": inputs, "parameters": params}


def sealed_output(out_param: str, kind: str) -> Callable[[F], F]:
    """Decorate a click command whose ``out_param`` is its output folder (see module doc)."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            target = Path(kwargs[out_param])
            _check_replaceable(target, kind)
            body = _record(kwargs, out_param)
            with atomic.staged_dir(target) as stage:
                kwargs[out_param] = stage
                result = func(*args, **kwargs)
                files = [
                    p.relative_to(stage).as_posix()
                    for p in sorted(stage.rglob("*"))
                    if p.is_file() and not p.name.endswith(receipts.SUFFIX)
                ]
                receipts.seal_outputs(stage, kind, kind, None, files, body=body)
            click.echo(
                f"wrote {target}: {len(files)} files, sealed in "
                f"{receipts.RECEIPTS_DIR}/{kind}{receipts.SUFFIX} (check: kit verify receipts "
                f"{target})"
            )
            return result

        return wrapper  # type: ignore[return-value]

    return decorate
