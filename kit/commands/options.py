"""The rules every option follows, and the options shared by nearly every command group.

The names come from one vocabulary (:mod:`kit.commands.vocabulary`, docs/vocabulary.md): one
option name per concept across every group. An old spelling is kept for one release as a hidden
*deprecated alias* (:func:`deprecated_alias`): it still works and prints a warning on stderr
naming the new spelling. Defaults that are paths inside the checkout are shown relative to it
(:func:`shown`), never as this machine's absolute path.

Here too: ``--format`` and how a table is printed or written (:func:`format_for`,
:func:`echo_table`), and the checkout folders (``--raw``, ``--verifier-loso``, ``--skip``). The
option blocks of one family of commands live beside this module: verifier scoring, score store,
engine and model endpoint in :mod:`kit.commands.scoring_options`; labelled score tables,
bootstrap and the guard's output files in :mod:`kit.commands.evaluation_options`; checklists,
runs files and citation checks in :mod:`kit.commands.grading_options`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from kit.core.tables import FORMATS
from kit.registry.fetch import DEFAULT_DEST
from kit.registry.sources import REPO_ROOT, checkout_relative

F = TypeVar("F", bound=Callable[..., Any])

SUFFIX_FORMAT = {".csv": "csv", ".md": "markdown", ".tex": "latex", ".json": "json"}
"""The table format a file suffix asks for (``--out FILE`` without ``--format``)."""


def shown(path: Path) -> str:
    """How a default path is shown in ``--help``: relative to the kit's checkout when inside it
    (``data/raw``, not ``/home/me/kit/data/raw``), else as given."""
    rel = checkout_relative(path)
    return rel if rel != "." else "the kit's checkout"


def checkout_path(relative: str) -> Path:
    """A default path inside the checkout, absolute so that it works from any folder."""
    return REPO_ROOT / relative


class PathDefault(click.Option):
    """An option whose default path is shown relative to the checkout in ``--help``
    (``[default: data/raw]``); the default itself stays absolute, so it works from any folder.
    Use ``cls=PathDefault, show_default=True`` on every option defaulting to a checkout path."""

    def get_help_extra(self, ctx: click.Context) -> Any:
        extra = super().get_help_extra(ctx)
        if "default" in extra and isinstance(self.default, Path):
            extra["default"] = shown(self.default)
        return extra


# -- deprecated spellings ---------------------------------------------------------------------


def warn_deprecated(old: str, new: str) -> None:
    """One line on stderr: ``old`` still works in this release; use ``new``."""
    click.echo(
        f"warning: {old} is deprecated and will be removed in the next release; use {new} "
        "(docs/vocabulary.md)",
        err=True,
    )


class DeprecatedOption(click.Option):
    """A hidden option kept for one release under an old name; ``replacement`` says what to use
    instead. :mod:`kit.commands.vocabulary` lists every one (a test checks both agree)."""

    def __init__(self, *args: Any, replacement: str, **kwargs: Any) -> None:
        kwargs.setdefault("hidden", True)
        kwargs.setdefault("help", f"Deprecated: use {replacement}.")
        super().__init__(*args, **kwargs)
        self.replacement = replacement


def deprecated_alias(
    old: str,
    new: str,
    dest: str,
    *,
    multiple: bool = False,
    transform: Callable[[Any], Any] | None = None,
) -> Callable[[F], F]:
    """Accept ``old`` (e.g. ``--db``) as a deprecated spelling of the option ``new``
    (``--catalog``) whose parameter is ``dest``.

    The value given under ``old`` goes through ``new``'s own type and callback (after
    ``transform``, for an old spelling whose values meant something else, e.g. catch targets
    1 - alpha); a warning goes to stderr; giving both is a usage error (exit 2). Place it among
    the command's options, above any ``@sealed_*`` decorator (they then record the new
    parameter). ``new`` must not be required (click would refuse the command line before the
    old spelling is read).
    """
    alias_dest = "_deprecated_" + old.lstrip("-").replace("-", "_")

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            raw = kwargs.pop(alias_dest, None)
            if raw is None or raw == ():
                return func(*args, **kwargs)
            ctx = click.get_current_context()
            source = ctx.get_parameter_source(dest)
            if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
                raise click.UsageError(f"give {new} or its old spelling {old}, not both", ctx)
            warn_deprecated(old, new)
            param = next(p for p in ctx.command.params if p.name == dest)
            value = param.process_value(ctx, transform(raw) if transform else raw)
            ctx.params[dest] = kwargs[dest] = value
            return func(*args, **kwargs)

        option = click.option(
            old,
            alias_dest,
            cls=DeprecatedOption,
            replacement=new,
            multiple=multiple,
            default=None,
            expose_value=True,
        )
        return option(wrapper)  # type: ignore[return-value]

    return decorate


def deprecated_command(cmd: click.Command, old: str, new: str) -> click.Command:
    """``cmd`` under an old name ``old`` for one release: hidden from ``--help``, same options,
    a warning on stderr naming ``new`` (e.g. ``kit corpus build``) before it runs."""
    callback = cmd.callback
    assert callback is not None

    @functools.wraps(callback)
    def warned(*args: Any, **kwargs: Any) -> Any:
        warn_deprecated(f"`{old}`", f"`{new}`")
        return callback(*args, **kwargs)

    return click.Command(
        old.split()[-1],
        params=cmd.params,
        callback=warned,
        help=f"Deprecated: use `{new}` (the same command).\n\n{cmd.help or ''}",
        hidden=True,
        context_settings=cmd.context_settings,
    )


# -- shared options ---------------------------------------------------------------------------

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Output format on stdout.",
)

table_out_format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="Output format [table on screen; from --out's suffix when writing a file, else csv].",
)
"""``--format`` of a command that prints a table or writes it with ``--out FILE``."""


def format_for(fmt: str | None, out: Path | None) -> str:
    """The format :data:`table_out_format_option` means: as given, else table on screen, else
    the one ``--out``'s suffix names, else csv."""
    if fmt is not None:
        return fmt
    if out is None:
        return "table"
    return SUFFIX_FORMAT.get(out.suffix.lower(), "csv")


