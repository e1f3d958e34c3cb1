"""`kit audit`: audit an agent's runs end to end into one report (issue 8; kit.audit)."""

from __future__ import annotations

from pathlib import Path

import click

from kit.audit.runner import DEFAULT_CALIBRATION, AuditOptions
from kit.audit.runner import audit as run_and_write
from kit.commands.options import engine_options, score_store_options, score_store_root
from kit.corpus.build import DEFAULT_ROOT as DEFAULT_CORPUS_ROOT
from kit.guard.verifier import DEFAULT_VERIFIER, VERIFIER_HELP
from kit.parallel import Engine
from kit.registry.fetch import DEFAULT_DEST

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
    "--corpus",
    default="pubmedqa",
    show_default=True,
    help="Corpora for L1/L2, NAME[,NAME] in resolution order: the first that holds a citation "
    "resolves it; notfound only inside a corpus's declared complete coverage, else unchecked "
    "(`kit corpus list`). pubmedqa (built in) is a sample.",
)
@click.option(
    "--corpus-root",
    type=_dir,
    default=DEFAULT_CORPUS_ROOT,
    show_default=True,
    help="Built corpora.",
)
@click.option("--raw", type=_dir, default=DEFAULT_DEST, show_default=True, help="Fetched registry.")
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
@click.option("--verifier", default=DEFAULT_VERIFIER, show_default=True, help=VERIFIER_HELP)
@click.option("--variant", type=click.Choice(["fp32", "int8"]), default="fp32", show_default=True)
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cpu", show_default=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True)
@click.option("--yes-at", type=click.FloatRange(0, 1), default=0.84, show_default=True)
@click.option("--partial-at", type=click.FloatRange(0, 1), default=0.80, show_default=True)
@click.option(
    "--n-cal",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Held-out construction-labelled items for the instrument and default calibration.",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--board", type=_file, default=None, help="Board score table (schemas/scores.yaml).")
@click.option("--design", type=_file, default=None, help="Certification design YAML.")
@click.option("--agent-scores", type=_file, default=None, help="The agent's rows for the board.")
@click.option("--agent-system", default=None, help="The agent's system name on the board.")
@click.option("--truth", type=_file, default=None, help="Planted truth (default: beside RUNS).")
@click.option(
    "--failed-lookups", type=_file, default=None, help="Simulated outages (default: beside RUNS)."
)
@score_store_options
@engine_options
@click.option("--max-answer-chars", type=click.IntRange(min=1), default=100_000, show_default=True)
@click.option("--skip-bad", is_flag=True, help="Skip malformed run lines (counted) instead.")
@click.option("--quiet", is_flag=True, help="No progress on stderr.")
def audit(
    runs: Path,
    out: Path,
    checklists: Path | None,
    judge_verdicts: Path | None,
    corpus: str,
    corpus_root: Path,
    raw: Path,
    calibration: str,
    alpha: float | None,
    verifier: str,
    variant: str,
    device: str,
    batch_size: int,
    yes_at: float,
    partial_at: float,
    n_cal: int,
    seed: int,
    board: Path | None,
    design: Path | None,
    agent_scores: Path | None,
    agent_system: str | None,
    truth: Path | None,
    failed_lookups: Path | None,
    cache_dir: Path,
    no_cache: bool,
    engine: str,
    ray_address: str | None,
    ray_workers: int | None,
    max_answer_chars: int,
    skip_bad: bool,
    quiet: bool,
) -> None:
    """Audit an agent's runs end to end: one report.

    \b
    Stages: validate every run (nothing is scored until all parse); L1 existence against the
    corpora (--corpus, in order; an identifier outside every declared complete coverage is
    unchecked, never fabricated); L2 support with the verifier and the split-conformal flag rule (flag iff s <= tau),
    with BM25 re-attribution suggestions; checklist grading (--checklists); behaviour from the
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
    opts = AuditOptions(
        runs=runs,
        out=out,
        checklists=checklists,
        judge_verdicts=judge_verdicts,
        corpus=corpus,
        corpus_root=corpus_root,
        raw=raw,
        calibration=calibration,
        alpha=alpha,
        verifier=verifier,
        variant=variant,
        device=device,
        batch_size=batch_size,
        yes_at=yes_at,
        partial_at=partial_at,
        n_cal=n_cal,
        seed=seed,
        board=board,
        design=design,
        agent_scores=agent_scores,
        agent_system=agent_system,
        truth=truth,
        failed_lookups=failed_lookups,
        cache_dir=score_store_root(cache_dir, no_cache),
        engine=Engine(engine, ray_address, ray_workers),
        max_answer_chars=max_answer_chars,
        skip_bad=skip_bad,
        progress=not quiet,
    )
    result = run_and_write(opts)
    s = result.summary
    c = s["counts"]
    click.echo(
        f"audited {c['runs']} runs, {c['citations']} citations (tau={s['conformal']['tau']:.4g} "
        f"at alpha={s['conformal']['alpha']:g}); flagged: "
        + ", ".join(f"{k} {v}" for k, v in c["flagged"].items())
        + f"; score store {result.cache_hits} hit(s), {result.cache_misses} scored -> {out}"
    )
    from kit.guard.calibration import guarantee_line

    g = s["conformal"]["guarantee"]
    click.echo(f"  {guarantee_line(g)}")
    for row in g["per_type"]:
        click.echo(f"  {row['statement']}")
    for m in s["headline"]:
        if m["estimate"] is not None:
            click.echo(f"  {m['metric']}: {m['estimate']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]")
    if s["planted"]:
        for r in s["planted"]["rows"]:
            click.echo(
                f"  planted {r['metric']}: planted {r['planted']} recovered {r['estimate']} "
                f"covered {r['covered']}"
            )
