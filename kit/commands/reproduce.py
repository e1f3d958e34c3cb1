"""`kit reproduce list|run|freeze`: rebuild every published table the kit reproduces."""

from __future__ import annotations

import time
from pathlib import Path

import click

from kit.commands.options import (
    DeprecatedOption,
    PathDefault,
    deprecated_alias,
    format_option,
    raw_option,
    skip_option,
    verifier_loso_option,
    warn_deprecated,
)
from kit.core import atomic, receipts
from kit.core.tables import frame_of, render, to_console
from kit.release import reproduce as rep

# the frozen tables that need a verifier are of the similarity bi-encoder
REPRODUCE_VERIFIER = "minilm-bi"
# ... and those that need the polarity-aware cross-encoder (needs: [verifier_nli]) of the
# kit-trained one
REPRODUCE_VERIFIER_NLI = "minilm-nli"


@click.group()
def reproduce() -> None:
    """Reproductions of the papers' tables and figures (declared in reproduce/*.yaml)."""


@reproduce.command("list")
@format_option
def list_cmd(fmt: str) -> None:
    """List every declared reproduction, its paper section and its tables.

    The terminal view shows name, section and title; --format csv, markdown, latex or json
    adds the paper, the tables each writes and what each needs.

    Example: kit reproduce list --format markdown
    """
    rows = [
        {
            "name": d.name,
            "paper": d.paper,
            "section": d.section,
            "tables": " ".join(sorted(d.tables)),
            "needs": " ".join(d.needs),
            "title": d.title,
        }
        for d in rep.load_declarations()
    ]
    if fmt == "table":
        shown = frame_of(rows, ["name", "section", "title"])
        click.echo(to_console(shown, max_cell=48), nl=False)
    else:
        click.echo(render(frame_of(rows), fmt), nl=False)


@reproduce.command("run")
@click.argument("names", nargs=-1)
@raw_option
@click.option(
    "--tables",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    default=rep.DEFAULT_OUT,
    show_default=True,
    cls=PathDefault,
    help="Folder the tables are written to (csv, markdown, LaTeX and a sealed receipt each); "
    "`kit verify board --tables` reads the same folder.",
)
@deprecated_alias("--out", "--tables", "out")
@click.option(
    "--verifier",
    "verifier",
    default=REPRODUCE_VERIFIER,
    show_default=True,
    help="Verifier for reproductions that need one: a built-in name (minilm-bi = the "
    "similarity bi-encoder the frozen tables were made with; minilm-nli = the kit-trained "
    "cross-encoder) or a folder holding a card.json. Resolved only when a selected "
    "reproduction needs it.",
)
@click.option(
    "--verifier-nli",
    "verifier_nli",
    default=REPRODUCE_VERIFIER_NLI,
    show_default=True,
    help="Cross-encoder for reproductions that declare `needs: [verifier_nli]`: a built-in "
    "name (minilm-nli = the kit-trained cross-encoder, data/verifier-nli) or a folder holding "
    "a card.json. Resolved only when a selected reproduction needs it.",
)
@verifier_loso_option
@click.option("--skip-slow", is_flag=True, help="Skip reproductions declared slow.")
@skip_option
@click.option(
    "--container",
    type=click.Choice(["cpu", "gpu"]),
    default=None,
    cls=DeprecatedOption,
    replacement="kit release container KIND",
)
def run_cmd(
    names: tuple[str, ...],
    raw: Path,
    out: Path,
    verifier: str,
    verifier_nli: str,
    verifier_loso: Path,
    skip_slow: bool,
    skip: tuple[str, ...],
    container: str | None,
) -> None:
    """Run reproductions (all when no NAME is given); write csv, markdown and LaTeX tables.

    NAMES are reproduction names as `kit reproduce list` prints them. Each run also writes a
    sealed receipt whose parent is the registry receipt (the sha256 of every input file), so
    `kit verify receipts` can prove where every table came from. To run the whole
    reproduction inside the kit's container image instead: `kit release container cpu`.

    Example: kit reproduce run board_check --tables data/tables
    """
    if container is not None:
        from kit.release.container import run_reproduction

        warn_deprecated("kit reproduce run --container KIND", f"kit release container {container}")
        result, line = run_reproduction(container, None, "reproduce", out)
        click.echo(result.logs, nl=False)
        click.echo(line)
        if result.exit_code != 0:
            raise SystemExit(1)
        return
    decls = rep.select(rep.load_declarations(), names, skip_slow=skip_slow, skip=skip)
    resources: dict[str, Path] = {}
    for need, spec in (("verifier", verifier), ("verifier_nli", verifier_nli)):
        if any(need in d.needs for d in decls):
            from kit.guard.verifiers.load import resolve_verifier

            resources[need] = resolve_verifier(spec)
    if any("verifier_loso" in d.needs for d in decls):
        resources["verifier_loso"] = verifier_loso
    root = rep.registry_receipt(raw)
    t0 = time.perf_counter()
    n_tables = 0
    # one set: staged beside OUT (starting from its current files), swapped in when all are done
    with atomic.staged_dir(out, keep=True) as stage:
        receipts.write_receipt(stage / "registry.receipt.json", root)
        for i, d in enumerate(decls, 1):
            click.echo(f"[{i}/{len(decls)}] {d.name}: {d.title}", err=True)
            res = rep.run(d, raw, stage, root["content_hash"], resources=resources)
            n_tables += len(res.tables)
            rows = ", ".join(f"{t} ({n} rows)" for t, n in sorted(res.tables.items()))
            click.echo(f"    {rows} in {res.seconds:.1f}s", err=True)
    click.echo(
        f"reproductions: {len(decls)}, tables rebuilt: {n_tables}, "
        f"time: {time.perf_counter() - t0:.1f}s; wrote {out}"
    )


@reproduce.command("freeze")
@click.argument("names", nargs=-1)
@click.option(
    "--tables",
    type=click.Path(file_okay=False, path_type=Path),
    default=rep.DEFAULT_OUT,
    show_default=True,
    cls=PathDefault,
    help="Folder of reproduced tables to freeze (as `kit reproduce run --tables` wrote it).",
)
def freeze_cmd(names: tuple[str, ...], tables: Path) -> None:
    """Copy current outputs into reproduce/expected/ (a deliberate act: review the diff).

    NAMES are reproduction names (`kit reproduce list`); none: every reproduction.

    Example: kit reproduce freeze board_check && git diff reproduce/expected
    """
    written = rep.freeze(rep.select(rep.load_declarations(), names), tables)
    click.echo(f"froze {len(written)} tables into {rep.EXPECTED_DIR}")