raw_option = click.option(
    "--raw",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_DEST,
    show_default=True,
    cls=PathDefault,
    help="The fetched registry folder (kit registry fetch).",
)

verifier_loso_option = click.option(
    "--verifier-loso",
    "verifier_loso",
    type=click.Path(file_okay=False, path_type=Path),
    default=checkout_path("data/verifier-loso"),
    show_default=True,
    cls=PathDefault,
    help="Folder of leave-one-source-out cards (SOURCE/card.json, from `make reproduce-loso`): read "
    "by `kit guard card` (shown beside a kit-trained card, each marked with whether it was "
    "trained by the same recipe) and by reproductions that declare `needs: [verifier_loso]`.",
)


skip_option = click.option(
    "--skip",
    "skip",
    multiple=True,
    metavar="NAME",
    help="Leave out this reproduction (repeatable; names as `kit reproduce list` prints them). "
    "The DVC stage `tables` skips guard_verifier_loso, which the stage `tables-loso` builds "
    "from the leave-one-source-out cards.",
)


table_file_option = click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the table here (atomically) instead of printing it.",
)
"""``--out FILE`` of a grade command that prints one table or writes it."""


def echo_table(
    frame: Any,
    schema: str,
    fmt: str | None,
    out: Path | None,
    title: str,
    *,
    where: str = "<output>",
    note_err: bool = False,
) -> None:
    """Validate ``frame`` and print it (no ``out``) or write it to ``out`` in the format
    :func:`format_for` picks (kit.core.tables.emit), echoing ``"<title>: <n> rows -> <out>"``
    (to stderr with ``note_err``)."""
    from kit.core.tables import emit

    text = emit(frame, schema, format_for(fmt, out), out, title, where)
    if out is None:
        click.echo(text, nl=False)
    else:
        click.echo(text, err=note_err)
