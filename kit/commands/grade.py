"""`kit grade`: checklist grading, citation audit, behaviour, replay cache, planted audit.

docs/architecture.md, "Grading"; seed 002 (OpenBioRQ). Each subcommand reads its inputs, calls the
pure core in kit.grade, and prints or writes one table (--format, --out). Exit status: 0 ok; 1 a
check ran and failed (replay misses, a planted rate outside its interval); 2 bad input or
configuration.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd

from kit import atomic, boundary
from kit.commands.audit import audit_options, citation_check_options
from kit.commands.options import (
    PathDefault,
    score_store_options,
    score_store_root,
    table_out_format_option,
)
from kit.commands.sealed import sealed_file, sealed_output
from kit.errors import ConfigError
from kit.grade.reader import read_checklists
from kit.registry.catalog import DEFAULT_DB
from kit.registry.fetch import DEFAULT_DEST
from kit.report.tables import render
from kit.runs.model import Citation
from kit.runs.reader import RunsRead, read_runs
from kit.schema import validate_frame

_SUFFIX_FORMAT = {".csv": "csv", ".md": "markdown", ".tex": "latex", ".json": "json"}

_format_option = table_out_format_option
_out_option = click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the table here (atomically) instead of printing it.",
)
_max_chars_option = click.option(
    "--max-answer-chars",
    type=click.IntRange(min=1),
    default=100_000,
    show_default=True,
    help="Answers longer than this are an error (or a counted skip with --skip-bad).",
)
_skip_option = click.option(
    "--skip-bad",
    is_flag=True,
    help="Skip malformed run lines (counted and listed) instead of failing.",
)


def emit(frame: pd.DataFrame, schema: str, fmt: str | None, out: Path | None, title: str) -> None:
    """Validate ``frame`` against ``schemas/<schema>.yaml``, then print or write it."""
    frame = validate_frame(frame, schema, str(out) if out else f"<{schema}>")
    if out is None:
        click.echo(render(frame, fmt or "table", title=title), nl=False)
        return
    chosen = fmt or _SUFFIX_FORMAT.get(out.suffix.lower(), "csv")
    atomic.write_text(out, render(frame, chosen, title=title))
    click.echo(f"{title}: {len(frame)} rows -> {out}", err=True)


def _read_runs(path: Path, max_chars: int, skip_bad: bool) -> RunsRead:
    res = read_runs(path, max_chars, "skip" if skip_bad else "raise")
    for s in res.skipped:
        click.echo(
            f"skipped {path}, row {s.line}, column '{s.field}': [{s.reason}] {s.message}", err=True
        )
    if res.skipped:
        click.echo(f"{len(res.skipped)} line(s) skipped, {len(res.runs)} run(s) read", err=True)
    return res


def _pmid_lookup(texts: dict[str, str]) -> Callable[[Citation], str | None]:
    """Citation -> abstract text (PMIDs only; other identifier types have no corpus)."""

    def lookup(c: Citation) -> str | None:
        return texts.get(c.value) if c.id_type == "PMID" else None

    return lookup


@click.group()
def grade() -> None:
    """Grade agent runs: frozen checklists, two-level citation audit, behaviour, replay cache.

    \b
    Examples:
      kit grade runs examples/grade/runs.jsonl
      kit grade judge examples/grade/runs.jsonl --checklists examples/grade/checklists.jsonl --out verdicts.csv
      kit grade checklist verdicts.csv --checklists examples/grade/checklists.jsonl --rates
      kit grade import-judge --base-url http://127.0.0.1:8000/v1 --model NAME --out data/judge
      kit grade judge-swap lexical.csv llm.csv --checklists examples/grade/checklists.jsonl --out swap/
      kit grade audit-citations examples/grade/runs.jsonl --catalog data/prepared/catalog.duckdb
      kit grade behaviour examples/grade/runs.jsonl --format markdown
      kit grade replay check examples/grade/runs.jsonl --cache examples/grade/cache.jsonl
      kit grade planted --out data/planted --seed 0
    """


@grade.command("runs")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@_max_chars_option
@_skip_option
@click.option(
    "--guard-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the guard input (answer_id, answer, passages) as JSONL; passages from --catalog.",
)
@click.option(
    "--catalog",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DB,
    show_default=True,
    cls=PathDefault,
    help="The DuckDB catalog (kit db build): --guard-out takes cited passages from it.",
)
@_format_option
@_out_option
@sealed_file("out", kind="grade-runs", also=("guard_out",))
def runs_cmd(
    runs: Path,
    max_answer_chars: int,
    skip_bad: bool,
    guard_out: Path | None,
    catalog: Path,
    fmt: str | None,
    out: Path | None,
) -> None:
    """Validate RUNS, a runs JSONL file (schemas/json/agent_run.schema.json), and list its runs.

    Errors name the file, line and field (bad JSON, non-UTF-8, missing answer, duplicate
    run_id, an answer over --max-answer-chars). --guard-out converts the runs to the citation
    guard's input records.

    Example: kit grade runs examples/grade/runs.jsonl --format csv
    """
    res = _read_runs(runs, max_answer_chars, skip_bad)
    frame = pd.DataFrame(
        [
            {
                "run_id": r.run_id,
                "task_id": r.task_id,
                "model": r.model,
                "tools_enabled": r.tools_enabled,
                "n_tool_calls": r.n_tool_calls,
                "n_cited": len(r.cited),
                "answer_chars": len(r.answer),
            }
            for r in sorted(res.runs, key=lambda r: r.run_id)
        ],
        columns=[
            "run_id",
            "task_id",
            "model",
            "tools_enabled",
            "n_tool_calls",
            "n_cited",
            "answer_chars",
        ],
    )
    if guard_out is not None:
        from kit.grade.corpus import CatalogPassages
        from kit.runs.v1 import to_guard_record

        texts = CatalogPassages(catalog).all_texts("PMID")
        lines = [
            json.dumps(to_guard_record(r, _pmid_lookup(texts)), sort_keys=True)
            for r in sorted(res.runs, key=lambda r: r.run_id)
        ]
        atomic.write_text(guard_out, "".join(x + "\n" for x in lines))
        click.echo(f"guard input: {len(lines)} records -> {guard_out}", err=True)
    emit(frame, "grade_runs", fmt, out, "runs")


@grade.command("judge")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--checklists",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Frozen checklists JSONL (each with its frozen_sha256).",
)
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
@_max_chars_option
@_skip_option
@_format_option
@_out_option
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

    res = _read_runs(runs, max_answer_chars, skip_bad)
    cls = read_checklists(checklists)
    scorer = passage_of = None
    if catalog is not None:
        from kit.grade.corpus import CatalogPassages
        from kit.grade.support import LexicalSupport

        texts = CatalogPassages(catalog).all_texts("PMID")
        scorer = LexicalSupport.from_corpus(texts[k] for k in sorted(texts))
        passage_of = _pmid_lookup(texts)
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


@grade.command("checklist")
@click.argument("verdicts", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--checklists",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Frozen checklists JSONL (each with its frozen_sha256).",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=0.5,
    show_default=True,
    help="Solved iff score >= threshold.",
)
@click.option("--rates", is_flag=True, help="Solve rate per (judge, model) with Wilson 95% CI.")
@click.option(
    "--agreement",
    default=None,
    metavar="JUDGE_A,JUDGE_B",
    help="Spearman and kappa between two judges.",
)
@_format_option
@_out_option
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
    from kit.grade.checklist import judge_agreement, score_verdicts, solve_rates
    from kit.schema import read_table

    cls = read_checklists(checklists)
    table = read_table(verdicts, "grade_verdicts")
    scores = score_verdicts(cls, table, threshold)
    if agreement:
        parts = [p.strip() for p in agreement.split(",")]
        if len(parts) != 2 or not all(parts):
            raise ConfigError(
                "bad_parameter", f"--agreement must be JUDGE_A,JUDGE_B; got {agreement!r}"
            )
        emit(
            pd.DataFrame([judge_agreement(scores, *parts)]),
            "grade_agreement",
            fmt,
            out,
            "judge agreement",
        )
    elif rates:
        emit(solve_rates(scores), "grade_solve_rates", fmt, out, "solve rates")
    else:
        emit(scores, "grade_scores", fmt, out, "checklist scores")


@grade.command("audit-citations")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--catalog",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Deprecated and ignored (one release): L1/L2 run over --corpus / --raw exactly as in "
    "`kit audit`.",
)
@click.option(
    "--citations-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write one row per audited (run, claim, citation) (l1, evidence, scores, l2) as csv.",
)
@citation_check_options
@_format_option
@_out_option
@sealed_file("out", kind="grade-audit-citations", also=("citations_out",))
def audit_cmd(
    runs: Path,
    catalog: Path | None,
    citations_out: Path | None,
    fmt: str | None,
    out: Path | None,
    **check: Any,
) -> None:
    """Two-level citation audit of RUNS (a runs JSONL file): the claims, L1 and L2 stages of
    `kit audit`, as a rates table.

    A view of the `kit audit` pipeline (kit.audit.pipeline.audit_l1_l2): the same functions,
    options and defaults, so both give the same L1/L2 figures on the same input. L1: found /
    notfound / transient (lookup failure; never fabrication) / unchecked (outside every
    corpus's declared complete coverage). L2: yes / partial / no at --yes-at / --partial-at,
    checked first against the tool response the agent read, else the corpus passage. Rates
    pooled, by identifier type, by model, with Wilson 95% CIs. No conformal flags, no report:
    use `kit audit` for those.

    Example: kit grade audit-citations runs.jsonl --verifier minilm-bi --format markdown
    """
    from kit.audit.pipeline import audit_l1_l2
    from kit.grade.citation_audit import CLUSTER_NOTE, audit_rates

    if catalog is not None:
        click.echo(
            "--catalog is deprecated and ignored: L1/L2 run over --corpus / --raw as in `kit audit`",
            err=True,
        )
    result = audit_l1_l2(audit_options(runs, **check))
    audited, rule = result.check.frame, result.check.rule
    if citations_out is not None:
        frame = validate_frame(audited, "grade_audited_citations", str(citations_out))
        atomic.write_text(citations_out, render(frame, "csv"))
    n = len(result.inputs.runs.runs)
    if check["limit"] is not None:
        click.echo(
            f"--limit {check['limit']}: the first {n} of {result.inputs.n_in_file} runs", err=True
        )
    click.echo(
        f"instrument: {result.context.scorer.name}; L2 yes >= {rule.yes_at}, partial >= "
        f"{rule.partial_at}; {CLUSTER_NOTE}; score store {result.context.scorer.hits} hit(s), "
        f"{result.context.scorer.misses} scored",
        err=True,
    )
    emit(audit_rates(audited), "grade_citation_rates", fmt, out, "citation audit")


@grade.command("behaviour")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@_max_chars_option
@_skip_option
@_format_option
@_out_option
@sealed_file("out", kind="grade-behaviour")
def behaviour_cmd(
    runs: Path, max_answer_chars: int, skip_bad: bool, fmt: str | None, out: Path | None
) -> None:
    """Zero-tool, non-attempt and cite rates and tool calls per answer of RUNS (a runs JSONL
    file), by model x difficulty.

    Tool-disabled runs (tools_enabled=false) form their own arm ('no_tools'); their zero-tool
    rate is undefined (empty), never counted as an agent that skipped its tools.

    Example: kit grade behaviour runs.jsonl --format markdown
    """
    from kit.grade.behaviour import behaviour_rates, run_behaviour

    res = _read_runs(runs, max_answer_chars, skip_bad)
    if not res.runs:
        raise ConfigError("no_runs", f"{runs}: no runs to summarise")
    emit(behaviour_rates(run_behaviour(res.runs)), "grade_behaviour_rates", fmt, out, "behaviour")


@grade.group("replay")
def replay() -> None:
    """Tool-response replay cache: request keys, lookups, coverage of a runs file.

    \b
    Examples:
      kit grade replay key pubmed_search '{"q": "aspirin"}'
      kit grade replay get --cache cache.jsonl pubmed_search '{"q": "aspirin"}'
      kit grade replay check runs.jsonl --cache cache.jsonl
    """


def _args(text: str) -> dict[str, Any]:
    obj = boundary.parse_json(text, "ARGUMENTS")
    if not isinstance(obj, dict):
        raise ConfigError("bad_parameter", "ARGUMENTS must be a JSON object")
    return obj


@replay.command("key")
@click.argument("tool")
@click.argument("arguments")
def replay_key_cmd(tool: str, arguments: str) -> None:
    """Print the request key of TOOL called with ARGUMENTS (a JSON object): sha256 of canonical
    JSON {"arguments": ..., "tool": ...}.

    Example: kit grade replay key pubmed_search '{"q": "aspirin"}'
    """
    from kit.grade.replay import request_key

    click.echo(request_key(tool, _args(arguments)))


@replay.command("get")
@click.option(
    "--cache",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The replay cache JSONL (recorded tool responses).",
)
@click.argument("tool")
@click.argument("arguments")
def replay_get_cmd(cache: Path, tool: str, arguments: str) -> None:
    """Answer one request, TOOL with ARGUMENTS (a JSON object), from the cache only (replay
    mode); a miss is an error (exit 2).

    Example: kit grade replay get --cache cache.jsonl pubmed_search '{"q": "aspirin"}'
    """
    from kit.grade.replay import ReplayTools, load_cache

    tools = ReplayTools("replay", load_cache(cache))
    click.echo(json.dumps(tools(tool, _args(arguments)), sort_keys=True, ensure_ascii=False))


@replay.command("check")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--cache",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The replay cache JSONL (recorded tool responses).",
)
@_max_chars_option
@_skip_option
@_format_option
@_out_option
@sealed_file("out", kind="grade-replay-check")
def replay_check_cmd(
    runs: Path,
    cache: Path,
    max_answer_chars: int,
    skip_bad: bool,
    fmt: str | None,
    out: Path | None,
) -> None:
    """Is every recorded tool call of RUNS answerable from the cache (and its response hash
    unchanged)? Exit 1 naming the first missing request when not.

    Example: kit grade replay check runs.jsonl --cache cache.jsonl
    """
    from kit.grade.replay import load_cache, replay_coverage

    res = _read_runs(runs, max_answer_chars, skip_bad)
    cov = replay_coverage(res.runs, load_cache(cache))
    emit(cov, "grade_replay_coverage", fmt, out, "replay coverage")
    miss = cov[~cov["in_cache"]]
    bad = cov[cov["response_match"].eq(False)]
    if len(miss) or len(bad):
        if len(miss):
            r = miss.iloc[0]
            click.echo(
                f"replay check failed: {len(miss)} call(s) not in the cache; first: run "
                f"{r['run_id']} call {r['call_index']} tool {r['tool']!r} key {r['key']}",
                err=True,
            )
        if len(bad):
            click.echo(
                f"replay check failed: {len(bad)} cached response(s) differ from the trace's hash",
                err=True,
            )
        click.get_current_context().exit(1)
    click.echo(f"replay check ok: {len(cov)} call(s), all in the cache", err=True)


@grade.command("frozen-core")
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
@_format_option
@_out_option
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
    from kit.grade.frozen_core import all_roster_fail, churn
    from kit.schema import read_table

    names = [r.strip() for r in roster.split(",") if r.strip()]
    if not names:
        raise ConfigError("bad_parameter", "--roster needs at least one model")
    a = all_roster_fail(read_table(scores, "grade_task_scores"), names, threshold)
    row: dict[str, object] = {
        "roster": ",".join(names),
        "threshold": threshold,
        "n_tasks": a.n_tasks,
        "n_incomplete": a.n_incomplete,
        "core_size": len(a.members),
    }
    if second is not None:
        b = all_roster_fail(read_table(second, "grade_task_scores"), names, threshold)
        c = churn(a.members, b.members)
        row.update(
            {
                "core_size_second": c.n_b,
                "both": c.n_both,
                "only_first": len(c.only_a),
                "only_second": len(c.only_b),
                "jaccard": c.jaccard,
                "retention": c.retention,
                "flip_rate": c.flip_rate,
            }
        )
    emit(pd.DataFrame([row]), "grade_frozen_core", fmt, out, "frozen core")


@grade.command("planted")
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
    from kit.grade import planted as pl
    from kit.registry.loaders import pubmedqa_tables
    from kit.runs.v1 import run_line

    design = pl.PlantedDesign(n_answers, p_wrong, p_fabricated, p_transient)
    t = pubmedqa_tables(raw)
    corpus = pl.build_corpus(
        t["pubmedqa_items"], t["pubmedqa_contexts"], t["pubmedqa_meshes"], design
    )
    pset = pl.plant(corpus, design, np.random.default_rng(seed), seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic.write_text(out_dir / "runs.jsonl", "".join(run_line(r) + "\n" for r in pset.runs))
    tasks = sorted({r.task_id for r in pset.runs})
    cls = [pl.derive_checklist(corpus, t.removeprefix("pubmedqa-")) for t in tasks]
    atomic.write_text(
        out_dir / "checklists.jsonl",
        "".join(json.dumps(c.to_record(), sort_keys=True, ensure_ascii=False) + "\n" for c in cls),
    )
    truth = validate_frame(pset.truth, "grade_planted_truth", str(out_dir / "truth.csv"))
    atomic.write_text(out_dir / "truth.csv", render(truth, "csv"))
    atomic.write_text(
        out_dir / "failed_lookups.txt", "".join(v + "\n" for v in sorted(pset.failed_lookups))
    )
    meta = {
        "seed": seed,
        "n_answers": n_answers,
        "p_wrong": p_wrong,
        "p_fabricated": p_fabricated,
        "p_transient": p_transient,
        "wrong_given_found": design.wrong_given_found,
        "pool_items": len(corpus.pool),
    }
    atomic.write_text(out_dir / "design.json", json.dumps(meta, indent=2, sort_keys=True) + "\n")
    click.echo(f"planted: {len(pset.runs)} runs, {len(cls)} checklists, seed {seed} -> {out_dir}")
    if audit:
        from kit.grade.support import LexicalSupport

        scorer = LexicalSupport.from_corpus(corpus.abstract[p] for p in sorted(corpus.abstract))
        rec = pl.audit_planted(corpus, pset, scorer, pl.LEXICAL_RULE)["recovery"]
        click.echo(render(rec.drop(columns=["note"]), "table", title="planted recovery"), nl=False)
        judged = rec[
            rec["metric"].isin(["fabrication_rate", "wrong_paper_corrected", "transient_excluded"])
        ]
        if not judged["covered"].all():
            bad = ", ".join(judged.loc[~judged["covered"], "metric"])
            click.echo(f"planted audit: outside the interval: {bad}", err=True)
            click.get_current_context().exit(1)


from kit.commands.grade_judge import (  # noqa: E402  (issue 40)
    import_judge_cmd,
    judge_swap_cmd,
    validate_judge_cmd,
)

grade.add_command(import_judge_cmd)
grade.add_command(judge_swap_cmd)
grade.add_command(validate_judge_cmd)
