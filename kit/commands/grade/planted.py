"""`kit grade planted`: a planted-truth audit set from PubMedQA (kit.reproductions.planted_set).

docs/architecture.md, "Grading"; the group is assembled in kit/commands/grade/__init__.py.
"""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.options import PathDefault
from kit.commands.sealed import sealed_output
from kit.core.tables import emit, render
from kit.registry.fetch import DEFAULT_DEST


@click.command("planted")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for the planted set (sealed, replaced as a set).",
)
@click.option(
    "--raw",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_DEST,
    show_default=True,
    cls=PathDefault,
    help="The fetched registry folder (kit registry fetch).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every planted draw.")
@click.option(
    "--n-answers",
    type=click.IntRange(min=10),
    default=400,
    show_default=True,
    help="Answers (runs) to plant.",
)
@click.option(
    "--p-wrong",
    type=click.FloatRange(0, 1, max_open=True),
    default=0.15,
    show_default=True,
    help="Probability a citation is an on-topic wrong paper.",
)
@click.option(
    "--p-fabricated",
    type=click.FloatRange(0, 1, max_open=True),
    default=0.05,
    show_default=True,
    help="Probability a citation is a PMID that does not exist.",
)
@click.option(
    "--p-transient",
    type=click.FloatRange(0, 1, max_open=True),
    default=0.02,
    show_default=True,
    help="Probability a lookup fails transiently (simulated outage).",
)
@click.option(
    "--audit",
    is_flag=True,
    help="Also run the audit and exit 1 if a planted rate falls outside its interval.",
)
@sealed_output("out_dir", kind="grade-planted")
def planted_cmd(
    out_dir: Path,
    raw: Path,
    seed: int,
    n_answers: int,
    p_wrong: float,
    p_fabricated: float,
    p_transient: float,
    audit: bool,
) -> None:
    """Build a planted-truth audit set from PubMedQA (kit.grade.planted) into a folder.

    Writes runs.jsonl (real conclusions citing the right paper, an on-topic wrong paper or a
    non-existent PMID at the declared rates), checklists.jsonl (6 criteria derived from each
    item), truth.csv (planted type per run), failed_lookups.txt and design.json.

    Example: kit grade planted --out data/planted --seed 0 --audit
    """
    from kit.grade.planted import PlantedDesign
    from kit.registry.loaders import pubmedqa_tables
    from kit.reproductions.planted_set import recovery, write_planted_set

    design = PlantedDesign(n_answers, p_wrong, p_fabricated, p_transient)
    written = write_planted_set(out_dir, pubmedqa_tables(raw), design, seed)
    pset = written.pset
    truth_csv = out_dir / "truth.csv"
    emit(pset.truth, "grade_planted_truth", "csv", truth_csv, "planted truth", str(truth_csv))
    click.echo(
        f"planted: {len(pset.runs)} runs, {written.n_checklists} checklists, seed {seed} -> {out_dir}"
    )
    if audit:
        rec, outside = recovery(written)
        click.echo(render(rec, "table", title="planted recovery"), nl=False)
        if outside:
            click.echo(f"planted audit: outside the interval: {', '.join(outside)}", err=True)
            click.get_current_context().exit(1)
