"""The `kit` command line: thin. Parse, call one library function, print, exit.

Exit status: 0 success; 1 a check ran and found a failure (e.g. a board cell that does not
reproduce); 2 bad input or configuration (the message names file, row, column and what was
expected); 3 an internal error (a bug: please file an issue). Each command group lives in ``kit/commands/<group>.py``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from kit import __version__
from kit.commands import COMMANDS
from kit.core.errors import KitError

INTERNAL_ERROR = 3


class KitGroup(click.Group):
    """Maps every :class:`KitError` to one message on stderr and exit status 2, and -- the last
    line of defence -- any other exception to an *internal error*, exit status 3, with a pointer
    to file an issue instead of a raw traceback (``KIT_DEBUG=1`` shows the traceback). Loads each
    command group on first use (:data:`kit.commands.COMMANDS`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.add_command(COMMANDS[cmd_name].load(), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the lazy table's summaries, without importing any group."""
        rows = [
            (
                name,
                COMMANDS[name].summary
                if name in COMMANDS
                else self.commands[name].get_short_help_str(),
            )
            for name in self.list_commands(ctx)
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KitError as err:
            click.echo(err.render(), err=True)
            ctx.exit(err.exit_code)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:
            if os.environ.get("KIT_DEBUG"):
                raise
            where = " ".join(["kit", *sys.argv[1:]])[:300]
            click.echo(
                f"internal error [{type(exc).__name__}]: {str(exc).splitlines()[0] if str(exc) else ''}"
                f"\n  this is a bug in the kit, not in your input: please file an issue "
                f"with the command line ({where}) and the output of KIT_DEBUG=1 for the traceback",
                err=True,
            )
            ctx.exit(INTERNAL_ERROR)


@click.group(cls=KitGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kit")
def cli() -> None:
    """LitAudit kit: audit literature-review agents, reproduce published tables, verify releases.

    \b
    Start here:
      kit registry fetch          fetch every registered source (sha256-checked) into data/raw
      kit db build                build the DuckDB catalog data/prepared/catalog.duckdb
      kit query "SELECT count(*) FROM pubmedqa_items"
      kit board check             check the transcribed published board against itself
      kit reproduce run           rebuild every published table into data/tables
      kit audit RUNS --out DIR    audit an agent's runs end to end: one report
      kit certify SCORES --design DESIGN --out DIR
                                  certify every pair of a score table (A beats B at alpha)

    Default paths (data/raw, data/tables, ...) are inside the kit's checkout, from whatever
    folder kit runs. One option name per concept in every command: docs/vocabulary.md.

    Exit status: 0 ok, 1 a check failed, 2 bad input or configuration, 3 internal error.
    """


def main() -> None:
    """Console-script entry point. With ``--engine ray`` the process that runs Ray's driver is
    supervised (:func:`kit.core.parallel.supervise`): a Ray that ends it still gets a kit error."""
    import kit.core.parallel

    if kit.core.parallel.wants_ray(sys.argv[1:]):
        kit.core.parallel.supervise()
    try:
        cli(prog_name="kit")
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        kit.core.parallel.finished(code)
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
