"""`kit audit`: audit an agent's runs end to end into one report (issue 8; kit.audit)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from kit.audit.runner import DEFAULT_CALIBRATION, AuditOptions
from kit.audit.runner import audit as run_and_write
from kit.commands.options import (
    PathDefault,
    batch_size_option,
    device_option,
    engine_options,
    score_store_options,
    score_store_root,
    variant_option,
)
from kit.corpus.build import DEFAULT_ROOT as DEFAULT_CORPUS_ROOT
from kit.guard.verifiers.load import DEFAULT_VERIFIER, VERIFIER_HELP
from kit.registry.fetch import DEFAULT_DEST

_file = click.Path(dir_okay=False, path_type=Path)
_dir = click.Path(file_okay=False, path_type=Path)


def citation_check_options(f: Callable[..., None]) -> Callable[..., None]:
    """The options of the citation stages (claims, L1, L2), shared by `kit audit` and its view
    `kit grade audit-citations`: one name and one default per concept."""
    opts = [
        click.option(
            "--corpus",
            default="pubmedqa",
            show_default=True,
            help="Corpora for L1/L2, NAME[,NAME] in resolution order: the first that holds a "
            "citation resolves it; notfound only inside a corpus's declared complete coverage, "
            "else unchecked (`kit corpus list`). pubmedqa (built in) is a sample.",
        ),
        click.option(
            "--corpus-root",
            type=_dir,
            default=DEFAULT_CORPUS_ROOT,
            show_default=True,
            cls=PathDefault,
            help="Built corpora.",
        ),
        click.option(
            "--raw",
            type=_dir,
            default=DEFAULT_DEST,
            show_default=True,
            cls=PathDefault,
            help="Fetched registry.",
        ),
        click.option("--verifier", default=DEFAULT_VERIFIER, show_default=True, help=VERIFIER_HELP),
        variant_option,
        device_option,
        batch_size_option,
        click.option(
            "--yes-at",
            type=click.FloatRange(0, 1),
            default=0.84,
            show_default=True,
            help="L2 yes iff the support score s >= this.",
        ),
        click.option(
            "--partial-at",
            type=click.FloatRange(0, 1),
            default=0.80,
            show_default=True,
            help="L2 partial iff s >= this (and below --yes-at); else no.",
        ),
        click.option(
            "--limit",
            type=click.IntRange(min=1),
            default=None,
            help="Audit only the first N runs in the file's order (printed and recorded).",
        ),
        score_store_options,
        engine_options,
        click.option(
            "--max-answer-chars",
            type=click.IntRange(min=1),
            default=100_000,
            show_default=True,
            help="Answers longer than this are an error (or a counted skip with --skip-bad).",
        ),
        click.option(
            "--skip-bad", is_flag=True, help="Skip malformed run lines (counted) instead."
        ),
        click.option("--quiet", is_flag=True, help="No progress on stderr."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def audit_options(runs: Path, **check: Any) -> AuditOptions:
    """AuditOptions from the values of :func:`citation_check_options` (and any other
    AuditOptions field given by name)."""
    from kit.parallel import Engine

    cache_dir, no_cache, quiet = check.pop("cache_dir"), check.pop("no_cache"), check.pop("quiet")
    engine = Engine(
        check.pop("engine"),
        check.pop("ray_address"),
        check.pop("ray_workers"),
        check.pop("ray_connect_timeout"),
    )
    return AuditOptions(
        runs=runs,
        out=check.pop("out", Path(".")),
        cache_dir=score_store_root(cache_dir, no_cache),
        engine=engine,
        progress=not quiet,
        **check,
    )


@click.command("audit")
@click.argument("runs", type=_file)
@click.option("--out", type=_dir, required=True, help="Report folder (replaced atomically).")
@click.option("--checklists", type=_file, default=None, help="Frozen checklists JSONL.")
@click.option(
    "--judge-verdicts",
    type=_file,
    default=None,
    help="Imported judge verdicts (schemas/grade_verdicts.yaml); default: the built-in judge.",
)
@click.option(
    "--judge",
    default="lexical",
    show_default=True,
    help="The checklist judge when no --judge-verdicts: lexical (built in) or a card folder of "
    "kind llm-judge (kit grade import-judge; its verdicts through the score store).",
)
@click.option(
    "--calibration",
    default=DEFAULT_CALIBRATION,
    show_default=True,
    help="A calibration artifact from `kit guard calibrate` (the lab's own labelled sample; "
    "its verifier must be --verifier), unsupported-class scores (a file, 'qasa'), or the "
    "default held-out PubMedQA wrong-paper pairs scored by THIS verifier.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=None,
    help="Miss tolerance (catch >= 1 - alpha) [the calibration artifact's alpha, else 0.1].",
)
@click.option(
    "--n-cal",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Held-out construction-labelled items for the instrument and default calibration.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the instrument's held-out item sample and of every bootstrap.",
)
@click.option(
    "--gold",
    type=_file,
    default=None,
    help="Human gold labels (metric, item_id, gold 0/1; schemas/audit_gold.yaml) of a uniform "
    "random subset of the judged citations / tasks: the report leads with the rates anchored "
    "on them (PPI++), beside the verifier's / judge's own.",
)
@click.option("--board", type=_file, default=None, help="Board score table (schemas/scores.yaml).")
@click.option("--design", type=_file, default=None, help="Certification design YAML.")
@click.option("--agent-scores", type=_file, default=None, help="The agent's rows for the board.")
@click.option("--agent-system", default=None, help="The agent's system name on the board.")
@click.option("--truth", type=_file, default=None, help="Planted truth (default: beside RUNS).")
@click.option(
    "--failed-lookups", type=_file, default=None, help="Simulated outages (default: beside RUNS)."
)
@citation_check_options
def audit(runs: Path, **params: Any) -> None:
    """Audit an agent's runs end to end: one report.

    RUNS is a runs file in the kit's run format (JSONL; `kit import` converts inspect_ai and
    lm-evaluation-harness logs).

    \b
    Stages: validate every run (nothing is scored until all parse; --limit N keeps the first
    N); claims and their citations (run format v2: one row per claim and cited identifier);
    L1 existence against the corpora (--corpus, in order; an identifier outside every declared
    complete coverage is unchecked, never fabricated); L2 support with the verifier, checked
    first against the tool response the agent read when one names the identifier, else against
    the corpus passage (citations.csv: evidence, tool_score, corpus_score); the split-conformal
    flag rule (flag iff s <= tau), with BM25 re-attribution suggestions; checklist grading
    (--checklists; verdicts imported with --judge-verdicts, else from --judge); behaviour from the
    traces; with --board/--design, the agent's place on the board (certify engine).
    Writes OUT/report.html, summary.json, citations.csv, runs.csv, receipts/. Scores go to
    the shared score store (--cache-dir): a re-audit of the same runs, into any folder,
    rescores nothing (keys: sha256 of verifier ONNX, scoring mode, claim, passage). With
    --engine ray the store's misses are scored on a Ray cluster (docs/scale.md): the outputs
    are the same bytes as with the default --engine local.

    \b
    Example:
      kit grade planted --out /tmp/planted --seed 0
      kit audit /tmp/planted/runs.jsonl --checklists /tmp/planted/checklists.jsonl --out /tmp/audit
    """
    opts = audit_options(runs, **params)
    result = run_and_write(opts)
    from kit.guard.conformal.calibration import guarantee_line
    from kit.report.audit_page import board_synthetic
    from kit.report.audit_text import audit_lines

    s = result.summary
    synthetic = board_synthetic(s, result.board_ranks) is not None
    guarantee = guarantee_line(s["conformal"]["guarantee"])
    lines = audit_lines(
        s, params["out"], result.cache_hits, result.cache_misses, guarantee, synthetic
    )
    click.echo("\n".join(lines))
