"""Stage 0 of `kit audit`: what it was asked (:class:`AuditOptions`) and every input read and
validated before anything is scored (:func:`read_inputs` -> :class:`Inputs`).

Runs (nothing is scored until every run parses; ``--limit N`` keeps the first N in the file's
order), checklists, imported judge verdicts, calibration, board and design, planted sidecars.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from kit.core import boundary
from kit.core.errors import ConfigError, InputError, Location
from kit.core.hashing import file_sha256
from kit.core.parallel import LOCAL, Engine
from kit.corpus.build import DEFAULT_ROOT as DEFAULT_CORPUS_ROOT
from kit.grade.reader import read_checklists
from kit.guard.scoring.score_store import DEFAULT_STORE
from kit.guard.verifiers.load import DEFAULT_VERIFIER

if TYPE_CHECKING:
    from kit.certify.design import Design
    from kit.grade.checklist import Checklist
    from kit.runs.reader import RunsRead

DEFAULT_CALIBRATION = "pubmedqa-neighbours"


@dataclass(frozen=True)
class AuditOptions:
    """Everything `kit audit` was asked to do (paths as given; defaults as in the CLI)."""

    runs: Path
    out: Path
    checklists: Path | None = None
    judge_verdicts: Path | None = None
    judge: str = "lexical"  # the checklist judge: lexical or an llm-judge card folder
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
    limit: int | None = None  # audit the first N runs in the file's order
    gold: Path | None = None  # human gold labels of judged items (kit.audit.gold)
    adapt: bool = False  # cross-fit the verifier on the gold (kit.audit.gold_adapt)
    method: str = "fine-tune"  # how --adapt adapts it (kit.guard.training.fold_judges)
    folds: int = 5  # --adapt's folds, at most
    half_width: float | None = None  # --half-width: plan the gold sample for +- this


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
    n_in_file: int = 0  # runs read from the file before --limit
    gold: pd.DataFrame | None = None  # --gold (schemas/audit_gold.yaml)


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
    from kit.core.schema import read_table

    if opts.adapt and opts.gold is None:
        raise ConfigError(
            "bad_parameter",
            "--adapt adapts the verifier on the gold labels and anchors on them: give --gold",
        )
    res, n_in_file = _read_audit_runs(opts)
    hashes: dict[str, dict[str, str]] = {
        "runs": {"path": str(opts.runs), "sha256": file_sha256(opts.runs)}
    }
    checklists, verdicts = _read_grading(opts, res, hashes)
    calibration = read_calibration(opts)
    board, design, agent = _read_board(opts, res, hashes)
    truth, planted_design, failed = _read_planted(opts, hashes)
    gold = None
    if opts.gold is not None:
        from kit.audit.gold import GOLD_SCHEMA

        gold = read_table(opts.gold, GOLD_SCHEMA)
        hashes["gold"] = {"path": str(opts.gold), "sha256": file_sha256(opts.gold)}
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
        n_in_file,
        gold,
    )
    return inputs


def read_calibration(opts: AuditOptions) -> Any | None:
    """The calibration set ``--calibration`` names (a file, an artifact, a registry name), or
    None for the default: construction-labelled pairs scored by the verifier at audit time
    (:func:`kit.audit.flags.calibrate`)."""
    if opts.calibration == DEFAULT_CALIBRATION:
        return None
    from kit.guard.conformal.calibration import load_calibration

    return load_calibration(opts.calibration, opts.raw)


def _read_audit_runs(opts: AuditOptions) -> tuple[RunsRead, int]:
    """The runs to audit (the first --limit of them) and how many the file holds; every
    corpus named by --corpus is checked first."""
    from kit.corpus.catalog import BUILTIN, open_built, parse_names
    from kit.runs.reader import RunsRead, read_runs

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
    n_in_file = len(res.runs)
    if opts.limit is not None:
        if opts.limit < 1:
            raise ConfigError("bad_parameter", f"--limit must be >= 1; got {opts.limit}")
        res = RunsRead(res.source, res.runs[: opts.limit], res.skipped)
    return res, n_in_file


def _read_grading(
    opts: AuditOptions, res: RunsRead, hashes: dict[str, dict[str, str]]
) -> tuple[dict[str, Checklist] | None, pd.DataFrame | None]:
    """The frozen checklists (one attempt per (model, task) they grade) and imported judge
    verdicts (one judge, every task with a checklist); the judge options checked together."""
    from kit.core.schema import read_table

    checklists = verdicts = None
    if opts.judge_verdicts is not None and opts.checklists is None:
        raise ConfigError("bad_parameter", "--judge-verdicts needs --checklists")
    if opts.judge != "lexical":
        if opts.judge_verdicts is not None:
            raise ConfigError(
                "bad_parameter", "give --judge CARD or --judge-verdicts (imported), not both"
            )
        if opts.checklists is None:
            raise ConfigError("bad_parameter", "--judge needs --checklists")
        from kit.grade.llm_judge import load_judge_card

        load_judge_card(Path(opts.judge))  # a bad card exits 2 before anything is scored
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
    return checklists, verdicts


def _read_board(
    opts: AuditOptions, res: RunsRead, hashes: dict[str, dict[str, str]]
) -> tuple[pd.DataFrame | None, Design | None, str | None]:
    """The board and design the agent is placed on (with the agent's own scores, when given)
    and the agent's system name."""
    from kit.core.schema import read_table, read_yaml

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
    return board, design, agent


def _read_planted(
    opts: AuditOptions, hashes: dict[str, dict[str, str]]
) -> tuple[pd.DataFrame | None, Any, frozenset[str]]:
    """A planted set's truth and design beside the runs, and its simulated failed lookups."""
    from kit.core.schema import read_table

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
    return truth, planted_design, failed


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
