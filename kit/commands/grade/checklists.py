"""`kit grade judge`, `checklist` and `frozen-core`: verdicts, checklist scores, the frozen core.

docs/architecture.md, "Grading"; the group is assembled in kit/commands/grade/__init__.py.
"""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.grade.runs import emit, read_runs_reporting
from kit.commands.grading_options import (
    checklists_option,
    max_answer_chars_option,
    skip_bad_option,
    solve_threshold_option,
)
from kit.commands.options import table_file_option, table_out_format_option
from kit.commands.scoring_options import score_store_options, score_store_root
from kit.commands.sealed import sealed_file
from kit.core.errors import ConfigError
from kit.grade.reader import read_checklists


@click.command("judge")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@checklists_option
@click.option(
    "--judge",
    default="lexical",
    show_default=True,
    help="The checklist judge: lexical (built in, deterministic; the baseline) or a card folder "
    "of kind llm-judge (kit grade import-judge).",
)
@click.option(
    "--judge-name",
    default=None,
    help="Name of the judge in the verdict table (column judge) [lexical; an LLM judge's card "
    "name].",
)
@click.option(
    "--catalog",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="DuckDB catalog: when given, the lexical judge's must_ground uses the lexical support "
    "scorer on cited abstracts (an LLM judge reads the answer only).",
)
@score_store_options
@max_answer_chars_option
@skip_bad_option
@table_out_format_option
@table_file_option
@sealed_file("out", kind="grade-judge")
def judge_cmd(
    runs: Path,
    checklists: Path,
    judge: str,
    judge_name: str | None,
    catalog: Path | None,
    cache_dir: Path,
    no_cache: bool,
    max_answer_chars: int,
    skip_bad: bool,
    fmt: str | None,
    out: Path | None,
) -> None:
    """Grade each run in RUNS (a runs JSONL file) against its frozen checklist: a verdict met /
    partial / not_met per criterion, from --judge.

    lexical (the default) is the kit's deterministic judge (kit.grade.judge rules); a card
    folder of kind llm-judge asks a chat model (kit.grade.llm_judge), its verdicts kept in the
    score store (a second run asks nothing) and its short reason in the column reason. A
    question that fails or whose reply is no verdict exits 2 with nothing written.

    Writes a verdict table (schemas/grade_verdicts.yaml) that `kit grade checklist` scores and
    `kit grade judge-swap` compares.

    \b
    Example:
      kit grade judge runs.jsonl --checklists checklists.jsonl --out verdicts.csv
      kit grade judge runs.jsonl --checklists checklists.jsonl --judge data/judge-qwen --out llm.csv
    """
    from kit.grade.judge import judge_runs, open_judge

    res = read_runs_reporting(runs, max_answer_chars, skip_bad)
    cls = read_checklists(checklists)
    scorer = passage_of = None
    if catalog is not None:
        from kit.grade.corpus import CatalogPassages, pmid_lookup
        from kit.grade.support import LexicalSupport

        texts = CatalogPassages(catalog).all_texts("PMID")
        scorer = LexicalSupport.from_corpus(texts[k] for k in sorted(texts))
        passage_of = pmid_lookup(texts)
    instrument, name = open_judge(
        judge, score_store_root(cache_dir, no_cache), scorer=scorer, passage_of=passage_of
    )
    try:
        frame, unmatched = judge_runs(cls, res.runs, judge_name or name, instrument=instrument)
    finally:
        usage = getattr(instrument, "usage_line", None)
        if usage is not None:
            click.echo(f"judge: {usage()}", err=True)
            instrument.close()  # type: ignore[attr-defined]
    if unmatched:
        click.echo(
            f"{len(unmatched)} run(s) without a checklist: {', '.join(unmatched[:10])}", err=True
        )
    emit(frame, "grade_verdicts", fmt, out, "verdicts")


@click.command("checklist")
@click.argument("verdicts", type=click.Path(dir_okay=False, path_type=Path))
@checklists_option
@solve_threshold_option
@click.option("--rates", is_flag=True, help="Solve rate per (judge, model) with Wilson 95% CI.")
@click.option(
    "--agreement",
    default=None,
    metavar="JUDGE_A,JUDGE_B",
    help="Spearman and kappa between two judges.",
)
@table_out_format_option
@table_file_option
@sealed_file("out", kind="grade-checklist")
def checklist_cmd(
    verdicts: Path,
    checklists: Path,
    threshold: float,
    rates: bool,
    agreement: str | None,
    fmt: str | None,
    out: Path | None,
) -> None:
    """Score VERDICTS, a verdict table (any judge), against frozen checklists.

    Score = weighted mean of credits (met 1, partial 0.5, not_met 0; must_avoid inverted);
    solved iff score >= --threshold. Checklists whose frozen_sha256 does not match are refused.

    Example: kit grade checklist verdicts.csv --checklists checklists.jsonl --rates --format markdown
    """
    from kit.core.schema import read_table
    from kit.grade.checklist import judge_agreement_table, score_verdicts, solve_rates

    cls = read_checklists(checklists)
    table = read_table(verdicts, "grade_verdicts")
    scores = score_verdicts(cls, table, threshold)
    if agreement:
        parts = [p.strip() for p in agreement.split(",")]
        if len(parts) != 2 or not all(parts):
            raise ConfigError(
                "bad_parameter", f"--agreement must be JUDGE_A,JUDGE_B; got {agreement!r}"
            )
        emit(judge_agreement_table(scores, *parts), "grade_agreement", fmt, out, "judge agreement")
    elif rates:
        emit(solve_rates(scores), "grade_solve_rates", fmt, out, "solve rates")
    else:
        emit(scores, "grade_scores", fmt, out, "checklist scores")


@click.command("frozen-core")
@click.argument("scores", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--roster", required=True, help="Comma list of roster models (all must fail).")
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=0.5,
    show_default=True,
    help="A task is solved iff its score >= threshold.",
)
@click.option(
    "--second",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Scores of a second decode: report churn.",
)
@table_out_format_option
@table_file_option
@sealed_file("out", kind="grade-frozen-core")
def frozen_core_cmd(
    scores: Path,
    roster: str,
    threshold: float,
    second: Path | None,
    fmt: str | None,
    out: Path | None,
) -> None:
    """The all-roster-fail core from SCORES, per-task scores (task_id, model, score), and, with
    --second, membership churn between two decodes.

    Example: kit grade frozen-core scores.csv --roster GLM-5.1,Qwen3.6,DeepSeek-V4 --second redecode.csv
    """
    from kit.core.schema import read_table
    from kit.grade.frozen_core import core_summary, core_table

    names = [r.strip() for r in roster.split(",") if r.strip()]
    if not names:
        raise ConfigError("bad_parameter", "--roster needs at least one model")
    later = (lambda: read_table(second, "grade_task_scores")) if second is not None else None
    row = core_summary(read_table(scores, "grade_task_scores"), names, threshold, later)
    emit(core_table(row), "grade_frozen_core", fmt, out, "frozen core")
