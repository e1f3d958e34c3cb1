"""Every command explains itself, has an example, and is documented in README.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from kit.cli import cli
from kit.commands import COMMANDS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    ctx = click.Context(group)
    out = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        path = (*prefix, name)
        if isinstance(cmd, click.Group):
            out.extend(_leaves(cmd, path))
        else:
            out.append(path)
    return out


def test_top_level_help() -> None:
    res = CliRunner().invoke(cli, ["--help"])
    assert res.exit_code == 0
    assert "Exit status" in res.output


def test_every_command_has_help_with_example() -> None:
    runner = CliRunner()
    leaves = _leaves(cli)
    assert len(leaves) >= 10
    for path in leaves:
        res = runner.invoke(cli, [*path, "--help"])
        assert res.exit_code == 0, path
        assert "Example" in res.output, f"`kit {' '.join(path)} --help` has no example"


def test_every_group_is_in_readme() -> None:
    for name in cli.list_commands(click.Context(cli)):
        assert f"kit {name}" in README, f"`kit {name}` is not documented in README.md"


def test_unknown_command_is_exit_2() -> None:
    res = CliRunner().invoke(cli, ["no-such-command"])
    assert res.exit_code == 2


def test_version() -> None:
    res = CliRunner().invoke(cli, ["--version"])
    assert res.exit_code == 0 and "kit" in res.output


def test_lazy_summaries_are_the_groups_own_first_lines() -> None:
    """`kit --help` lists groups without importing them: its lines must be the real ones."""
    ctx = click.Context(cli)
    for name, lazy in COMMANDS.items():
        cmd = cli.get_command(ctx, name)
        assert cmd is not None and cmd.name == name
        first = " ".join((cmd.help or "").split("\n\n")[0].split())
        assert lazy.summary == first, name


def test_help_and_version_import_no_command_group() -> None:
    code = (
        "import sys\n"
        "from kit.cli import cli\n"
        "for args in (['--help'], ['--version']):\n"
        "    try:\n"
        "        cli(args, prog_name='kit')\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = sorted(m for m in sys.modules if m.startswith('kit.commands.') or m in "
        "('pandas', 'scipy', 'onnxruntime', 'duckdb'))\n"
        "print('HEAVY', heavy)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in res.stdout, res.stdout[-500:]
