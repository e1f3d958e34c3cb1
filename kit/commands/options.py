"""Options shared by several command groups, declared once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from kit.registry.fetch import DEFAULT_DEST
from kit.report.tables import FORMATS

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Output format on stdout.",
)

raw_option = click.option(
    "--raw",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_DEST,
    show_default=True,
    help="The fetched registry folder (kit registry fetch).",
)


def score_store_options(f: Callable[..., None]) -> Callable[..., None]:
    """--cache-dir DIR (the shared score store; env KIT_CACHE_DIR) and --no-cache."""
    from kit.guard.score_store import DEFAULT_STORE, ENV_VAR

    f = click.option(
        "--no-cache",
        is_flag=True,
        help="Keep scores in memory only: neither read nor write the score store.",
    )(f)
    return click.option(
        "--cache-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=DEFAULT_STORE,
        show_default=True,
        envvar=ENV_VAR,
        show_envvar=True,
        help="The score store shared by every command and output folder: verifier scores keyed "
        "by sha256 of (verifier ONNX, scoring mode, claim, passage); safe for concurrent runs.",
    )(f)


def score_store_root(cache_dir: Path, no_cache: bool) -> Path | None:
    """The store folder the command uses (None with --no-cache)."""
    return None if no_cache else cache_dir


def engine_options(f: Callable[..., None]) -> Callable[..., None]:
    """--engine local|ray, --ray-address ADDR, --ray-workers N (docs/scale.md; kit.parallel)."""
    from kit.parallel import ENGINES

    f = click.option(
        "--ray-workers",
        type=click.IntRange(min=1),
        default=None,
        help="Ray workers in parallel (scoring: actors of one CPU and one model load each; "
        "certify: 4 groups of draws each); default: the cluster's CPUs.",
    )(f)
    f = click.option(
        "--ray-address",
        default=None,
        help="With --engine ray: the cluster to use (HOST:6379 as `ray start --head` prints, "
        "'auto', or ray://HOST:10001); default: RAY_ADDRESS if set, else a Ray started on "
        "this machine.",
    )(f)
    return click.option(
        "--engine",
        type=click.Choice(ENGINES),
        default="local",
        show_default=True,
        help="Where the costly work runs (the verifier's model; certify's simulation draws): "
        "this process, or a Ray cluster (the 'ray' extra); outputs are the same bytes either way.",
    )(f)
