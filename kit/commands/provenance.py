"""What a sealed output records of the command that wrote it (:mod:`kit.commands.sealed`).

:func:`receipt_body` is the receipt's ``inputs`` (every input file's path and sha256) and
``parameters``; :func:`command_line` the command as a user would retype it; :func:`keep_context`
writes ``context.json`` (command line, kit version, inputs, parameters) and the inputs a folder
keeps, so a later reader needs no input re-supplied.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from kit.core import atomic
from kit.core.hashing import file_sha256
from kit.registry.sources import checkout_relative

CONTEXT_FILE = "context.json"


def receipt_body(kwargs: dict[str, Any], *outs: str) -> dict[str, Any]:
    """What a receipt records of the command's arguments (``outs`` left out): every input file's
    path and sha256, every other parameter (paths relative to the checkout, floats by repr)."""
    inputs: dict[str, Any] = {}
    params: dict[str, Any] = {}
    for key, value in sorted(kwargs.items()):
        if key in outs:
            continue
        if isinstance(value, Path):
            if value.is_file():
                inputs[key] = {"path": checkout_relative(value), "sha256": file_sha256(value)}
            else:
                params[key] = checkout_relative(value)
        elif value is None or isinstance(value, str | int | bool):
            params[key] = value
        elif isinstance(value, float):
            params[key] = repr(value)
    return {"inputs": inputs, "parameters": params}


def command_line(
    ctx: click.Context | None = None, placeholders: Mapping[str, str] | None = None
) -> str:
    """The command as a user would retype it: ``kit GROUP CMD ARGS`` with every parameter given
    on the command line (options left at their default are omitted), shell-quoted;
    ``placeholders`` writes a parameter's value as a fixed word (``{"out_dir": "OUT"}``)."""
    ctx = ctx or click.get_current_context()
    placeholders = placeholders or {}
    names = [c.info_name or "" for c in reversed(_chain(ctx))]
    words = ["kit", *names[1:]]
    for param in ctx.command.params:
        name = param.name or ""
        value = placeholders.get(name, ctx.params.get(name))
        if isinstance(param, click.Argument):
            words += [str(v) for v in (value if param.multiple else (value,)) if v is not None]
            continue
        source = ctx.get_parameter_source(name)
        if source is None or source.name == "DEFAULT" or not isinstance(param, click.Option):
            continue
        if param.is_flag and not param.secondary_opts and param.flag_value is True:
            if value:
                words.append(param.opts[0])
        elif param.is_flag and isinstance(value, bool):
            words.append(param.opts[0] if value else param.secondary_opts[0])
        else:
            for v in value if param.multiple else (value,):
                words += [param.opts[0], str(v)]
    return " ".join(shlex.quote(w) for w in words)


def _chain(ctx: click.Context) -> list[click.Context]:
    out: list[click.Context] = []
    cur: click.Context | None = ctx
    while cur is not None:
        out.append(cur)
        cur = cur.parent
    return out


def keep_context(
    stage: Path, body: dict[str, Any], kwargs: dict[str, Any], keep: Mapping[str, str], out: str
) -> None:
    """Write ``context.json`` and the copies named in ``keep`` into the staged folder; the
    output folder is written OUT in the command line, so the folder's bytes do not depend on
    where it was written."""
    from kit import __version__

    kept: dict[str, str] = {}
    for param, name in sorted(keep.items()):
        src = kwargs.get(param)
        if isinstance(src, Path) and src.is_file():
            atomic.write_bytes(stage / name, src.read_bytes())
            kept[param] = name
    try:
        line = command_line(placeholders={out: "OUT"})
    except RuntimeError:  # called outside click (a library caller): no command line
        line = None
    record = {
        "command": line,
        "command_note": "OUT is this folder",
        "kit_version": __version__,
        "inputs": body["inputs"],
        "parameters": body["parameters"],
        "kept": kept,
    }
    atomic.write_text(stage / CONTEXT_FILE, json.dumps(record, indent=2, sort_keys=True) + "\n")
