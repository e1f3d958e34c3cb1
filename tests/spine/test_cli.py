"""Every command explains itself, has an example, and is documented in README.md."""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner

from kit.cli import cli

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for name, cmd in sorted(group.commands.items()):
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
    for name in cli.commands:
        assert f"kit {name}" in README, f"`kit {name}` is not documented in README.md"


def test_unknown_command_is_exit_2() -> None:
    res = CliRunner().invoke(cli, ["no-such-command"])
    assert res.exit_code == 2


def test_version() -> None:
    res = CliRunner().invoke(cli, ["--version"])
    assert res.exit_code == 0 and "kit" in res.output
