"""`kit certify`: a certified leaderboard from a score table or harness logs (the verb:
kit.certify.run.certify_input)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kit.certify.design import ASSUMED_LABEL, parse_design
from kit.certify.run import (
    DESIGN_COPY,
    SYNTHETIC_FILE,
    CertifiedBoard,
    CertifyRequest,
    LogRequest,
    certify_input,
    verdict_counts,
)
from kit.commands.options import format_option
from kit.commands.scoring_options import engine_options
from kit.commands.sealed import sealed_output
from kit.core import atomic
from kit.core.parallel import Engine, import_ray
from kit.core.schema import read_yaml
from kit.core.tables import FULL_PRECISION, render, write_table

_path = click.Path(dir_okay=False, path_type=Path)


@click.command("certify")
@click.argument("scores", type=click.Path(exists=True, path_type=Path))
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
    "(a plain table without any cluster column makes each task its own cluster); for harness "
    "logs, the sample metadata field (lm-eval: doc field) that holds it (default: each sample "
    "its own cluster).",
)
@click.option(
    "--score",
    default=None,
    help="Harness logs: the score to certify: an inspect_ai scorer name (SCORER.KEY for a key "
    "of a dict score) or an lm-eval metric (default: the logs' only one).",
)
@click.option(
    "--filter",
    "filter_name",
    default=None,
    help="lm-eval logs: the filter whose lines are read (default: each file's first).",
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
    score: str | None,
    filter_name: str | None,
    fmt: str,
    engine: str,
    ray_address: str | None,
    ray_workers: int | None,
    ray_connect_timeout: float | None,
) -> None:
    """Certify every pair of a score table, or of harness logs, under a declared design (Eq. 4).

    SCORES is one score table (plain or long, below), or harness logs (a folder, or several
    .eval / .json / samples_*.jsonl files); DESIGN the declared design YAML.

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
    - harness logs (docs/certify.md, "From harness logs"): inspect_ai logs or lm-eval samples
      files of one task, one log per model. Mixed tasks or datasets exit 2; a pair of logs
      whose declared conditions differ (dataset samples, scorers, tools, limits, solver plan,
      generation config) is refused, the reason naming the fields and both values. Pairs by
      sample id; epochs averaged per (model, sample); an errored, limited or unscored sample
      is a failed run. Also writes means.csv and unpaired.csv (the conventional analysis:
      samples independent, unpaired z-test), logs.csv, conditions.csv and summary.json.
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
    request = CertifyRequest(null_draws, validate, seed, calibration_scope, spec)
    logs = LogRequest(score, filter_name)
    board = certify_input([scores], design, targets_path, cluster_column, request, logs, _progress)
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_tables(board, out_dir)
    if board.synthetic is not None:
        atomic.write_text(
            out_dir / SYNTHETIC_FILE, json.dumps(board.synthetic, indent=2, sort_keys=True) + "\n"
        )
    if figure:
        from kit.report.rank_figure import write_rank_figure

        synthetic = board.synthetic is not None
        write_rank_figure(
            board.result.ranks, out_dir / "ranks.png", alpha=design.alpha, synthetic=synthetic
        )
    _summary(board, scores, design_path)
    click.echo(render(board.result.ranks, fmt, title="Rank intervals (composite)"), nl=False)
    if board.harness is not None:
        title = "Certified (paired) beside conventional (unpaired z, samples independent)"
        click.echo(render(board.harness.unpaired[list(SIDE_BY_SIDE)], fmt, title=title), nl=False)


def _progress(line: str) -> None:
    click.echo(line, err=True)


def _write_tables(board: CertifiedBoard, out_dir: Path) -> None:
    """Every table of ``board`` into ``out_dir``, validated; csv at full float precision."""
    result = board.result
    tables = [
        (result.pairs, "certify_pairs", "pairs", ("csv",)),
        (result.ranks, "certify_ranks", "ranks", ("csv", "markdown", "latex")),
        (result.conventional, "certify_conventional", "conventional", ("csv",)),
        (
            result.conventional_counts,
            "certify_conventional_counts",
            "conventional_counts",
            ("csv",),
        ),
        (board.calibration, "certify_calibration", "calibration", ("csv",)),
        (board.loco, "certify_loco", "loco", ("csv",)),
        (board.validity, "certify_validity", "validity", ("csv",)),
    ]
    if board.harness is not None:
        h = board.harness
        tables += [
            (h.means, "certify_log_means", "means", ("csv", "markdown")),
            (h.unpaired, "certify_log_unpaired", "unpaired", ("csv", "markdown")),
            (h.logs, "certify_logs", "logs", ("csv",)),
            (h.conditions, "certify_conditions", "conditions", ("csv",)),
        ]
        text = json.dumps(h.summary, indent=2, sort_keys=True) + "\n"
        atomic.write_text(out_dir / "summary.json", text)
    for frame, schema, name, formats in tables:
        if frame is not None:
            write_table(frame, out_dir / name, formats, csv_float_fmt=FULL_PRECISION, schema=schema)


SIDE_BY_SIDE = ("system_a", "system_b", "gap_paired", "q", "verdict", "diff_unpaired", "p_unpaired")


def _summary(board: CertifiedBoard, scores: Path, design_path: Path) -> None:
    """The lines `kit certify` prints above the rank table."""
    result = board.result
    if board.table_kind == "plain":
        click.echo(f"plain score table ({scores}): " + "; ".join(board.notes))
    if board.table_kind == "logs":
        for note in board.notes:
            click.echo(f"harness logs: {note}")
    if result.admissibility == "assumed":
        click.echo(
            f"{ASSUMED_LABEL.capitalize()} ({design_path}: 'admissibility: assumed'): no pair "
            "was tested against Definition 1; every pair is taken as exactly matched "
            "(eps_outside = 0), and every verdict below rests on that assumption"
        )
    click.echo(
        f"{len(result.pairs)} (pair, readout) rows; Bonferroni family: {result.family}, "
        f"m = {result.m}; inference = {result.inference}; "
        + ", ".join(f"{k}: {v}" for k, v in verdict_counts(result).items())
    )
    click.echo(
        f"failed runs: {result.n_failed_runs} of {len(board.frame)} rows; composite common task "
        f"set: {result.n_composite_tasks} of {result.n_tasks} tasks "
        f"({result.n_tasks - result.n_composite_tasks} lost: a task leaves the composite of "
        "every pair when any system lacks a composite there)"
    )
    if board.validity_line:
        click.echo(f"validity: {board.validity_line}")
