"""`kit guard tau` / `kit guard coverage`: the split-conformal tau curve and its held-out catch."""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.evaluation_options import GUARD_FLOAT_FMT
from kit.commands.options import deprecated_alias, raw_option
from kit.commands.sealed import sealed_file
from kit.core import atomic
from kit.core.errors import ConfigError
from kit.core.schema import validate_frame
from kit.core.tables import to_csv
from kit.guard.conformal.curves import parse_alphas, parse_ints, tau_curve_table


@click.command("tau")
@click.option(
    "--calibration",
    required=True,
    help="Calibration scores: a registry name ('qasa'), a JSON file with "
    "'unsupported_p_attr_scores', or a CSV with columns score,label.",
)
@click.option(
    "--alphas",
    default="0.02:0.50:0.02",
    show_default=True,
    help="Miss tolerances: START:STOP:STEP (inclusive) or a,b,c, each in (0, 1).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The tau curve CSV to write (sealed in FILE.receipt.json).",
)
@raw_option
@sealed_file("out", kind="guard-tau")
def tau_cmd(calibration: str, alphas: str, out: Path, raw: Path) -> None:
    """Split-conformal tau curve: tau = s_(k), k = ceil((n+1)(1-alpha)) on unsupported scores.

    Flag a citation when its score <= tau; catches >= 1-alpha of exchangeable unsupported
    citations. Writes columns alpha, n_cal, k, tau, cal_recall, guarantee (the statement with
    its condition: which calibration sample the unsupported citations must be exchangeable
    with) and false_flag_rate/_lo/_hi (Wilson 95% flag rate of the supported calibration
    scores; empty without any). Refuses (exit 2) when an alpha needs k > n_cal.

    \b
    Example:
      kit guard tau --calibration qasa --alphas 0.02:0.50:0.02 --out tau.csv
    """
    curve = tau_curve_table(calibration, alphas, raw, str(out))
    atomic.write_text(out, to_csv(curve.frame, GUARD_FLOAT_FMT))
    cal = curve.calibration
    click.echo(
        f"tau curve: {len(curve.frame)} alphas, n_cal={cal.unsupported.size}, "
        f"calibration sha256={cal.sha256[:16]} -> {out}"
    )
    click.echo(f"  guarantee per row: {curve.guarantee}")


@click.command("coverage")
@click.option("--calibration", required=True, help="As for `kit guard tau`.")
@click.option(
    "--alphas",
    default="0.02,0.06,0.10",
    show_default=True,
    help="Miss tolerances as for `kit guard tau`; each row's catch target is 1 - alpha.",
)
@deprecated_alias(
    "--targets",
    "--alphas",
    "alphas",
    transform=lambda t: ",".join(repr(round(1 - x, 10)) for x in parse_alphas(t)),
)
@click.option(
    "--n-cal",
    "n_cal",
    default="25,50,100,200",
    show_default=True,
    help="Calibration sizes to compare, a comma list (one row per alpha and size).",
)
@click.option(
    "--n-test", type=int, default=None, help="Test size per split [min(200, pool - n_cal)]."
)
@click.option(
    "--splits",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Random calibration/test splits per row.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the splits.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The coverage CSV to write (sealed in FILE.receipt.json).",
)
@raw_option
@sealed_file("out", kind="guard-coverage")
def coverage_cmd(
    calibration: str,
    alphas: str,
    n_cal: str,
    n_test: int | None,
    splits: int,
    seed: int,
    out: Path,
    raw: Path,
) -> None:
    """Held-out catch rate of the conformal vs the naive-quantile threshold over random splits.

    One row per (alpha, n_cal); its catch target is 1 - alpha (column target). Each split
    draws n_cal calibration and n_test test scores (without replacement) from the
    unsupported pool. A row whose alpha needs k > n_cal, or whose n_cal + n_test exceeds the
    pool, is written with an explicit 'refused: ...' verdict (exit status stays 0).

    \b
    Example:
      kit guard coverage --calibration qasa --alphas 0.1,0.02 --n-cal 25,50,100,200 --splits 1000 --seed 0 --out coverage.csv
    """
    from kit.guard.conformal.calibration import guarantee_columns, load_calibration
    from kit.reproductions.guard import coverage_table

    cal = load_calibration(calibration, raw)
    tg = [round(1.0 - a, 10) for a in parse_alphas(alphas)]  # catch targets 1 - alpha
    ns = parse_ints(n_cal, "--n-cal")
    if n_test is not None and n_test < 1:
        raise ConfigError("bad_parameter", f"--n-test must be >= 1; got {n_test}")
    frame = coverage_table(cal.unsupported, tg, ns, splits, seed, n_test)
    frame = frame.assign(**guarantee_columns(cal, frame["alpha"].to_numpy(float)))
    frame = validate_frame(frame, "guard_coverage", str(out))
    atomic.write_text(out, to_csv(frame, GUARD_FLOAT_FMT))
    refused = int(frame["verdict"].str.startswith("refused").sum())
    below = int((frame["verdict"] == "below_target").sum())
    click.echo(
        f"coverage: {len(frame)} rows ({refused} refused, {below} below target), {splits} "
        f"splits each, seed {seed} -> {out}"
    )
    click.echo(f"  guarantee per row: {frame['guarantee'].iloc[0]}")
    if cal.supported is None:
        click.echo("  false-flag rate on supported citations: not measurable (no supported pairs)")
