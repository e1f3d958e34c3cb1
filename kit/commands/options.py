"""Options shared by several command groups, declared once, and the rules every option follows.

The names come from one vocabulary (:mod:`kit.commands.vocabulary`, docs/vocabulary.md): one
option name per concept across every group. An old spelling is kept for one release as a hidden
*deprecated alias* (:func:`deprecated_alias`): it still works and prints a warning on stderr
naming the new spelling. Defaults that are paths inside the checkout are shown relative to it
(:func:`shown`), never as this machine's absolute path.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kit.commands.sealed import sealed_file
from kit.core.tables import FORMATS
from kit.registry.fetch import DEFAULT_DEST
from kit.registry.sources import REPO_ROOT, checkout_relative

if TYPE_CHECKING:
    from kit.audit.runner import AuditOptions

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

variant_option = click.option(
    "--variant",
    type=click.Choice(["fp32", "int8"]),
    default="fp32",
    show_default=True,
    help="Verifier weights: fp32, or int8 (dynamically quantised: faster on CPU; scores differ "
    "slightly, so the score store keeps them apart).",
)
device_option = click.option(
    "--device",
    type=click.Choice(["cpu", "cuda"]),
    default="cpu",
    show_default=True,
    help="Where the verifier runs (cuda needs a CUDA-enabled onnxruntime).",
)
batch_size_option = click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=32,
    show_default=True,
    help="(claim, passage) pairs per forward pass of the verifier (memory vs speed; fp32 scores "
    "stay the same to ~1e-8, int8 scores can move by ~0.01: dynamic quantisation scales each "
    "batch as a whole).",
)


def score_store_options(f: Callable[..., None]) -> Callable[..., None]:
    """--cache-dir DIR (the shared score store; env KIT_CACHE_DIR) and --no-cache."""
    from kit.guard.scoring.score_store import DEFAULT_STORE, ENV_VAR

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
        cls=PathDefault,
        envvar=ENV_VAR,
        show_envvar=True,
        help="The score store shared by every command and output folder: verifier scores keyed "
        "by sha256 of (verifier ONNX, scoring mode, claim, passage); safe for concurrent runs.",
    )(f)


def endpoint_request_options(f: Callable[..., None]) -> Callable[..., None]:
    """How an LLM card asks its endpoint (kit guard import-verifier --base-url, kit grade
    import-judge): --api-key-env, --concurrency, --timeout, --retries, --backoff. Written on the
    card, so every later command asks the same way."""
    for decl, kwargs in reversed(
        [
            (
                "--api-key-env",
                dict(
                    default="OPENAI_API_KEY",
                    show_default=True,
                    help="LLM endpoint: the environment variable holding the API key (never "
                    "stored).",
                ),
            ),
            (
                "--concurrency",
                dict(
                    type=click.IntRange(min=1),
                    default=4,
                    show_default=True,
                    help="LLM endpoint: requests in flight at once.",
                ),
            ),
            (
                "--timeout",
                dict(
                    type=click.FloatRange(min=0, min_open=True),
                    default=60.0,
                    show_default=True,
                    help="LLM endpoint: seconds per request.",
                ),
            ),
            (
                "--retries",
                dict(
                    type=click.IntRange(min=0),
                    default=3,
                    show_default=True,
                    help="LLM endpoint: retries of a request that failed in transport or with "
                    "HTTP 429/5xx.",
                ),
            ),
            (
                "--backoff",
                dict(
                    type=click.FloatRange(min=0),
                    default=1.0,
                    show_default=True,
                    help="LLM endpoint: seconds before the first retry, doubled before each next.",
                ),
            ),
        ]
    ):
        f = click.option(decl, **kwargs)(f)
    return f


def score_store_root(cache_dir: Path, no_cache: bool) -> Path | None:
    """The store folder the command uses (None with --no-cache)."""
    return None if no_cache else cache_dir


def engine_options(f: Callable[..., None]) -> Callable[..., None]:
    """--engine local|ray, --ray-address ADDR, --ray-workers N, --ray-connect-timeout S
    (docs/scale.md; kit.core.parallel)."""
    from kit.core.parallel import CONNECT_TIMEOUT, ENGINES

    f = click.option(
        "--ray-connect-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        help="With --engine ray: seconds to wait for the cluster to answer, at connection "
        "(one TCP probe, then one Ray attempt) and mid-run (silence this long, at most 45 s, "
        f"ends the run with exit 2; finished scores stay in the store) [default: "
        f"{CONNECT_TIMEOUT:g}].",
    )(f)
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
        "'auto', ray://HOST:10001, or 'local' for a private Ray); default: RAY_ADDRESS if "
        "set, else a cluster `ray start` runs on this machine, else a private Ray.",
    )(f)
    return click.option(
        "--engine",
        type=click.Choice(ENGINES),
        default="local",
        show_default=True,
        help="Where the costly work runs (the verifier's model; certify's simulation draws): "
        "this process, or a Ray cluster (the 'ray' extra); outputs are the same bytes either way.",
    )(f)


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


# Shared by the grade commands (kit.commands.grade, grade_judge) and the certify / theory ones
# (issue 37, step 5: one declaration per repeated option block).

checklists_option = click.option(
    "--checklists",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Frozen checklists JSONL (each with its frozen_sha256).",
)
"""``--checklists``: the frozen checklists a grading command scores against."""

solve_threshold_option = click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=0.5,
    show_default=True,
    help="Solved iff score >= threshold.",
)
"""``--threshold``: a checklist score at or above it is a solved task."""


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


table_file_option = click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the table here (atomically) instead of printing it.",
)
"""``--out FILE`` of a grade command that prints one table or writes it."""

max_answer_chars_option = click.option(
    "--max-answer-chars",
    type=click.IntRange(min=1),
    default=100_000,
    show_default=True,
    help="Answers longer than this are an error (or a counted skip with --skip-bad).",
)

skip_bad_option = click.option(
    "--skip-bad",
    is_flag=True,
    help="Skip malformed run lines (counted and listed) instead of failing.",
)


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


def citation_check_options(f: Callable[..., None]) -> Callable[..., None]:
    """The options of the citation stages (claims, L1, L2), shared by `kit audit` and its view
    `kit grade audit-citations`: one name and one default per concept."""
    from kit.corpus.build import DEFAULT_ROOT as DEFAULT_CORPUS_ROOT
    from kit.guard.verifiers.load import DEFAULT_VERIFIER, VERIFIER_HELP

    _dir = click.Path(file_okay=False, path_type=Path)
    opts = [
        click.option(
            "--corpus",
            default="pubmedqa",
            show_default=True,
            help="Corpora for L1/L2, NAME[,NAME] in resolution order: the first that holds a "
            "citation resolves it; notfound only inside a corpus's declared complete coverage, "
            "else unchecked (`kit corpus list`). pubmedqa (built in) is a sample.",
        ),
        click.option(
            "--corpus-root",
            type=_dir,
            default=DEFAULT_CORPUS_ROOT,
            show_default=True,
            cls=PathDefault,
            help="Built corpora.",
        ),
        click.option(
            "--raw",
            type=_dir,
            default=DEFAULT_DEST,
            show_default=True,
            cls=PathDefault,
            help="Fetched registry.",
        ),
        click.option("--verifier", default=DEFAULT_VERIFIER, show_default=True, help=VERIFIER_HELP),
        variant_option,
        device_option,
        batch_size_option,
        click.option(
            "--yes-at",
            type=click.FloatRange(0, 1),
            default=0.84,
            show_default=True,
            help="L2 yes iff the support score s >= this.",
        ),
        click.option(
            "--partial-at",
            type=click.FloatRange(0, 1),
            default=0.80,
            show_default=True,
            help="L2 partial iff s >= this (and below --yes-at); else no.",
        ),
        click.option(
            "--limit",
            type=click.IntRange(min=1),
            default=None,
            help="Audit only the first N runs in the file's order (printed and recorded).",
        ),
        score_store_options,
        engine_options,
        click.option(
            "--max-answer-chars",
            type=click.IntRange(min=1),
            default=100_000,
            show_default=True,
            help="Answers longer than this are an error (or a counted skip with --skip-bad).",
        ),
        click.option(
            "--skip-bad", is_flag=True, help="Skip malformed run lines (counted) instead."
        ),
        click.option("--quiet", is_flag=True, help="No progress on stderr."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def audit_options(runs: Path, **check: Any) -> AuditOptions:
    """AuditOptions from the values of :func:`citation_check_options` (and any other
    AuditOptions field given by name)."""
    from kit.audit.runner import AuditOptions
    from kit.core.parallel import Engine

    cache_dir, no_cache, quiet = check.pop("cache_dir"), check.pop("no_cache"), check.pop("quiet")
    engine = Engine(
        check.pop("engine"),
        check.pop("ray_address"),
        check.pop("ray_workers"),
        check.pop("ray_connect_timeout"),
    )
    return AuditOptions(
        runs=runs,
        out=check.pop("out", Path(".")),
        cache_dir=score_store_root(cache_dir, no_cache),
        engine=engine,
        progress=not quiet,
        **check,
    )


#: the float format of the guard's CSV tables (`kit guard run / pairs / panel`)
GUARD_FLOAT_FMT = "%.10g"


def json_dump(obj: object) -> str:
    """Indented, key-sorted JSON with a final newline (the guard's summary and meta files)."""
    import json

    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


def verifier_options(f: Callable[..., None]) -> Callable[..., None]:
    """--verifier (a built-in name or a card folder), --variant, --device, --batch-size."""
    from kit.guard.verifiers.load import DEFAULT_VERIFIER, VERIFIER_HELP

    for opt in reversed(
        [
            click.option(
                "--verifier", default=DEFAULT_VERIFIER, show_default=True, help=VERIFIER_HELP
            ),
            variant_option,
            device_option,
            batch_size_option,
        ]
    ):
        f = opt(f)
    return f
