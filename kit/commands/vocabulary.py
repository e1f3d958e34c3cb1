"""The command line's vocabulary: one option name per concept, across every command group.

:data:`VOCABULARY` maps each concept to its one option name and a line saying what it means;
:data:`ALIASES` lists the old spellings still accepted for one release (hidden, with a warning
on stderr: :func:`kit.commands.options.deprecated_alias`). docs/vocabulary.md is rendered from
this module (:func:`markdown`); tests/spine/test_option_vocabulary.py walks every command and
fails on a name that is not here, an alias that is not declared, an option without help, or a
default shown as an absolute path of this machine.

Adding an option: reuse the name of its concept when there is one (``--out``, ``--raw``,
``--catalog``, ``--verifier``, ``--format``, ``--alpha``/``--alphas``, ``--seed``, ...); a new
concept gets a new entry, in :mod:`kit.commands.vocabulary_shared` (a concept of several groups)
or :mod:`kit.commands.vocabulary_specific` (an option of one command), and a regenerated
docs/vocabulary.md (``python -m kit.commands.vocabulary > docs/vocabulary.md``). Imports nothing
heavy: ``kit --help`` stays fast.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from kit.commands.vocabulary_shared import SHARED, SHARED_TERMS, Term
from kit.commands.vocabulary_specific import SPECIFIC_TERMS


@dataclass(frozen=True)
class Alias:
    """An old spelling accepted for one release by the commands ``where``: use ``new`` instead."""

    old: str
    new: str
    where: tuple[str, ...]
    note: str = ""


VOCABULARY: dict[str, Term] = {**SHARED_TERMS, **SPECIFIC_TERMS}
"""Every concept: the shared ones first (:mod:`kit.commands.vocabulary_shared`), then the
options of one command (:mod:`kit.commands.vocabulary_specific`)."""


ALIASES: tuple[Alias, ...] = (
    Alias("--db", "--catalog", ("db build", "db tables", "query")),
    Alias("--dest", "--raw", ("registry fetch", "registry verify")),
    Alias("--out", "--tables", ("reproduce run",), "the tables folder"),
    Alias(
        "--container",
        "kit release container KIND",
        ("reproduce run",),
        "one way to run the reproduction in a container",
    ),
    Alias("--targets", "--alphas", ("guard coverage",), "a catch target T is the alpha 1 - T"),
    Alias("--tol", "--tolerance", ("theory distance",)),
    Alias("--design", "--estimator", ("theory lm",), "--design names the certification YAML"),
)

COMMAND_ALIASES: tuple[Alias, ...] = (
    Alias("kit corpus ingest", "kit corpus build", ("corpus",), "one name per command"),
)
"""Old command names kept (hidden, with a warning) for one release."""


def canonical_names() -> dict[str, str]:
    """Option name -> concept."""
    return {t.name: concept for concept, t in VOCABULARY.items()}


def markdown() -> str:
    """docs/vocabulary.md."""
    lines = [
        "# The command line's vocabulary",
        "",
        "One option name per concept across every `kit` command group. Rendered from",
        "`kit/commands/vocabulary.py` (`python -m kit.commands.vocabulary > docs/vocabulary.md`);",
        "`tests/spine/test_option_vocabulary.py` fails on an option outside it, an option without",
        "help text, or a default shown as an absolute path of one machine.",
        "",
        "## Shared concepts",
        "",
        "| option | concept | meaning |",
        "|---|---|---|",
    ]
    for group in (SHARED, "specific"):
        if group == "specific":
            lines += ["", "## Options of one command", "", "| option | concept | meaning |"]
            lines += ["|---|---|---|"]
        for concept, t in sorted(VOCABULARY.items(), key=lambda kv: kv[1].name.lower()):
            if t.group == group:
                lines.append(f"| `{t.name}` | {concept} | {t.meaning.replace('|', '/')} |")
    lines += [
        "",
        "## Deprecated spellings (accepted for one release, with a warning on stderr)",
        "",
        "| old | use instead | in | note |",
        "|---|---|---|---|",
    ]
    for a in ALIASES:
        where = ", ".join(f"`kit {w}`" for w in a.where)
        lines.append(f"| `{a.old}` | `{a.new}` | {where} | {a.note} |")
    for a in COMMAND_ALIASES:
        lines.append(f"| `{a.old}` | `{a.new}` | (command) | {a.note} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(markdown())
