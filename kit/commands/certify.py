"""`kit certify` (a certified leaderboard from a score table) and `kit simulate board`."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path

import click
import numpy as np
import pandas as pd

from kit import atomic, boundary
from kit.certify.design import ASSUMED_LABEL, Design, parse_design
from kit.certify.engine import calibrate_board, certify_board
from kit.certify.simulate import simulate_board, synthetic_evidence, true_differences
from kit.commands.options import engine_options, format_option
from kit.commands.sealed import sealed_file, sealed_output
from kit.errors import ConfigError
from kit.parallel import Engine, import_ray, mapper
from kit.report.tables import FULL_PRECISION, render, to_csv, write_table
from kit.schema import read_frame, read_table, read_yaml, validate_frame

_path = click.Path(dir_okay=False, path_type=Path)
DESIGN_COPY = "design.yaml"  # the design, kept in the output folder (kit report board reads it)
SYNTHETIC_FILE = "synthetic.json"  # the scores' .synthetic.json record, when they are generated


def _write(frame: pd.DataFrame, schema: str, stem: Path, formats: tuple[str, ...]) -> None:
    """Validate and write; csv carries full float precision (markdown / LaTeX round)."""
    validate_frame(frame, schema, str(stem))
    write_table(frame, stem, formats, csv_float_fmt=FULL_PRECISION)


def read_scores(
    path: Path, design: Design, cluster_column: str | None = None
) -> tuple[pd.DataFrame, str, tuple[str, ...]]:
    """The score table at ``path`` as the engine's long table, its format (``full`` or
    ``plain``) and notes in words on how a plain table was read (kit.certify.plain)."""
    from kit.certify.plain import (
        FULL_SCHEMA,
        PLAIN_SCHEMA,
        plain_to_long,
        score_format,
        use_cluster_column,
    )

    raw = use_cluster_column(read_frame(path), cluster_column, str(path))
    fmt = score_format([str(c) for c in raw.columns])
    if fmt == "full":
        return validate_frame(raw, FULL_SCHEMA, str(path)), fmt, ()
    plain = plain_to_long(validate_frame(raw, PLAIN_SCHEMA, str(path)), str(path), design.clusters)
    return plain.frame, fmt, plain.notes


@click.command("certify")
@click.argument("scores", type=_path)
@click.option(
    "--design",
    "design_path",
    type=_path,
    required=True,
    help="The declared design YAML (schemas/json/design.schema.json; docs/certify.md). "
    "Smallest for a plain table: 'admissibility: assumed'.",
)
@click.option(
    "--cluster-column",
    default=None,
    help="The column of SCORES that holds each task's cluster, when it is not named 'cluster' "
    "(a plain table without any cluster column makes each task its own cluster).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Output folder (created; files replaced atomically).",
)
@click.option(
    "--targets",
    "targets_path",
    type=_path,
    default=None,
    help="Per-task normalisation targets for quality/style readouts.",
)
@click.option(
    "--null-draws",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Sign-flip draws for calibration.csv and loco.csv (0: skip).",
)
@click.option(
    "--validate",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="N null and N alternative SYNTHETIC boards shaped like the input for validity.csv "
    "(family-wise false certification and power of this design on this board; 0: skip).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the sign flips and of the --validate boards.",
)
@click.option(
    "--calibration-scope",
    default="composite",
    show_default=True,
    help="Readout whose pairs form the null family, or 'all'.",
)
@click.option(
    "--figure/--no-figure",
    default=True,
    show_default=True,
    help="Write the rank-interval figure ranks.png.",
)
@format_option
@engine_options
@sealed_output("out_dir", kind="certify", context=True, keep={"design_path": DESIGN_COPY})
def certify(
    scores: Path,
    design_path: Path,
    out_dir: Path,
    targets_path: Path | None,
    null_draws: int,
    validate: int,
    seed: int,
    calibration_scope: str,
    figure: bool,
    cluster_column: str | None,
    fmt: str,
    engine: str,
    ray_address: str | None,
    ray_workers: int | None,
    ray_connect_timeout: float | None,
) -> None:
    """Certify every pair of a score table under a declared design (Eq. 4 of the paper).

    SCORES is a score table (plain or long, below); DESIGN the declared design YAML.

    \b
    SCORES: a CSV (or Parquet) score table in one of two formats (docs/certify.md):
    - plain (schemas/scores_plain.yaml): task_id, system, score [, cluster] [, readout];
      an empty score is a failed run; readout 'score' when absent; no cluster column ->
      each task is its own cluster. No entry metadata, so admissibility cannot be tested:
      refused (exit 2) unless DESIGN says 'admissibility: assumed', and then every verdict
      says "admissibility assumed by the user".
        task_id,system,score,cluster
        t01,A,0.81,pubmed
        t01,B,0.74,pubmed
        t02,A,,trials          <- failed run
    - full (schemas/scores.yaml): one row per (task, system, readout) with task_id, cluster,
      system, readout, score, failed, entry_hash, backbone, entry_condition, length_view;
      admissibility is tested from the entry metadata (Definition 1).
        t01,c1,A,synthesis,0.81,false,sha256:9f..,llama-3,fixed_input,matched_length
    \b
    DESIGN (--design): YAML declared before any score is read (schemas/json/design.schema.json):
    alpha, family, tolerance, nuisance constants, clusters, axes, inference, admissibility.
    Every key is optional. Smallest design for a plain table:
        admissibility: assumed
    A full design: examples/certify/design.yaml.
    \b
    Writes to OUT: pairs.csv, ranks.{csv,md,tex}, conventional.csv, conventional_counts.csv,
    ranks.png, with --null-draws N: calibration.csv, loco.csv, and with --validate N:
    validity.csv (SYNTHETIC boards shaped like the input; `kit report board` shows it).
    OUT also keeps its context, sealed with the rest: design.yaml (a copy), context.json
    (command line, kit version, inputs' sha256) and, for generated scores, synthetic.json (the
    SCORES.synthetic.json sidecar of `kit simulate board`, or the rows' synthetic: entry hash).
    With --engine ray the --null-draws / --validate draws run as Ray tasks (docs/scale.md);
    every draw is seeded by its index (or drawn up front), so the tables are the same bytes.
    \b
    Examples:
      kit certify examples/certify/plain_scores.csv --design examples/certify/design_plain.yaml --out cert/
      kit certify scores.csv --design examples/certify/design.yaml --out out/ --null-draws 2000
    """
    spec = Engine(engine, ray_address, ray_workers, ray_connect_timeout)
    if spec.is_ray and null_draws == 0 and validate == 0:
        click.echo(
            "--engine ray: nothing to distribute without --null-draws / --validate", err=True
        )
    elif spec.is_ray:
        import_ray()  # a missing extra: exit 2 before any work
    design = parse_design(read_yaml(design_path, "design"), str(design_path))
    click.echo(f"reading {scores}", err=True)
    frame, table_kind, notes = read_scores(scores, design, cluster_column)
    targets = read_table(targets_path, "certify_targets") if targets_path else None
    click.echo(f"certifying {len(frame)} rows", err=True)
    result = certify_board(frame, design, targets, str(scores), str(targets_path or ""))
    out_dir.mkdir(parents=True, exist_ok=True)
    _write(result.pairs, "certify_pairs", out_dir / "pairs", ("csv",))
    _write(result.ranks, "certify_ranks", out_dir / "ranks", ("csv", "markdown", "latex"))
    _write(result.conventional, "certify_conventional", out_dir / "conventional", ("csv",))
    _write(
        result.conventional_counts,
        "certify_conventional_counts",
        out_dir / "conventional_counts",
        ("csv",),
    )
    if null_draws > 0 and calibration_scope != "all":
        if calibration_scope not in set(result.pairs["readout"]):
            raise ConfigError(
                "bad_parameter", f"--calibration-scope {calibration_scope!r} is not a readout"
            )
    validity_line = ""
    with mapper(spec) if null_draws > 0 or validate > 0 else nullcontext() as run:
        if null_draws > 0:
            click.echo(
                f"calibrating: {null_draws} sign-flip draws + leave-one-cluster-out", err=True
            )
            cal, loco = calibrate_board(
                frame,
                design,
                result,
                null_draws,
                np.random.default_rng(seed),
                targets,
                calibration_scope,
                mapper=run,
            )
            _write(cal, "certify_calibration", out_dir / "calibration", ("csv",))
            _write(loco, "certify_loco", out_dir / "loco", ("csv",))
        if validate > 0:
            from kit.certify.validity import validate_board, validity_sentence

            click.echo(
                f"validating: {validate} null + {validate} alternative SYNTHETIC boards", err=True
            )
            validity = validate_board(
                frame,
                design,
                validate,
                seed,
                targets,
                str(scores),
                str(targets_path or ""),
                mapper=run,
            )
            _write(validity, "certify_validity", out_dir / "validity", ("csv",))
            validity_line = validity_sentence(validity)
    synthetic = _synthetic_record(scores, frame)
    if synthetic is not None:
        atomic.write_text(
            out_dir / SYNTHETIC_FILE, json.dumps(synthetic, indent=2, sort_keys=True) + "\n"
        )
    if figure:
        from kit.report.rank_figure import write_rank_figure

        write_rank_figure(
            result.ranks, out_dir / "ranks.png", alpha=design.alpha, synthetic=synthetic is not None
        )
    counts = result.pairs["verdict"].value_counts().sort_index()
    if table_kind == "plain":
        click.echo(f"plain score table ({scores}): " + "; ".join(notes))
    if result.admissibility == "assumed":
        click.echo(
            f"{ASSUMED_LABEL.capitalize()} ({design_path}: 'admissibility: assumed'): no pair "
            "was tested against Definition 1; every pair is taken as exactly matched "
            "(eps_outside = 0), and every verdict below rests on that assumption"
        )
    click.echo(
        f"{len(result.pairs)} (pair, readout) rows; Bonferroni family: {result.family}, "
        f"m = {result.m}; inference = {result.inference}; "
        + ", ".join(f"{k}: {v}" for k, v in counts.items())
    )
    click.echo(
        f"failed runs: {result.n_failed_runs} of {len(frame)} rows; composite common task set: "
        f"{result.n_composite_tasks} of {result.n_tasks} tasks "
        f"({result.n_tasks - result.n_composite_tasks} lost: a task leaves the composite of "
        "every pair when any system lacks a composite there)"
    )
    if validity_line:
        click.echo(f"validity: {validity_line}")
    click.echo(render(result.ranks, fmt, title="Rank intervals (composite)"), nl=False)


def _synthetic_record(scores: Path, frame: pd.DataFrame) -> dict[str, object] | None:
    """The scores' ``.synthetic.json`` sidecar (from `kit simulate board`) when there is one,
    else the evidence in the rows themselves (entry_hash synthetic:*), else None."""
    sidecar = scores.with_name(scores.name + ".synthetic.json")
    if sidecar.is_file():
        record = boundary.read_json(sidecar)
        if isinstance(record, dict) and record.get("synthetic") is True:
            return {**record, "sidecar": sidecar.name}
    return synthetic_evidence(frame)


@click.group()
def simulate() -> None:
    """Synthetic inputs with known truth (clearly labelled synthetic)."""


def _effects(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise ConfigError(
                "bad_parameter", f"--systems expects NAME=EFFECT[,NAME=EFFECT...]; got {item!r}"
            ) from None
    if len(out) < 2:
        raise ConfigError("bad_parameter", "--systems needs at least two systems")
    return out


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
    effects = _effects(systems)
    names = tuple(r.strip() for r in readouts.split(",") if r.strip())
    frame = simulate_board(
        np.random.default_rng(seed),
        effects,
        n_tasks=n_tasks,
        n_clusters=n_clusters,
        readouts=names,
        fail_rate=fail_rate,
        cluster_sd=cluster_sd,
        noise_sd=noise_sd,
        label=f"seed{seed}",
    )
    validate_frame(frame, "scores", str(out_path))
    atomic.write_text(out_path, to_csv(frame))
    meta = {
        "synthetic": True,
        "generator": "kit.certify.simulate.simulate_board",
        "seed": seed,
        "effects": effects,
        "n_tasks": n_tasks,
        "n_clusters": n_clusters,
        "readouts": list(names),
        "fail_rate": fail_rate,
        "cluster_sd": cluster_sd,
        "noise_sd": noise_sd,
        "true_differences": true_differences(effects).to_dict("records"),
    }
    sidecar = out_path.with_name(out_path.name + ".synthetic.json")
    atomic.write_text(sidecar, json.dumps(meta, indent=2, sort_keys=True) + "\n")
    click.echo(f"wrote {out_path} ({len(frame)} rows, SYNTHETIC) and {sidecar}")
