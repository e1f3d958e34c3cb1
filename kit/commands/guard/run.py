"""`kit guard run`: guard a file of cited answers (a thin shell over kit.guard.pipeline)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kit.commands.evaluation_options import GUARD_FLOAT_FMT, json_dump
from kit.commands.options import raw_option
from kit.commands.scoring_options import verifier_options
from kit.commands.sealed import sealed_output
from kit.core import atomic
from kit.core.tables import to_csv


@click.command("run")
@click.argument("answers", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--calibration", required=True, help="As for `kit guard tau`; scores of THIS verifier."
)
@click.option(
    "--alpha", type=float, default=0.1, show_default=True, help="Miss tolerance: catch >= 1-alpha."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for guarded.jsonl, citations.csv and summary.json (sealed, replaced as a set).",
)
@verifier_options
@click.option("--no-reattribute", is_flag=True, help="Flag only; do not try BM25 re-attribution.")
@raw_option
@sealed_output("out", kind="guard-run")
def run_cmd(
    answers: Path,
    calibration: str,
    alpha: float,
    out: Path,
    verifier: str,
    variant: str,
    device: str,
    batch_size: int,
    no_reattribute: bool,
    raw: Path,
) -> None:
    """Guard a file of cited answers: verify, flag (score <= tau), re-attribute, rewrite markers.

    ANSWERS is JSONL, one object a line: {"answer_id": "a1", "answer": "Claim [1].",
    "passages": {"1": "full passage text", ...}} (schemas/json/guard_answers.schema.json).
    Writes OUT/guarded.jsonl (markers rewritten: moved pointers, [N UNVERIFIED] flags; nothing
    deleted), OUT/citations.csv (claim, cited, score, status, moved_to per citation) and
    OUT/summary.json (verifier, alpha, tau, calibration-set hash, flag rate with CIs).

    \b
    Example:
      kit guard run answers.jsonl --calibration cal.csv --alpha 0.1 --out guarded/
    """
    from kit.guard.conformal.calibration import guarantee_line
    from kit.guard.pipeline import guard_run
    from kit.guard.verifiers.load import load_verifier

    r = guard_run(
        answers,
        calibration,
        alpha,
        lambda: load_verifier(verifier, variant, device, batch_size, progress=True),
        raw=raw,
        reattribute=not no_reattribute,
        where=out,
    )
    # OUT is a staged folder (@sealed_output): swapped into place, sealed, when this returns
    lines = "".join(json.dumps(g, ensure_ascii=False, sort_keys=True) + "\n" for g in r.guarded)
    atomic.write_text(out / "guarded.jsonl", lines)
    atomic.write_text(out / "citations.csv", to_csv(r.citations, GUARD_FLOAT_FMT))
    atomic.write_text(out / "summary.json", json_dump(r.summary))
    c = r.summary["status_counts"]
    click.echo(
        f"guarded {r.n_answers} answers, {len(r.citations)} citations at alpha={alpha:g} "
        f"(tau={r.tau:.4g}, n_cal={r.n_cal}): {c['supported']} supported, {c['moved']} moved, "
        f"{c['unverified']} unverified -> {out}"
    )
    click.echo(f"  {guarantee_line(r.guarantee)}")
    for row in r.guarantee["per_type"]:
        click.echo(f"  {row['statement']}")
