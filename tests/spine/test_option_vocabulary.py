"""One vocabulary across the whole command tree (kit/commands/vocabulary.py, docs/vocabulary.md).

Walks every command of ``kit`` (the lazy groups of kit/commands/__init__.py resolved) and fails
on: an option without help text, an argument its command's help does not describe, an option
name outside the vocabulary, an old spelling that is not a declared deprecated alias (or a
declared one that is missing), two spellings of one parameter, a ``--format`` offering another
choice set than kit.core.tables.FORMATS, and a rendered ``--help`` that shows a default as an
absolute path or names this machine's checkout or home folder.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.commands.options import DeprecatedOption
from kit.commands.vocabulary import (
    ALIASES,
    COMMAND_ALIASES,
    VOCABULARY,
    canonical_names,
    markdown,
)
from kit.core.tables import FORMATS

ROOT = Path(__file__).resolve().parents[2]


def _tree() -> list[tuple[str, click.Command]]:
    """(path, command) for every group and command under ``kit``, lazy groups loaded."""
    out: list[tuple[str, click.Command]] = []

    def walk(cmd: click.Command, path: tuple[str, ...], ctx: click.Context) -> None:
        out.append((" ".join(path), cmd))
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None, f"kit {' '.join((*path, name))} does not load"
                walk(sub, (*path, name), click.Context(sub, info_name=name, parent=ctx))

    walk(cli, (), click.Context(cli, info_name="kit"))
    return out


TREE = _tree()
LEAVES = [(p, c) for p, c in TREE if p and not isinstance(c, click.Group)]


def _options(visible: bool = True) -> list[tuple[str, click.Option]]:
    return [
        (path, p)
        for path, cmd in TREE
        for p in cmd.params
        if isinstance(p, click.Option)
        and p.name != "help"
        and (not p.hidden) == visible
        and not (path == "" and p.name == "version")
    ]


def test_the_tree_is_whole() -> None:
    # every lazy group resolved: the tree has the groups of kit/commands/__init__.py and more
    from kit.commands import COMMANDS

    top = {p for p, _ in TREE if p and " " not in p}
    assert top == set(COMMANDS)
    assert len(LEAVES) >= 50


def test_every_option_has_help() -> None:
    missing = [f"kit {path} {p.opts[0]}" for path, p in _options() if not (p.help or "").strip()]
    assert not missing, "options without help text:\n  " + "\n  ".join(missing)


def _describes(help_text: str, arg: click.Argument) -> bool:
    name = (arg.name or "").upper()
    words = {name, name.rstrip("S")} if len(name) > 2 else {name}
    return any(re.search(rf"\b{re.escape(w)}S?\b", help_text) for w in words)


def test_every_argument_is_described_by_its_command() -> None:
    missing = [
        f"kit {path} {(p.name or '').upper()}"
        for path, cmd in LEAVES
        for p in cmd.params
        if isinstance(p, click.Argument) and not _describes(cmd.help or "", p)
    ]
    assert not missing, "arguments the command's help does not describe:\n  " + "\n  ".join(missing)


def test_every_option_name_is_in_the_vocabulary() -> None:
    names = canonical_names()
    outside = []
    for path, p in _options():
        for opt in p.opts:
            if opt not in names:
                outside.append(f"kit {path} {opt}")
        for opt in p.secondary_opts:  # --no-X of a --X/--no-X flag
            if opt.replace("--no-", "--", 1) not in names and opt not in names:
                outside.append(f"kit {path} {opt}")
    assert not outside, (
        "option names outside kit/commands/vocabulary.py (reuse a concept's name, or add "
        "the concept and regenerate docs/vocabulary.md):\n  " + "\n  ".join(outside)
    )


def test_the_vocabulary_has_one_name_per_concept() -> None:
    names = [t.name for t in VOCABULARY.values()]
    assert len(names) == len(set(names)), "one option name serves two concepts"
    assert all(re.fullmatch(r"--[A-Za-z0-9][A-Za-z0-9-]*", n) for n in names)
    for a in ALIASES:
        assert a.old != a.new and a.where
        assert a.new.startswith("kit ") or a.new in canonical_names(), a


def test_deprecated_spellings_are_exactly_the_declared_aliases() -> None:
    declared = {(w, a.old): a.new for a in ALIASES for w in a.where}
    found = {}
    for path, p in _options(visible=False):
        assert isinstance(p, DeprecatedOption), (
            f"kit {path} {p.opts[0]}: a hidden option must be a DeprecatedOption "
            "(kit.commands.options.deprecated_alias)"
        )
        for opt in p.opts:
            found[(path, opt)] = p.replacement
    assert found == declared
    # an old spelling is never also offered, undeprecated, by the same command
    for path, p in _options():
        for opt in p.opts:
            assert (path, opt) not in declared, f"kit {path} offers {opt} twice"


def test_hidden_commands_are_exactly_the_declared_command_aliases() -> None:
    hidden = {f"kit {p}" for p, c in TREE if p and c.hidden}
    assert hidden == {a.old for a in COMMAND_ALIASES}
    for a in COMMAND_ALIASES:
        res = CliRunner().invoke(cli, [*a.new.split()[1:], "--help"])
        assert res.exit_code == 0 and a.old not in _help(" ".join(a.old.split()[1:-1]))


def test_one_spelling_per_parameter() -> None:
    # two option names for one python parameter is two spellings of one concept
    spellings: dict[str, set[str]] = defaultdict(set)
    for path, p in _options():
        spellings[f"{path}:{p.name}"].update(p.opts)
    assert all(len(v) == 1 for v in spellings.values()), {
        k: v for k, v in spellings.items() if len(v) > 1
    }


def test_every_format_option_offers_the_same_choices() -> None:
    fmts = [(path, p) for path, p in _options() if "--format" in p.opts]
    assert len(fmts) >= 20
    for path, p in fmts:
        assert isinstance(p.type, click.Choice), path
        assert tuple(p.type.choices) == FORMATS, f"kit {path} --format: {p.type.choices}"
        assert p.default in (None, "table"), f"kit {path} --format defaults to {p.default}"


def _help(path: str) -> str:
    res = CliRunner().invoke(cli, [*path.split(), "--help"], terminal_width=100)
    assert res.exit_code == 0, (path, res.output)
    return res.output


@pytest.mark.parametrize("path", [p for p, _ in TREE])
def test_help_shows_no_machine_path(path: str) -> None:
    text = _help(path)
    flat = re.sub(r"\s+", " ", text)  # click wraps long defaults
    for forbidden in {str(ROOT), str(ROOT.resolve()), str(Path.home())}:
        if forbidden not in ("/", ""):
            assert forbidden not in flat, f"`kit {path} --help` shows {forbidden}"
    for default in re.findall(r"\[(?:[^\[\]]*; )?default: ([^\]]*)\]", flat):
        assert not default.strip().startswith(("/", "~")), (
            f"`kit {path} --help` shows an absolute default: {default}"
        )


def test_top_level_help_starts_with_audit_and_certify() -> None:
    text = _help("")
    start = text.split("Start here:", 1)[1].split("Exit status", 1)[0]
    for cmd in ("kit registry fetch", "kit audit", "kit certify", "kit reproduce run"):
        assert cmd in start, f"`kit --help` Start here lacks {cmd}"


def test_docs_vocabulary_is_rendered_from_the_module() -> None:
    doc = (ROOT / "docs" / "vocabulary.md").read_text(encoding="utf-8")
    assert doc == markdown(), "regenerate: python -m kit.commands.vocabulary > docs/vocabulary.md"
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for a in ALIASES:
        assert f"`{a.old}`" in doc
        assert a.old in contributing and a.new.split()[-1] in contributing, a
    for concept in ("output", "raw", "catalog", "tables", "verifier", "format", "alpha", "alphas"):
        assert f"`{VOCABULARY[concept].name}`" in contributing, concept
