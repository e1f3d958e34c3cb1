"""The I/O shell of `kit audit`: read and hash inputs, score through the shared score store, write
outputs.

Order (issue 8): every input is read and validated first -- runs (nothing is scored until every
run parses), checklists, imported judge verdicts, calibration, board and design, the verifier
(whose ONNX sha256 is checked against its card; ``--device cuda`` without the CUDA provider is a
ConfigError) -- then L1, L2 + conformal flags, re-attribution, checklists, behaviour, board.

Outputs are written into a staged folder and swapped into place (:func:`kit.atomic.staged_dir`),
so a failed audit leaves the previous report (or none) untouched. Scores live outside the report,
in the shared content-addressed store (:mod:`kit.guard.score_store`, ``--cache-dir``, default
``data/scores/``): a shard is appended after every chunk of runs, so an interrupted audit resumes
from what it had scored, and a re-audit of the same runs into any folder scores nothing again.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit import __version__, atomic, boundary
from kit.audit import core
from kit.corpus.build import DEFAULT_ROOT as DEFAULT_CORPUS_ROOT
from kit.errors import ConfigError, InputError, Location
from kit.grade.reader import read_checklists
from kit.guard.score_store import DEFAULT_STORE
from kit.guard.verifier import DEFAULT_VERIFIER
from kit.hashing import file_sha256
from kit.parallel import LOCAL, Engine
from kit.progress import Progress

CHUNK_RUNS = 50
DEFAULT_CALIBRATION = "pubmedqa-neighbours"


@dataclass(frozen=True)
class AuditOptions:
    """Everything `kit audit` was asked to do (paths as given; defaults as in the CLI)."""

    runs: Path
    out: Path
    checklists: Path | None = None
    judge_verdicts: Path | None = None
    corpus: str = "pubmedqa"  # NAME[,NAME]: the resolution order
    corpus_root: Path = DEFAULT_CORPUS_ROOT
    raw: Path = Path("data/raw")
    calibration: str = DEFAULT_CALIBRATION
    alpha: float | None = None  # None: the calibration artifact's alpha, else 0.1
    level: float = 0.95
    verifier: str = DEFAULT_VERIFIER  # a built-in name or a card folder (load_verifier)
    variant: str = "fp32"
    device: str = "cpu"
    batch_size: int = 32
    yes_at: float = 0.84
    partial_at: float = 0.80
    n_cal: int = 200
    seed: int = 0
    board: Path | None = None
    design: Path | None = None
    agent_scores: Path | None = None
    agent_system: str | None = None
    truth: Path | None = None
    failed_lookups: Path | None = None
    cache_dir: Path | None = DEFAULT_STORE  # the score store; None: in memory only
    engine: Engine = LOCAL  # where the store's misses are scored (--engine; same bytes)
    max_answer_chars: int = 100_000
    skip_bad: bool = False
    progress: bool = True


def _say(opts: AuditOptions, text: str) -> None:
    if opts.progress:
        print(text, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- inputs


def _read_lines(path: Path) -> frozenset[str]:
    return frozenset(x.strip() for x in boundary.read_text(path).splitlines() if x.strip())


@dataclass
class Inputs:
    """Validated inputs (everything read before anything is scored)."""

    runs: Any
    checklists: dict[str, Any] | None
    verdicts: pd.DataFrame | None
    calibration: Any | None
    board: pd.DataFrame | None
    design: Any | None
    agent: str | None
    truth: pd.DataFrame | None
    planted_design: dict[str, Any] | None
    failed_lookups: frozenset[str]
    hashes: dict[str, dict[str, str]] = field(default_factory=dict)


def _planted_sidecars(opts: AuditOptions) -> tuple[Path | None, Path | None, Path | None]:
    """truth.csv / design.json / failed_lookups.txt written beside RUNS by the `planted` subcommand of `kit grade`."""
    here = opts.runs.parent
    truth = opts.truth or (here / "truth.csv" if (here / "truth.csv").is_file() else None)
    design = here / "design.json" if truth is not None else None
    if design is not None and not design.is_file():
        design = None
    failed = opts.failed_lookups
    if failed is None and truth is not None and (here / "failed_lookups.txt").is_file():
        failed = here / "failed_lookups.txt"
    return truth, design, failed


def _run_id_at(path: Path, line: int | None) -> str | None:
    """The run_id on ``line`` of a runs file when that line is a JSON object that has one."""
    if line is None or not path.is_file():
        return None
    try:
        obj = boundary.parse_json_line(boundary.file_lines(path)[line - 1], str(path), line)
    except (IndexError, InputError):
        return None
    rid = obj.get("run_id") if isinstance(obj, dict) else None
    return rid if isinstance(rid, str) else None


def read_inputs(opts: AuditOptions) -> Inputs:
    """Read and validate every input; InputError / ConfigError name file, row and field."""
    from kit.corpus.catalog import BUILTIN, open_built, parse_names
    from kit.grade.reader import read_runs
    from kit.schema import read_table, read_yaml

    for name in parse_names(opts.corpus):
        if name not in BUILTIN:
            open_built(name, opts.corpus_root)  # ConfigError naming the known corpora
    try:
        res = read_runs(opts.runs, opts.max_answer_chars, "skip" if opts.skip_bad else "raise")
    except InputError as err:
        rid = _run_id_at(opts.runs, err.where.row)
        if rid is not None:
            err.details.append(f"run_id {rid!r}")
        raise
    if not res.runs:
        raise InputError("no_runs", "no runs to audit", where=Location(str(opts.runs)))
    hashes: dict[str, dict[str, str]] = {
        "runs": {"path": str(opts.runs), "sha256": file_sha256(opts.runs)}
    }
    checklists = verdicts = None
    if opts.judge_verdicts is not None and opts.checklists is None:
        raise ConfigError("bad_parameter", "--judge-verdicts needs --checklists")
    if opts.checklists is not None:
        checklists = read_checklists(opts.checklists)
        hashes["checklists"] = {
            "path": str(opts.checklists),
            "sha256": file_sha256(opts.checklists),
        }
    if checklists is not None:
        seen: dict[tuple[str, str], str] = {}
        for r in sorted(res.runs, key=lambda r: r.run_id):
            entry = (r.model if r.tools_enabled else f"{r.model} [no tools]", r.task_id)
            if r.task_id in checklists and entry in seen:
                raise InputError(
                    "duplicate_attempt",
                    f"runs {seen[entry]!r} and {r.run_id!r} both attempt task {r.task_id!r} "
                    f"as model {entry[0]!r}; checklist grading keeps one attempt per (model, task)",
                    where=Location(str(opts.runs), column="run_id"),
                )
            seen[entry] = r.run_id
    if opts.judge_verdicts is not None:
        from kit.grade.checklist import score_verdicts

        verdicts = read_table(opts.judge_verdicts, "grade_verdicts")
        judges = sorted(set(verdicts["judge"]))
        if len(judges) != 1:
            raise InputError(
                "several_judges",
                f"expected the verdicts of one judge, got {len(judges)}: {', '.join(judges)}",
                where=Location(str(opts.judge_verdicts), column="judge"),
            )
        score_verdicts(checklists or {}, verdicts)  # every verdict's task has a checklist
        hashes["judge_verdicts"] = {
            "path": str(opts.judge_verdicts),
            "sha256": file_sha256(opts.judge_verdicts),
        }
    calibration = None
    if opts.calibration != DEFAULT_CALIBRATION:
        from kit.guard.calibration import load_calibration

        calibration = load_calibration(opts.calibration, opts.raw)
    board = design = None
    agent = opts.agent_system
    if (opts.board is None) != (opts.design is None):
        raise ConfigError("bad_parameter", "--board and --design go together")
    if opts.agent_scores is not None and opts.board is None:
        raise ConfigError("bad_parameter", "--agent-scores needs --board and --design")
    if opts.board is not None and opts.design is not None:
        from kit.certify.design import parse_design

        design = parse_design(read_yaml(opts.design, "design"))
        board = read_table(opts.board, "scores")
        hashes["board"] = {"path": str(opts.board), "sha256": file_sha256(opts.board)}
        hashes["design"] = {"path": str(opts.design), "sha256": file_sha256(opts.design)}
        if opts.agent_scores is not None:
            mine = read_table(opts.agent_scores, "scores")
            hashes["agent_scores"] = {
                "path": str(opts.agent_scores),
                "sha256": file_sha256(opts.agent_scores),
            }
            systems = sorted(set(mine["system"]))
            if len(systems) != 1:
                raise InputError(
                    "bad_agent_scores",
                    f"expected the rows of one system, got {len(systems)}: {', '.join(systems)}",
                    where=Location(str(opts.agent_scores), column="system"),
                )
            if agent is None:
                agent = systems[0]
            if systems[0] in set(board["system"]):
                raise InputError(
                    "agent_already_on_board",
                    f"system {systems[0]!r} already has rows in the board table",
                    where=Location(str(opts.agent_scores), column="system"),
                )
            board = pd.concat([board, mine], ignore_index=True)
        if agent is None:
            models = sorted({r.model for r in res.runs})
            if len(models) != 1:
                raise ConfigError(
                    "bad_parameter",
                    f"the runs hold {len(models)} models; name the board system with --agent-system",
                )
            agent = models[0]
    truth_path, design_path, failed_path = _planted_sidecars(opts)
    truth = planted_design = None
    if truth_path is not None:
        truth = read_table(truth_path, "grade_planted_truth")
        hashes["planted_truth"] = {"path": str(truth_path), "sha256": file_sha256(truth_path)}
        if design_path is not None:
            from kit.grade.reader import read_json_file

            planted_design = read_json_file(design_path)
            hashes["planted_design"] = {
                "path": str(design_path),
                "sha256": file_sha256(design_path),
            }
    failed: frozenset[str] = frozenset()
    if failed_path is not None:
        failed = _read_lines(failed_path)
        hashes["failed_lookups"] = {"path": str(failed_path), "sha256": file_sha256(failed_path)}
    inputs = Inputs(
        res,
        checklists,
        verdicts,
        calibration,
        board,
        design,
        agent,
        truth,
        planted_design,
        failed,
        hashes,
    )
    return inputs


# ----------------------------------------------------------------------------- the audit


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


def _load_verifier(opts: AuditOptions) -> Any:
    from kit.guard.verifier import load_verifier

    return load_verifier(opts.verifier, opts.variant, opts.device, opts.batch_size, progress=False)


def resolved_alpha(opts: AuditOptions, calibration: Any | None) -> float:
    """--alpha when given, else the calibration artifact's alpha, else 0.1."""
    if opts.alpha is not None:
        alpha = float(opts.alpha)
    elif calibration is not None and calibration.alpha is not None:
        alpha = float(calibration.alpha)
    else:
        alpha = 0.1
    if not 0.0 < alpha < 1.0:
        raise ConfigError("bad_parameter", f"--alpha must lie in (0, 1); got {alpha}")
    return alpha


