"""The one audit pipeline: runs -> claims and citations -> L1 -> L2 -> conformal flags ->
re-attribution -> grading -> behaviour -> summary (the report is written by
:mod:`kit.audit.runner`).

Each stage is a small module with a typed input and output (:mod:`kit.audit.inputs`,
:mod:`~kit.audit.claims`, :mod:`~kit.audit.resolve` (L1), :mod:`~kit.audit.support` (L2, with
:mod:`~kit.audit.evidence`), :mod:`~kit.audit.flags`, :mod:`~kit.audit.reattribution`,
:mod:`~kit.audit.grading`, :mod:`~kit.audit.board`, :mod:`~kit.audit.summary`); this module only
opens the shared resources (corpora, verifier, score store) and calls them in order.

:func:`check_citations` (claims -> L1 -> L2) is the whole of `kit grade audit-citations` and
the first part of :func:`run_audit` (`kit audit`): one code path, one set of defaults.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from kit.audit import claims as claims_stage
from kit.audit import flags as flags_stage
from kit.audit import resolve as resolve_stage
from kit.audit import summary as summary_stage
from kit.audit import support as support_stage
from kit.audit.inputs import AuditOptions, Inputs, read_inputs, resolved_alpha
from kit.core.errors import ConfigError
from kit.core.progress import Progress, say
from kit.grade.citation_audit import CITATION_ROW_COLUMNS, SupportRule
from kit.runs.model import AgentRun

CHUNK_RUNS = 50


@dataclass
class Context:
    """What every stage reads: the PubMedQA registry corpus, the corpus chain and its
    resolvers, the verifier behind the shared score store."""

    corpus: Any  # kit.grade.pubmedqa_corpus corpus (texts, pool, MeSH neighbours)
    texts: dict[str, str]
    chain: Any  # kit.corpus.store.CorpusChain
    resolvers: Mapping[str, Any]
    card: dict[str, Any]
    scorer: Any  # kit.guard.scoring.score_store.StoredScorer
    closed_world: bool


def open_context(opts: AuditOptions, inputs: Inputs | None) -> Context:
    """Load the verifier (ONNX sha256 checked against its card), the registry corpus and the
    corpus chain named by ``--corpus``; wrap the verifier in the score store. Without
    ``inputs`` (runs scored one at a time: :func:`open_guard`) there is no planted set: PubMedQA
    is a sample and no lookup is a simulated outage."""
    from kit.corpus.catalog import open_chain, parse_names, pubmedqa_memory
    from kit.corpus.identifiers import SCHEMES
    from kit.grade.pubmedqa_corpus import build_corpus
    from kit.guard.scoring.score_store import open_scorer
    from kit.guard.verifiers.load import load_verifier
    from kit.registry.loaders import pubmedqa_tables

    verifier = load_verifier(
        opts.verifier, opts.variant, opts.device, opts.batch_size, progress=False
    )
    tables = pubmedqa_tables(opts.raw)
    corpus = build_corpus(
        tables["pubmedqa_items"], tables["pubmedqa_contexts"], tables["pubmedqa_meshes"]
    )
    texts = dict(corpus.abstract)
    # a planted set's design makes PubMedQA its closed world; otherwise PubMedQA is a sample
    closed_world = inputs is not None and inputs.planted_design is not None
    failed = () if inputs is None else sorted(inputs.failed_lookups)
    pubmedqa = pubmedqa_memory(texts, failed, closed_world)
    chain = open_chain(parse_names(opts.corpus), opts.corpus_root, pubmedqa)
    return Context(
        corpus,
        texts,
        chain,
        {scheme: chain.resolver(scheme) for scheme in SCHEMES},
        verifier.card.to_dict(),
        open_scorer(verifier, opts.cache_dir, opts.device, opts.engine),
        closed_world,
    )


@dataclass(frozen=True)
class CitationCheck:
    """Claims -> L1 -> L2: one row per audited (run, claim, citation), and the claim counts."""

    frame: pd.DataFrame
    claims: claims_stage.Claims
    rule: SupportRule
    unread_refs: int  # tool responses kept only as response_ref (not readable)


def check_citations(
    runs: Sequence[AgentRun], ctx: Context, rule: SupportRule, progress: bool = False
) -> CitationCheck:
    """The citation stages over ``runs``, chunk by chunk (progress; the score store is flushed
    after every chunk, so an interrupted audit resumes from what it had scored)."""
    from kit.audit.evidence import unread_refs

    ordered = sorted(runs, key=lambda r: r.run_id)
    parts, counts = [], []
    with Progress(len(ordered), progress) as bar:
        for b in range(0, len(ordered), CHUNK_RUNS):
            chunk = ordered[b : b + CHUNK_RUNS]
            found = claims_stage.claim_rows(chunk)
            checked = resolve_stage.resolve(found.rows, ctx.resolvers)
            checked = support_stage.support(checked, chunk, ctx.scorer, ctx.chain.passage, rule)
            parts.append(checked)
            counts.append(found)
            ctx.scorer.flush()
            bar.advance(len(chunk))
    frame = pd.concat(parts, ignore_index=True)
    frame = frame.sort_values(["run_id", "claim_no", "citation"], kind="stable")
    frame = frame.reset_index(drop=True)
    claims = claims_stage.Claims(
        frame[CITATION_ROW_COLUMNS],
        sum(c.n_claims for c in counts),
        sum(c.n_citing for c in counts),
        sum(c.n_unresolved for c in counts),
        sum(c.n_ambiguous for c in counts),
    )
    return CitationCheck(frame, claims, rule, unread_refs(ordered))


@dataclass
class CitationAudit:
    """The L1/L2 view (`kit grade audit-citations`): inputs, resources, checked citations."""

    inputs: Inputs
    context: Context
    check: CitationCheck


def check_alpha(opts: AuditOptions) -> None:
    """--alpha, when given, lies in (0, 1) (checked before anything is read or scored)."""
    if opts.alpha is not None and not 0.0 < opts.alpha < 1.0:
        raise ConfigError("bad_parameter", f"--alpha must lie in (0, 1); got {opts.alpha}")


def prepare(opts: AuditOptions) -> tuple[Inputs, Context]:
    """Read and validate every input, then open the corpora, the verifier and the store."""
    check_alpha(opts)
    inputs = read_inputs(opts)
    resolved_alpha(opts, inputs.calibration)  # a bad alpha fails before anything is scored
    ctx = open_context(opts, inputs)
    for s in inputs.runs.skipped:
        say(f"skipped {opts.runs}, row {s.line}, column '{s.field}': {s.message}", opts.progress)
    return inputs, ctx


def audit_l1_l2(opts: AuditOptions) -> CitationAudit:
    """Read the runs and audit their citations (claims, L1, L2) exactly as `kit audit` does."""
    rule = SupportRule(opts.yes_at, opts.partial_at)
    inputs, ctx = prepare(opts)
    return CitationAudit(inputs, ctx, check_citations(inputs.runs.runs, ctx, rule, opts.progress))


def calibrate(
    ctx: Context,
    runs: Sequence[AgentRun],
    rule: SupportRule,
    given: Any | None,
    same_verifier: bool | None,
    opts: AuditOptions,
) -> flags_stage.Calibration:
    """The conformal stage's calibration (:func:`kit.audit.flags.calibrate`: the instrument's
    ``--n-cal`` held-out pairs drawn with ``--seed`` from items ``runs`` neither answer nor cite,
    and the default calibration set when ``given`` is None), its scores flushed to the store."""
    cal = flags_stage.calibrate(
        ctx.corpus, runs, ctx.scorer, rule, given, same_verifier, opts.n_cal, opts.seed
    )
    ctx.scorer.flush()
    return cal


@dataclass(frozen=True)
class CitationGuard:
    """The citation stages opened once for runs that come one at a time (the inspect_ai scorer,
    :mod:`kit.inspect_ext`): the context, the L2 rule, the calibration and alpha."""

    context: Context
    rule: SupportRule
    calibration: flags_stage.Calibration
    alpha: float
    level: float


def open_guard(opts: AuditOptions, runs: Sequence[AgentRun] = ()) -> CitationGuard:
    """Check the options as :func:`prepare` does, read ``--calibration``, open the context and
    calibrate -- with the functions `kit audit` calls, in its order. ``runs`` are the runs whose
    items the default calibration's held-out draw excludes (`kit audit` passes every audited
    run; a scorer that sees one sample at a time knows none up front)."""
    from kit.audit.inputs import read_calibration
    from kit.guard.conformal.calibration import check_verifier

    check_alpha(opts)
    given = read_calibration(opts)
    alpha = resolved_alpha(opts, given)
    ctx = open_context(opts, None)
    same = None if given is None else check_verifier(given, ctx.card)
    rule = SupportRule(opts.yes_at, opts.partial_at)
    cal = calibrate(ctx, runs, rule, given, same, opts)
    return CitationGuard(ctx, rule, cal, alpha, opts.level)


def guard_runs(guard: CitationGuard, runs: Sequence[AgentRun]) -> flags_stage.Flags:
    """Claims -> L1 -> L2 (:func:`check_citations`) and the conformal flags
    (:func:`kit.audit.flags.conformal_flags`) of ``runs`` under an opened guard: the rows of
    `kit audit`'s citations.csv for these runs, but for re-attribution's columns."""
    check = check_citations(runs, guard.context, guard.rule)
    return flags_stage.conformal_flags(check.frame, guard.calibration, guard.alpha, guard.level)


@dataclass
class AuditResult:
    citations: pd.DataFrame
    runs: pd.DataFrame
    summary: dict[str, Any]
    board_pairs: pd.DataFrame | None
    board_ranks: pd.DataFrame | None
    cache_hits: int
    cache_misses: int
    passages: dict[str, str]
    windows: dict[str, str] = field(default_factory=dict)  # item_id -> its deciding window


def run_audit(opts: AuditOptions) -> AuditResult:
    """Run every stage (module doc) and return tables and the summary; writes only to the
    score store."""
    import numpy as np

    from kit.audit import board as board_stage
    from kit.audit import grading as grading_stage
    from kit.audit import reattribution
    from kit.guard.conformal.calibration import check_verifier

    t0 = time.perf_counter()
    rule = SupportRule(opts.yes_at, opts.partial_at)
    inputs, ctx = prepare(opts)
    runs = inputs.runs.runs
    alpha = resolved_alpha(opts, inputs.calibration)
    same = None if inputs.calibration is None else check_verifier(inputs.calibration, ctx.card)
    check = check_citations(runs, ctx, rule, opts.progress)
    # conformal flags -------------------------------------------------------------------
    say(f"audit: scoring up to {opts.n_cal} held-out right/wrong calibration pairs", opts.progress)
    cal = calibrate(ctx, runs, rule, inputs.calibration, same, opts)
    flagged = flags_stage.conformal_flags(check.frame, cal, alpha, opts.level)
    # re-attribution --------------------------------------------------------------------
    n_flag = int((flagged.frame["flag_reason"] == "score_at_or_below_tau").sum())
    say(f"audit: re-attributing {n_flag} flagged citation(s) with BM25 + verifier", opts.progress)
    index = reattribution.CorpusIndex.build(ctx.texts)
    cites = reattribution.suggest_reattribution(
        flagged.frame, index, ctx.texts, ctx.scorer, flagged.t.tau
    )
    ctx.scorer.flush()
    cites = cites[summary_stage.CITATION_COLUMNS]
    cites = cites.sort_values(["run_id", "claim_no", "citation"], kind="stable")
    cites = cites.reset_index(drop=True)
    # the review queue's deciding windows, scored now: a later stage that fails leaves them
    # in the store with every other score, so the rerun scores nothing
    windows = flagged_windows(cites, ctx, runs)
    # grading, behaviour ----------------------------------------------------------------
    graded = grading_stage.grade(
        runs,
        inputs.checklists,
        inputs.verdicts,
        ctx.texts,
        ctx.chain.passage,
        opts.judge,
        opts.cache_dir,
    )
    rng = np.random.default_rng(opts.seed)
    headline = summary_stage.citation_headline(cites, opts.level, rng, cal.instrument)
    if graded.scores is not None:
        headline += summary_stage.checklist_headline(graded.scores, opts.level)
    headline += summary_stage.behaviour_headline(graded.behaviour, opts.level)
    run_frame = summary_stage.run_table(runs, cites, graded.behaviour, graded.scores)
    # board -----------------------------------------------------------------------------
    placed = None
    if inputs.board is not None:
        placed = board_stage.board_placement(
            inputs.board, inputs.design, str(inputs.agent), str(opts.board)
        )
    summary = summary_stage.build_summary(
        opts, inputs, ctx, check, cal, flagged, cites, headline, graded, placed
    )
    from kit.audit.gold import gold_anchored

    adapt, texts = adapt_request(opts, ctx, cites, runs)
    summary["gold_anchored"] = gold_anchored(
        inputs.gold,
        str(opts.gold),
        cites,
        graded.scores,
        summary["verifier"]["name"],
        graded.judge,
        1.0 - opts.level,
        adapt,
        texts,
        opts.half_width,
    )
    say(f"audit: scored in {time.perf_counter() - t0:.1f} s", opts.progress)
    return AuditResult(
        cites,
        run_frame,
        summary,
        None if placed is None else placed["pairs"],
        None if placed is None else placed["ranks"],
        ctx.scorer.hits,
        ctx.scorer.misses,
        flagged_passages(cites, ctx.chain, runs),
        windows,
    )


def flagged_windows(cites: pd.DataFrame, ctx: Context, runs: Sequence[AgentRun]) -> dict[str, str]:
    """The deciding window of every flagged citation that was scored (the review queue,
    :func:`kit.audit.review.deciding_windows`), through the score store; none for a verifier
    without a window rule (an LLM card reads the passage whole)."""
    from kit.audit.evidence import citation_pairs
    from kit.audit.review import deciding_windows

    window = getattr(ctx.scorer.inner, "window", None)
    if window is None:
        return {}
    pairs = citation_pairs(cites[cites["flagged"]], runs, ctx.chain.passage)
    out = deciding_windows(pairs, ctx.scorer, window)
    ctx.scorer.flush()
    return out


def adapt_request(
    opts: AuditOptions, ctx: Context, cites: pd.DataFrame, runs: Sequence[AgentRun]
) -> tuple[Any, dict[str, tuple[str, str]] | None]:
    """``--adapt``'s request and each scored citation's (claim, passage); (None, None) without
    it."""
    if not opts.adapt or opts.gold is None:
        return None, None
    from kit.audit.evidence import citation_pairs
    from kit.audit.gold_adapt import AdaptRequest
    from kit.guard.training.adapt import ADAPT_LR, FitSettings
    from kit.guard.verifiers.load import resolve_verifier

    say(f"audit: --adapt ({opts.method}, at most {opts.folds} folds) on the gold", opts.progress)
    folder = resolve_verifier(opts.verifier)
    settings = FitSettings(3, ADAPT_LR, 16, opts.seed, opts.device)
    request = AdaptRequest(
        opts.method, opts.folds, opts.seed, ctx.scorer.inner, folder, settings, opts.progress
    )
    return request, citation_pairs(cites, runs, ctx.chain.passage)


def flagged_passages(cites: pd.DataFrame, chain: Any, runs: Sequence[AgentRun]) -> dict[str, str]:
    """The passage each flagged citation was scored against, by value, for the report page:
    what the agent read when L2 used it (the first such row), else the corpus passage."""
    from kit.audit.evidence import agent_read

    by_id = {r.run_id: r for r in runs}
    out: dict[str, str] = {}
    flagged = cites[cites["flagged"]]
    for r in flagged[flagged["evidence"] == "tool_response"].itertuples(index=False):
        if r.value in out:
            continue
        run = by_id[r.run_id]
        cit = next(c for c in run.cited if c.label == r.citation)
        read = agent_read(run, cit)
        if read is not None:
            fmt = f", read as {read.record_format}" if read.record_format else ""
            out[str(r.value)] = (
                f"[read by the agent, tool call(s) {r.evidence_calls}{fmt}] {read.text}"
            )
    rows = flagged[["id_type", "value"]].drop_duplicates()
    for t, v in sorted(rows.itertuples(index=False, name=None)):
        if v in out:
            continue
        text = chain.passage(t, v)
        if text:
            out[v] = text
    return out
