"""`kit release build|verify|container`: the release manifest (every released file, sha256,
source, licence) and the reproduction run inside the kit's container image."""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.options import PathDefault
from kit.registry.sources import REPO_ROOT, SOURCES_FILE, load_sources
from kit.release import container
from kit.release import manifest as man

_ROOT = click.option(
    "--root",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=REPO_ROOT,
    show_default=True,
    cls=PathDefault,
    help="Release root: a git work tree holding data.dvc and data/raw.",
)
_SOURCES = click.option(
    "--sources",
    "sources_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=SOURCES_FILE,
    show_default=True,
    cls=PathDefault,
    help="Registry source list giving each data/raw file its source and licence.",
)


@click.group()
def release() -> None:
    """Release manifest (build, verify) and the reproduction inside a container."""


@release.command("build")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the manifest [default: ROOT/release/manifest.json].",
)
@_ROOT
@_SOURCES
def build_cmd(out: Path | None, root: Path, sources_file: Path) -> None:
    """Write the manifest of every released file: the tracked repository files, the registry
    files in data/raw (sha256-checked against their pins; the folder checked against the md5
    data.dvc records) and data/tables when present. Sources whose licence forbids
    redistribution are withheld.

    Example: kit release build --out release/manifest.json
    """
    out = out if out is not None else root / man.DEFAULT_MANIFEST
    sources = load_sources(sources_file)
    doc = man.build(root, sources, exclude=man.exclusions(root, out))
    man.write(out, doc)
    kinds: dict[str, int] = {}
    for f in doc["files"]:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    parts = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    click.echo(
        f"manifest: {doc['totals']['files']} files ({parts}), {doc['totals']['bytes']} bytes; "
        f"{man.DVC_FILE} md5 {doc['dvc']['md5']} matches {man.RAW_DIR}; written to {out}"
    )
    for w in doc["withheld"]:
        click.echo(
            f"withheld: source {w['source']} (licence {w['licence']}) may not be redistributed: "
            + ", ".join(w["paths"])
        )


@release.command("verify")
@click.option(
    "--manifest",
    "manifest_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Manifest to check against [default: ROOT/release/manifest.json].",
)
@_ROOT
@_SOURCES
def verify_cmd(manifest_path: Path | None, root: Path, sources_file: Path) -> None:
    """Recompute every released file and compare with the manifest. Exit 1 naming every file
    that changed, is missing or is extra; exit 2 when the manifest is unreadable or invalid.

    Example: kit release verify --manifest release/manifest.json
    """
    manifest_path = manifest_path if manifest_path is not None else root / man.DEFAULT_MANIFEST
    doc = man.read(manifest_path)
    sources = load_sources(sources_file)
    checked, diffs = man.verify(doc, root, sources, exclude=man.exclusions(root, manifest_path))
    for d in diffs:
        click.echo(str(d))
    click.echo(
        f"release verify {manifest_path}: {checked} files in the manifest, "
        f"{len(diffs)} difference(s)"
    )
    if diffs:
        raise SystemExit(1)


@release.command("container")
@click.argument("kind", type=click.Choice(sorted(container.IMAGES)))
@click.option(
    "--mirror",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Registry mirror mounted read-only at /mirror [default: $KIT_MIRROR or ../shared/registry].",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Host folder (writable by uid 10001) that receives data/tables after the run.",
)
@click.option("--target", default="reproduce", show_default=True, help="make target to run.")
@click.option("--image", default=None, help="Image to run [default: localhost/litaudit-kit:KIND].")
@click.option(
    "--host",
    default=None,
    help="Docker API endpoint [default: $DOCKER_HOST, else unix:///run/podman/podman.sock].",
)
def container_cmd(
    kind: str,
    mirror: Path | None,
    out: Path | None,
    target: str,
    image: str | None,
    host: str | None,
) -> None:
    """Run `make reproduce` (or --target) inside the KIND image (cpu or gpu) through the Docker
    Engine API (Docker, or podman's `podman system service`), offline, with the mirror mounted
    read-only. The one way to run the reproduction in a container (`kit reproduce run
    --container` is its deprecated alias). Exit 1 when the run inside fails. Build the image
    first (containers/README.md).

    Example: kit release container cpu --mirror ../shared/registry
    """
    result, line = container.run_reproduction(kind, mirror, target, out, image, host)
    click.echo(result.logs, nl=False)
    click.echo(line)
    if result.exit_code != 0:
        raise SystemExit(1)