def run_audit(opts: AuditOptions) -> AuditResult:
    """Run every stage (see module doc) and return tables and the summary; writes only to the
    score store."""
    from kit.corpus.catalog import describe, open_chain, parse_names, pubmedqa_memory
    from kit.corpus.identifiers import SCHEMES
    from kit.grade.behaviour import run_behaviour
    from kit.grade.citation_audit import (
        CLUSTER_NOTE,
        SupportRule,
        audit_citations,
        audit_rates,
        citation_rows,
    )
    from kit.grade.pubmedqa_corpus import build_corpus, claim_text
    from kit.guard.calibration import (
        CalibrationSet,
        check_verifier,
        guarantee,
        guard_rule,
        scores_sha256,
    )
    from kit.guard.score_store import open_scorer
    from kit.registry.loaders import pubmedqa_tables

    t0 = time.perf_counter()
    if opts.alpha is not None and not 0.0 < opts.alpha < 1.0:
        raise ConfigError("bad_parameter", f"--alpha must lie in (0, 1); got {opts.alpha}")
    rule = SupportRule(opts.yes_at, opts.partial_at)
    inputs = read_inputs(opts)
    alpha = resolved_alpha(opts, inputs.calibration)
    verifier = _load_verifier(opts)
    card = verifier.card.to_dict()
    same_verifier = None if inputs.calibration is None else check_verifier(inputs.calibration, card)
    runs = inputs.runs.runs
    if inputs.runs.skipped:
        for s in inputs.runs.skipped:
            _say(opts, f"skipped {opts.runs}, row {s.line}, column '{s.field}': {s.message}")
    # corpus (registry) -------------------------------------------------------------------
    tables = pubmedqa_tables(opts.raw)
    corpus = build_corpus(
        tables["pubmedqa_items"], tables["pubmedqa_contexts"], tables["pubmedqa_meshes"]
    )
    texts = dict(corpus.abstract)
    # a planted set's design makes PubMedQA its closed world; otherwise PubMedQA is a sample
    closed_world = inputs.planted_design is not None
    pubmedqa = pubmedqa_memory(texts, sorted(inputs.failed_lookups), closed_world)
    chain = open_chain(parse_names(opts.corpus), opts.corpus_root, pubmedqa)
    resolvers = {scheme: chain.resolver(scheme) for scheme in SCHEMES}
    scorer = open_scorer(verifier, opts.cache_dir, opts.device, opts.engine)
    persist = scorer.flush

    # L1 + L2 over runs, chunk by chunk (progress, resumable) ------------------------------
    ordered = sorted(runs, key=lambda r: r.run_id)
    parts = []
    with Progress(len(ordered), opts.progress) as bar:
        for b in range(0, len(ordered), CHUNK_RUNS):
            chunk = ordered[b : b + CHUNK_RUNS]
            cites = citation_rows(chunk)
            parts.append(
                audit_citations(
                    cites,
                    resolvers,
                    scorer,
                    chain.passage,
                    rule,
                )
            )
            persist()
            bar.advance(len(chunk))
    audited = pd.concat(parts, ignore_index=True)
    # instrument: held-out construction-labelled pairs ------------------------------------
    used = {r.task_id.removeprefix("pubmedqa-") for r in runs}
    used |= {c.value for r in runs for c in r.cited}
    items = core.instrument_items(corpus.pool, used, opts.n_cal, np.random.default_rng(opts.seed))
    _say(opts, f"audit: scoring {len(items)} held-out right/wrong calibration pairs")
    claims = [claim_text(corpus, p) for p in items]
    right = scorer.score(claims, [texts.get(p, "") for p in items])
    wrong = scorer.score(claims, [texts.get(corpus.neighbour[p], "") for p in items])
    persist()
    instrument = core.InstrumentCounts.from_scores(right, wrong, rule) if items else None
    if inputs.calibration is None:
        if not items:
            raise ConfigError("too_little_calibration", "no held-out corpus items to calibrate on")
        cal_set = CalibrationSet(
            source=DEFAULT_CALIBRATION,
            unsupported=np.asarray(wrong, dtype=float),
            supported=np.asarray(right, dtype=float),
            published=None,
            name=f"{DEFAULT_CALIBRATION} (construction-labelled, {len(items)} held-out items)",
            negative_types=np.asarray(["wrong-paper (MeSH neighbour)"] * len(items), dtype=object),
        )
        same_verifier = True
        cal_meta = {
            "source": DEFAULT_CALIBRATION,
            "sha256": scores_sha256(wrong),
            "construction": (
                "each held-out PubMedQA item's conclusion vs the abstract of its on-topic MeSH "
                "neighbour (wrong paper, construction-labelled), scored by this verifier; items "
                f"the runs answer or cite excluded; seed {opts.seed}"
            ),
            "same_verifier": True,
        }
    else:
        cal_set = inputs.calibration
        artifact = cal_set.kind == "artifact"
        cal_meta = {
            "source": cal_set.source,
            "sha256": cal_set.sha256,
            "construction": (
                f"the labelled sample {cal_set.display_name} (sha256 {cal_set.source_sha256}) "
                "scored by this verifier (kit guard calibrate; seal checked)"
                if artifact
                else "unsupported-class scores read from the calibration source"
            ),
            "same_verifier": bool(same_verifier),
        }
    t = guard_rule(cal_set, alpha)
    audit_scores = audited["support_score"].to_numpy(dtype=float)
    promise = guarantee(cal_set, t, audit_scores, same_verifier, level=opts.level)
    flagged = core.flag_citations(audited, t.tau)
    # re-attribution suggestions ----------------------------------------------------------
    n_flag = int((flagged["flag_reason"] == "score_at_or_below_tau").sum())
    _say(opts, f"audit: re-attributing {n_flag} flagged citation(s) with BM25 + verifier")
    index = core.CorpusIndex.build(texts)
    cites = core.suggest_reattribution(flagged, index, texts, scorer, t.tau)
    persist()
    cites = cites[core.CITATION_COLUMNS].sort_values(["run_id", "citation"], kind="stable")
    cites = cites.reset_index(drop=True)
    # checklists, behaviour ---------------------------------------------------------------
    scores = None
    headline: list[dict[str, Any]] = []
    rng = np.random.default_rng(opts.seed)
    headline += core.citation_headline(cites, opts.level, rng, instrument)
    judge_name = None
    if inputs.checklists is not None:
        from kit.grade.checklist import score_verdicts

        if inputs.verdicts is not None:
            verdicts = inputs.verdicts
            judge_name = ",".join(sorted(set(verdicts["judge"])))
        else:
            from kit.grade.judge import judge_runs
            from kit.grade.support import LexicalSupport

            lex = LexicalSupport.from_corpus(texts[k] for k in sorted(texts))
            verdicts, _ = judge_runs(
                inputs.checklists,
                runs,
                "builtin-lexical",
                scorer=lex,
                passage_of=lambda c: chain.passage(c.id_type, c.value),
            )
            judge_name = "builtin-lexical (kit.grade.judge rules)"
        scores = score_verdicts(inputs.checklists, verdicts)
        headline += core.checklist_headline(scores, opts.level)
    behaviour = run_behaviour(runs)
    headline += core.behaviour_headline(behaviour, opts.level)
    run_frame = core.run_table(runs, cites, behaviour, scores)
    # board ------------------------------------------------------------------------------
    board_pairs = board_ranks = None
    board_meta = None
    if inputs.board is not None:
        placed = core.board_placement(
            inputs.board, inputs.design, str(inputs.agent), str(opts.board)
        )
        board_pairs, board_ranks = placed["pairs"], placed["ranks"]
        me = board_ranks[board_ranks["system"] == inputs.agent].iloc[0]
        comp = board_pairs[board_pairs["readout"] == "composite"]
        board_meta = {
            "agent": inputs.agent,
            "m": placed["m"],
            "rank_lo": int(me["rank_lo"]),
            "rank_hi": int(me["rank_hi"]),
            "n_systems": len(board_ranks),
            "composite": float(me["composite"]),
            "pairs": core.json_clean(board_pairs.to_dict("records")),
            "ranks": core.json_clean(board_ranks.to_dict("records")),
            "composite_refused": int((~comp["admissible"]).sum()),
            "composite_certified": int((comp["verdict"] == "certified").sum()),
        }
    # planted ----------------------------------------------------------------------------
    planted = None
    if inputs.truth is not None and inputs.planted_design is not None:
        planted = {
            "design": inputs.planted_design,
            "rows": core.planted_comparison(
                cites, inputs.truth, inputs.planted_design, headline, alpha, opts.level
            ),
        }
    summary = {
        "kit_version": __version__,
        "command": "kit audit",
        "inputs": inputs.hashes,
        "verifier": {
            "name": card["name"],
            "variant": opts.variant,
            "onnx_sha256": card["onnx_sha256"],
            "scoring_rule": card["scoring_rule"],
            "window_rule": card["window_rule"],
            "device": opts.device,
        },
        "corpus": {
            "name": opts.corpus,
            "description": "; ".join(c.description for c in chain.corpora),
            "n_papers": sum(c.n_documents() for c in chain.corpora),
            "simulated_outages": len(inputs.failed_lookups),
            "order": list(chain.order),
            "resolution": RESOLUTION_RULE,
            "corpora": [describe(c) for c in chain.corpora],
            "closed_world": closed_world,
            "reattribution": "BM25 candidates from the PubMedQA corpus (registry)",
        },
        "conformal": {
            "alpha": alpha,
            "tau": t.tau,
            "k": t.k,
            "n_cal": t.n_cal,
            "cal_recall": t.cal_recall,
            "calibration": cal_meta,
            "rule": "flag iff s <= tau; catch >= 1 - alpha for unsupported citations "
            "exchangeable with the calibration negatives"
            + ("; Mondrian: tau = max over negative types" if t.rule == "mondrian" else ""),
            "guarantee": promise,
        },
        "l2_rule": {"yes_at": rule.yes_at, "partial_at": rule.partial_at},
        "instrument": None if instrument is None else dict(instrument.__dict__),
        "level": opts.level,
        "seed": opts.seed,
        "counts": {
            "runs": len(runs),
            "skipped_lines": len(inputs.runs.skipped),
            "skipped": [
                {"line": s.line, "reason": s.reason, "field": s.field, "message": s.message}
                for s in inputs.runs.skipped
            ],
            "citations": len(cites),
            "l1": {k: int((cites["l1"] == k).sum()) for k in ("found", "notfound", "transient")}
            | {"unchecked": int((cites["l1"] == "unchecked").sum())},
            "l2": {k: int((cites["l2"] == k).sum()) for k in ("yes", "partial", "no")},
            "flagged": {k: int((cites["flag_reason"] == k).sum()) for k in core.FLAG_REASONS},
            "suggested": int((cites["suggested"] != "").sum()),
        },
        "headline": headline,
        "citation_rates": audit_rates(cites, opts.level).to_dict("records"),
        "checklist": None
        if scores is None
        else {"judge": judge_name, "n_scored": len(scores), "threshold": 0.5},
        "board": board_meta,
        "planted": planted,
        "notes": [
            CLUSTER_NOTE,
            (
                "the verifier is a similarity bi-encoder: it measures topical support, not "
                "entailment (a negated conclusion can score high)"
                if card.get("kind") == "bi-encoder"
                else f"the verifier is a {card.get('kind', 'model')}: {card['scoring_rule']}"
            ),
            "tau is meaningful only for calibration scores of this verifier and scoring rule"
            + ("" if cal_meta["same_verifier"] else "; this calibration source is EXTERNAL"),
            "the catch guarantee: " + promise["statement"] + " -- " + promise["condition"],
        ]
        + ([promise["shift"]["message"]] if promise["shift"]["warning"] else []),
    }
    _say(opts, f"audit: scored in {time.perf_counter() - t0:.1f} s")
    return AuditResult(
        cites,
        run_frame,
        core.json_clean(summary),
        board_pairs,
        board_ranks,
        scorer.hits,
        scorer.misses,
        _flagged_passages(cites, chain),
    )


