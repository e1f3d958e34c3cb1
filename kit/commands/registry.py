"""`kit registry ...`: list, fetch and verify registered sources; generate DATA_LICENSES."""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.options import PathDefault, deprecated_alias, format_option
from kit.core import atomic
from kit.core.tables import frame_of, render
from kit.registry import fetch as fetch_mod
from kit.registry.licences import render_licences
from kit.registry.sources import REPO_ROOT, load_sources

# the registry folder is --raw everywhere (the commands reading it say --raw too)
_raw_dest = click.option(
    "--raw",
    "dest",
    type=click.Path(file_okay=False, path_type=Path),
    default=fetch_mod.DEFAULT_DEST,
    show_default=True,
    cls=PathDefault,
    help="The registry folder: where fetched files land and are checked.",
)
_dest_alias = deprecated_alias("--dest", "--raw", "dest")


@click.group()
def registry() -> None:
    """The data registry: every external source, pinned by sha256, with its licence."""


@registry.command("list")
@format_option
def list_cmd(fmt: str) -> None:
    """Print every registered file: source, path, bytes, licence, redistributable, sha256.

    Example: kit registry list --format csv
    """
    rows = [
        {
            "source": s.name,
            "path": f.path,
            "bytes": f.bytes,
            "licence": s.licence,
            "redistributable": s.redistributable,
            "sha256": f.sha256,
            "upstream": f.url or "",
        }
        for s in load_sources()
        for f in s.files
    ]
    click.echo(render(frame_of(rows), fmt), nl=False)


@registry.command("fetch")
@click.option(
    "--mirror",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Mirror folder laid out like the registry (default: $KIT_MIRROR, else ../shared/registry).",
)
@_raw_dest
@_dest_alias
@click.option(
    "--dvc-cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=fetch_mod.DEFAULT_DVC_CACHE,
    show_default=True,
    cls=PathDefault,
    help="DVC cache folder (content-addressed by md5), tried first.",
)
@click.option("--no-dvc-cache", is_flag=True, help="Skip the DVC cache.")
@click.option("--offline", is_flag=True, help="Never try the upstream URL.")
@click.option(
    "--receipt",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write a JSON receipt of what is in place (path, sha256, bytes).",
)
def fetch_cmd(
    mirror: Path | None,
    dest: Path,
    dvc_cache: Path,
    no_dvc_cache: bool,
    offline: bool,
    receipt: Path | None,
) -> None:
    """Fetch every registered file into data/raw, checking each byte against its sha256.

    Each file is taken from the DVC cache, then the mirror, then the upstream URL. A sha256
    mismatch or a file found nowhere is exit status 2, naming the file, and data/raw is left
    unchanged.

    Example: kit registry fetch --mirror ../shared/registry
    """
    import json

    mirror = mirror if mirror is not None else fetch_mod.default_mirror()
    counts: dict[str, int] = {}

    def report(rec: fetch_mod.FetchRecord) -> None:
        counts[rec.origin] = counts.get(rec.origin, 0) + 1
        click.echo(f"  {rec.origin:<9} {rec.path}", err=True)

    records = fetch_mod.fetch(
        dest=dest,
        mirror=mirror,
        dvc_cache=None if no_dvc_cache else dvc_cache,
        allow_network=not offline,
        on_file=report,
    )
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    click.echo(f"fetched {len(records)} files into {dest} ({summary}); all sha256 verified")
    if receipt is not None:
        body = [{"path": r.path, "sha256": r.sha256, "bytes": r.bytes} for r in records]
        atomic.write_text(receipt, json.dumps({"files": body}, indent=2, sort_keys=True) + "\n")


@registry.command("verify")
@_raw_dest
@_dest_alias
def verify_cmd(dest: Path) -> None:
    """Check that every registered file is in place with its pinned sha256 (fetches nothing).

    Example: kit registry verify
    """
    recs = fetch_mod.verify_present(dest)
    click.echo(f"{len(recs)} files verified in {dest}")


@registry.command("licences")
@click.option("--write", is_flag=True, help="Write DATA_LICENSES at the repository root.")
@click.option("--check", is_flag=True, help="Exit 1 if DATA_LICENSES is out of date.")
def licences_cmd(write: bool, check: bool) -> None:
    """Print DATA_LICENSES as generated from the source list (or --write / --check it).

    Example: kit registry licences --check
    """
    text = render_licences()
    target = REPO_ROOT / "DATA_LICENSES"
    if check:
        current = target.read_text() if target.is_file() else ""
        if current != text:
            click.echo(
                "DATA_LICENSES is out of date: run `kit registry licences --write`", err=True
            )
            raise SystemExit(1)
        click.echo("DATA_LICENSES is in sync with kit/registry/sources.yaml")
        return
    if write:
        atomic.write_text(target, text)
        click.echo(f"wrote {target}")
        return
    click.echo(text, nl=False)
