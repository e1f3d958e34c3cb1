"""Options of the commands that evaluate labelled scores, declared once: the labelled score
tables of `kit guard evaluate` and `kit guard compare`, bootstrap CIs, and how the guard writes its
tables and summaries. Names from :mod:`kit.commands.vocabulary`; the rules they follow:
:mod:`kit.commands.options`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from kit.commands.sealed import sealed_file

F = TypeVar("F", bound=Callable[..., Any])

# --- labelled score tables: `kit guard evaluate` and `kit guard compare` ---

EVAL_FORMATS = ("csv", "markdown", "latex")
LABEL_MAP_HELP = (
    "Map custom gold labels: SRC=DST[,SRC=DST...], DST one of entailment, neutral, "
    "contradiction (or an alias such as SUPPORT, NEI, CONTRADICT). Built in: SUPPORT(S), "
    "supported, entailment -> entailment; NEI, NOT_ENOUGH_INFO, neutral, unsupported -> neutral; "
    "CONTRADICT, REFUTES, contradiction -> contradiction (case-insensitive)."
)


def table_stem(out: str | Path, name: str) -> Path:
    """--out PREFIX (PREFIX.csv/.md/.tex) or a folder (an existing one, or a path ending in /)."""
    path = Path(out)
    if path.is_dir() or str(out).endswith(("/", "\\")):
        return path / name
    return path.with_suffix("") if path.suffix in {".csv", ".md", ".tex"} else path


def labelled_scores_options(name: str, kind: str) -> Callable[[Callable], Callable]:
    """The options `kit guard evaluate` and `kit guard compare` share (one spelling, one help):
    --label-map, --group-column, --type-column, --n-boot, --seed and a sealed --out PREFIX or
    folder (``name``.csv / .md / .tex inside a folder)."""

    def apply(f: Callable) -> Callable:
        for deco in reversed(
            (
                click.option("--label-map", default=None, help=LABEL_MAP_HELP),
                click.option(
                    "--group-column",
                    default=None,
                    help="Cluster column for cluster-bootstrap CIs [default: `group` when "
                    "present; e.g. item_pmid for PubMedQA pairs]. Without one, pairs are "
                    "independent.",
                ),
                click.option(
                    "--type-column",
                    default=None,
                    help="Column with finer negative types for extra AUC rows [default: "
                    "pair_type when present].",
                ),
                click.option(
                    "--n-boot",
                    type=click.IntRange(min=1),
                    default=2000,
                    show_default=True,
                    help="Bootstrap resamples of every bootstrap CI.",
                ),
                click.option(
                    "--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap."
                ),
                click.option(
                    "--out",
                    type=click.Path(),  # a str: a trailing '/' (a folder to create) must survive
                    default=None,
                    help=f"PREFIX (writes PREFIX.csv, .md, .tex) or a folder, existing or ending "
                    f"in '/' (writes {name}.*); without it the table is printed.",
                ),
                sealed_file(
                    "out",
                    kind=kind,
                    companions=(".md", ".tex"),
                    resolve=lambda kw: Path(f"{table_stem(kw['out'], name)}.csv"),
                ),
            )
        ):
            f = deco(f)
        return f

    return apply


def bootstrap_options(ci: str = "CI") -> Callable[[F], F]:
    """``--n-boot`` and ``--seed`` of a command with bootstrap CIs; ``ci`` names them in the
    help ("Bootstrap resamples of every <ci>.")."""

    def apply(f: F) -> F:
        f = click.option(
            "--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap."
        )(f)
        return click.option(
            "--n-boot",
            type=click.IntRange(min=1),
            default=2000,
            show_default=True,
            help=f"Bootstrap resamples of every {ci}.",
        )(f)

    return apply


#: the float format of the guard's CSV tables (`kit guard run / pairs / panel`)
GUARD_FLOAT_FMT = "%.10g"


def json_dump(obj: object) -> str:
    """Indented, key-sorted JSON with a final newline (the guard's summary and meta files)."""
    import json

    return json.dumps(obj, indent=2, sort_keys=True) + "\n"
