"""`kit simulate board`: a seeded SYNTHETIC score table with its truth (kit.certify.simulate)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kit.certify.simulate import parse_effects, seeded_board
from kit.commands.sealed import sealed_file
from kit.core import atomic
from kit.core.schema import validate_frame
from kit.core.tables import to_csv

_path = click.Path(dir_okay=False, path_type=Path)


@click.group()
def simulate() -> None:
    """Synthetic inputs with known truth (clearly labelled synthetic)."""


@simulate.command("board")
@click.option("--out", "out_path", type=_path, required=True, help="CSV to write.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every draw.")
@click.option(
    "--systems",
    default="A=0.05,B=0.0,C=0.0,D=-0.05",
    show_default=True,
    help="True effect per system: NAME=EFFECT,...",
)
@click.option(
    "--tasks",
    "n_tasks",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="Tasks per system and readout.",
)
@click.option(
    "--clusters",
    "n_clusters",
    type=click.IntRange(min=1),
    default=23,
    show_default=True,
    help="Task clusters (equal split of the tasks; at most --tasks).",
)
@click.option(
    "--readouts",
    default="synthesis,reasoning,writing",
    show_default=True,
    help="Readout names, a comma list.",
)
@click.option(
    "--fail-rate",
    type=float,
    default=0.02,
    show_default=True,
    help="Probability a score is a failed run (score empty, failed true).",
)
@click.option(
    "--cluster-sd", type=float, default=0.03, show_default=True, help="SD of the cluster effects."
)
@click.option(
    "--noise-sd", type=float, default=0.08, show_default=True, help="SD of the per-score noise."
)
@sealed_file("out_path", kind="simulate-board", appended=(".synthetic.json",))
def board_cmd(
    out_path: Path,
    seed: int,
    systems: str,
    n_tasks: int,
    n_clusters: int,
    readouts: str,
    fail_rate: float,
    cluster_sd: float,
    noise_sd: float,
) -> None:
    """Write a seeded SYNTHETIC score table and a sidecar OUT.synthetic.json with the truth.

    Both are sealed in OUT.receipt.json (check: kit verify receipts OUT).

    Example: kit simulate board --out synthetic_scores.csv --seed 1
    """
    names = tuple(r.strip() for r in readouts.split(",") if r.strip())
    frame, meta = seeded_board(
        seed,
        parse_effects(systems),
        n_tasks=n_tasks,
        n_clusters=n_clusters,
        readouts=names,
        fail_rate=fail_rate,
        cluster_sd=cluster_sd,
        noise_sd=noise_sd,
    )
    validate_frame(frame, "scores", str(out_path))
    atomic.write_text(out_path, to_csv(frame))
    sidecar = out_path.with_name(out_path.name + ".synthetic.json")
    atomic.write_text(sidecar, json.dumps(meta, indent=2, sort_keys=True) + "\n")
    click.echo(f"wrote {out_path} ({len(frame)} rows, SYNTHETIC) and {sidecar}")