RESOLUTION_RULE = (
    "corpora in the order given (--corpus): the first that holds a cited identifier resolves it "
    "(found); else notfound (possible fabrication) only when a corpus declares complete coverage "
    "containing it; else unchecked (never counted as fabrication)"
)


def _flagged_passages(cites: pd.DataFrame, chain: Any) -> dict[str, str]:
    """Passages of the flagged citations, by value, for the report page."""
    out: dict[str, str] = {}
    rows = cites.loc[cites["flagged"], ["id_type", "value"]].drop_duplicates()
    for t, v in sorted(rows.itertuples(index=False, name=None)):
        text = chain.passage(t, v)
        if text:
            out[v] = text
    return out


# ----------------------------------------------------------------------------- outputs

OUTPUT_FILES = ("report.html", "summary.json", "citations.csv", "runs.csv")


def write_outputs(result: AuditResult, opts: AuditOptions) -> list[str]:
    """Validate and write every output into a staged folder, then swap it into ``opts.out``."""
    from kit.release.receipts import seal, write_receipt
    from kit.report.audit_page import render_audit_page
    from kit.report.tables import to_csv
    from kit.schema import validate_frame, validate_json

    cites = validate_frame(result.citations, "audit_citations", str(opts.out / "citations.csv"))
    runs = validate_frame(result.runs, "audit_runs", str(opts.out / "runs.csv"))
    summary = result.summary
    validate_json(summary, "audit_summary", str(opts.out / "summary.json"))
    files: dict[str, str] = {
        "summary.json": json.dumps(summary, indent=2, sort_keys=True, allow_nan=False) + "\n",
        "citations.csv": to_csv(cites, "%.10g"),
        "runs.csv": to_csv(runs, "%.10g"),
        "report.html": render_audit_page(summary, cites, result.board_ranks, result.passages),
    }
    if result.board_pairs is not None and result.board_ranks is not None:
        files["board_pairs.csv"] = to_csv(result.board_pairs, "%.10g")
        files["board_ranks.csv"] = to_csv(result.board_ranks, "%.10g")
    with atomic.staged_dir(opts.out) as tmp:
        tmp.chmod(0o755)
        for name, text in sorted(files.items()):
            (tmp / name).write_text(text, encoding="utf-8")
        root_body = {
            "inputs": summary["inputs"],
            "verifier_onnx_sha256": summary["verifier"]["onnx_sha256"],
            "calibration_sha256": summary["conformal"]["calibration"]["sha256"],
            "kit_version": summary["kit_version"],
        }
        if opts.cache_dir is None:
            root_body["untracked"] = ["cache/"]  # the scorer's cache: reusable, not an output
        root = seal("audit-inputs", "inputs", root_body, None)
        write_receipt(tmp / "receipts" / "inputs.receipt.json", root)
        for name in sorted(files):
            sha = file_sha256(tmp / name)
            body: dict[str, Any] = {
                "file": name,
                "sha256": sha,
                "bytes": len(files[name].encode("utf-8")),
                "outputs": {name: sha},  # sealed: `kit verify receipts OUT` re-hashes it
            }
            if name.endswith(".csv"):  # checked by `kit verify receipts OUT`
                body["tables"] = {name.removesuffix(".csv"): sha}
            art = seal("audit-output", name, body, root["content_hash"])
            write_receipt(tmp / "receipts" / f"{name}.receipt.json", art)
        for path in sorted((tmp / "receipts").iterdir()):
            path.chmod(0o644)
    return sorted(files)


def audit(opts: AuditOptions) -> AuditResult:
    """Run the audit and write its outputs (the whole `kit audit`)."""
    result = run_audit(opts)
    write_outputs(result, opts)
    return result
