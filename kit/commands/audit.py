"""`kit audit`: audit an agent's runs end to end into one report (issue 8; kit.audit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kit.audit.runner import DEFAULT_CALIBRATION
from kit.audit.runner import audit as run_and_write
from kit.commands.grading_options import audit_options, citation_check_options

_file = click.Path(dir_okay=False, path_type=Path)
_dir = click.Path(file_okay=False, path_type=Path)


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
@click.option(
    "--adapt",
    is_flag=True,
    default=False,
    help="With --gold: adapt the verifier on the gold citations and anchor the citation rates "
    "on the same gold by cross-prediction (cross-PPI: K folds, each adapted on the others, "
    "predicts the held-out fold and every unlabelled citation; docs/gold.md).",
)
@click.option(
    "--method",
    type=click.Choice(["fine-tune", "recombine"]),
    default="fine-tune",
    show_default=True,
    help="How --adapt adapts the verifier, as `kit guard adapt`: fine-tune its weights "
    "(minutes per fold on CPU, needs torch and a kit-trained card) or recombine its signals "
    "by a fitted rule (seconds; any card).",
)
@click.option(
    "--folds",
    type=click.IntRange(min=2),
    default=5,
    show_default=True,
    help="Folds of --adapt's cross-fitting, at most (fewer where a fold would hold one gold "
    "label only); each fold keeps a run's citations together.",
)
@click.option(
    "--half-width",
    type=click.FloatRange(0, 1, min_open=True),
    default=None,
    help="With --gold: also plan, with the gold as the pilot, how many gold items a PPI++ "
    "interval of +- this needs (times the design effect by run for a citation rate).",
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
