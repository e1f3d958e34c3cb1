"""One decorator for commands that write a folder of outputs: staged, sealed, swapped in as a set.

``@sealed_output("out_dir", kind="certify")`` runs the command with its ``out_dir`` argument
pointing at a temp folder beside the target (:func:`kit.core.atomic.staged_dir`). When the command
returns, every file it wrote is sealed in ``receipts/<kind>.receipt.json`` (with the sha256 of
every input file it was given and its parameters) and the folder is swapped into place; when it
raises (a refused parameter, bad input) or is killed, the earlier outputs stay exactly as they
were. It replaces only a folder that is new, empty, or was written by the same command.
With ``context=True`` the folder also keeps what produced it, sealed with the rest:
``context.json`` (the command line, kit version, every input file's path and sha256, the
parameters) and a copy of each input named in ``keep`` (``{"design_path": "design.yaml"}``), so
a later reader (``kit report board DIR``) needs no input re-supplied.

``@sealed_file("out", kind="board check", companions=(".json",))`` is the rule for commands that
write single files (``--out FILE``): after the command wrote ``FILE`` (also when it then exits 1,
"checked and found a difference"), ``FILE`` and the companions it wrote beside it
(``FILE.with_suffix(s)``, or ``FILE`` + ``s`` for the names in ``appended``) are sealed in the
sidecar ``FILE.receipt.json``, with the same inputs and parameters; further file parameters named
in ``also`` get a sidecar each. ``resolve`` names ``FILE`` when ``--out`` is a prefix or a folder
(``kit guard evaluate --out PREFIX`` writes ``PREFIX.csv`` and its ``.md``/``.tex``). Check one
with ``kit verify receipts FILE``.

Card folders (``kit guard build-verifier / train / adapt / import-verifier``) go through
``sealed_output`` with ``legacy="card.json"``: a card folder written before cards were sealed
(card.json, no receipt) may be replaced too; verifier loaders read only the files a card names,
so its ``receipts/`` folder changes nothing they load.

Receipts record paths as :func:`kit.registry.sources.checkout_relative` writes them (relative to
the kit's checkout when inside it), so a folder's bytes do not depend on where the checkout lies. Files
named in ``apart`` (a card's ``build.json``: this build's seconds, speed and load, a reading of
the machine) are sealed in their own sidecar (``build.json.receipt.json``) instead of the
folder's receipt, so the folder's receipt — locked by DVC with the weights — is the same on
every build of the same weights.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from kit.commands.provenance import keep_context, receipt_body
from kit.core import atomic, receipts
from kit.core.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


def _check_replaceable(target: Path, kind: str, legacy: str | None = None) -> None:
    if not target.exists():
        return
    if not target.is_dir():
        raise ConfigError("bad_out", f"--out {target} exists and is not a folder")
    own = target / receipts.RECEIPTS_DIR / f"{kind}{receipts.SUFFIX}"
    unsealed_legacy = (
        legacy is not None
        and (target / legacy).is_file()
        and not any(target.rglob(f"*{receipts.SUFFIX}"))
    )
    if any(target.iterdir()) and not own.is_file() and not unsealed_legacy:
        raise ConfigError(
            "bad_out",
            f"--out {target} is a non-empty folder not written by `kit {kind}` (no {own}); "
            "it would be replaced as a whole: choose a new or empty folder",
        )


def _exit_code(exc: SystemExit | click.exceptions.Exit) -> object:
    return exc.code if isinstance(exc, SystemExit) else exc.exit_code


def sealed_output(
    out_param: str,
    kind: str,
    context: bool = False,
    keep: Mapping[str, str] | None = None,
    legacy: str | None = None,
    apart: tuple[str, ...] = (),
) -> Callable[[F], F]:
    """Decorate a click command whose ``out_param`` is its output folder (see module doc).

    ``context`` / ``keep``: also keep ``context.json`` and copies of those inputs.
    ``apart``: files (relative to the folder) sealed each in its own sidecar, not in the folder's
    receipt (machine readings that must not move the folder's locked hash).
    ``legacy``: a file whose presence (with no receipt anywhere in the folder) marks a folder
    this command wrote before its outputs were sealed, which it may replace as a whole.
    """

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            target = Path(kwargs[out_param])
            _check_replaceable(target, kind, legacy)
            body = receipt_body(kwargs, out_param)
            differs: BaseException | None = None
            with atomic.staged_dir(target) as stage:
                kwargs[out_param] = stage
                try:
                    result = func(*args, **kwargs)
                except (SystemExit, click.exceptions.Exit) as exc:
                    if _exit_code(exc) != 1:
                        raise
                    differs, result = exc, None  # checked and found a difference: keep, sealed
                if context:
                    keep_context(stage, body, kwargs, keep or {}, out_param)
                files = [
                    p.relative_to(stage).as_posix()
                    for p in sorted(stage.rglob("*"))
                    if p.is_file() and not p.name.endswith(receipts.SUFFIX)
                ]
                for rel in apart:
                    if rel in files:
                        receipts.seal_file(stage / rel, kind, body=body)
                files = [f for f in files if f not in apart]
                receipts.seal_outputs(stage, kind, kind, None, files, body=body)
            click.echo(
                f"wrote {target}: {len(files)} files, sealed in "
                f"{receipts.RECEIPTS_DIR}/{kind}{receipts.SUFFIX} (check: kit verify receipts "
                f"{target})"
            )
            if differs is not None:
                raise differs
            return result

        return wrapper  # type: ignore[return-value]

    return decorate


def _written(path: Path, before: int | None) -> bool:
    """True when ``path`` exists and is not the file that was there before the command ran."""
    try:
        return path.is_file() and os.stat(path).st_mtime_ns != before
    except OSError:
        return False


def _stamp(path: Path | None) -> int | None:
    try:
        return None if path is None else os.stat(path).st_mtime_ns
    except OSError:
        return None


def sealed_file(
    out_param: str,
    kind: str,
    companions: tuple[str, ...] = (),
    also: tuple[str, ...] = (),
    default: Callable[[dict[str, Any]], Path] | None = None,
    appended: tuple[str, ...] = (),
    resolve: Callable[[dict[str, Any]], Path] | None = None,
) -> Callable[[F], F]:
    """Decorate a click command writing single files; see the module doc for the rule.

    ``default`` gives the file the command writes when ``out_param`` is not given (None: the
    command then prints and nothing is sealed). ``companions`` are suffixes replacing FILE's
    (``FILE.with_suffix(s)``), ``appended`` suffixes added to its name (``FILE.name + s``).
    ``resolve`` maps the command's arguments to FILE when ``out_param`` is not the file itself
    (a prefix or a folder); it is called before the command runs.
    """

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get(out_param) is None and default is not None:
                kwargs[out_param] = default(kwargs)
            names = (out_param, *also)
            targets = {n: Path(kwargs[n]) for n in names if kwargs.get(n) is not None}
            if not targets:
                return func(*args, **kwargs)
            if resolve is not None and out_param in targets:
                targets[out_param] = Path(resolve(kwargs))
            for n, t in targets.items():
                if t.name.endswith(receipts.SUFFIX):
                    raise ConfigError("bad_out", f"--{n.replace('_', '-')} {t} names a receipt")
            main = targets.get(out_param)
            extra = (
                [main.with_suffix(c) for c in companions]
                + [main.with_name(main.name + a) for a in appended]
                if main is not None
                else []
            )
            before = {p: _stamp(p) for p in (*targets.values(), *extra)}
            body = receipt_body(kwargs, *names)
            try:
                result = func(*args, **kwargs)
            except (SystemExit, click.exceptions.Exit) as exc:
                if (
                    _exit_code(exc) == 1
                ):  # checked and found a difference: the outputs stand, sealed
                    _seal_written(targets, out_param, extra, before, kind, body)
                raise
            _seal_written(targets, out_param, extra, before, kind, body)
            return result

        return wrapper  # type: ignore[return-value]

    return decorate


def _seal_written(
    targets: dict[str, Path],
    out_param: str,
    extra: list[Path],
    before: dict[Path, int | None],
    kind: str,
    body: dict[str, Any],
) -> None:
    for name, path in targets.items():
        if not _written(path, before[path]):
            continue
        side = [c for c in extra if _written(c, before[c])] if name == out_param else []
        receipts.seal_file(path, kind, body, side)
        click.echo(
            f"sealed {path} in {receipts.sidecar(path).name} (check: kit verify receipts {path})",
            err=True,
        )
