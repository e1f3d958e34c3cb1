"""`kit certify` as one library verb: read a score table, certify it, calibrate and validate.

:func:`certify_input` is the command's verb: harness logs go to :func:`certify_logs` (the logs
laid out as the full score table by kit.certify.harness, then certified by the same engine),
a score table to :func:`certify_scores`, the whole pipeline of the command (docs/architecture.md, "Certified
leaderboard"): the score table read in either format (:func:`read_scores`), the board
certified (:func:`kit.certify.engine.certify_board`), and on request the sign-flip calibration
with leave-one-cluster-out and the validity of the design on synthetic boards shaped like the
input. It returns every table; the command writes them, draws the figure and prints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from kit.certify.design import Design
from kit.certify.engine import Certification, calibrate_board, certify_board
from kit.certify.simulate import synthetic_evidence
from kit.core import boundary
from kit.core.errors import ConfigError
from kit.core.parallel import Engine, mapper
from kit.core.schema import read_frame, read_table, validate_frame

DESIGN_COPY = "design.yaml"  # the design, kept in the output folder (kit report board reads it)
SYNTHETIC_FILE = "synthetic.json"  # the scores' .synthetic.json record, when they are generated


def read_scores(
    path: Path, design: Design, cluster_column: str | None = None
) -> tuple[pd.DataFrame, str, tuple[str, ...]]:
    """The score table at ``path`` as the engine's long table, its format (``full`` or
    ``plain``) and notes in words on how a plain table was read (kit.certify.plain)."""
    from kit.certify.plain import (
        FULL_SCHEMA,
        PLAIN_SCHEMA,
        plain_to_long,
        score_format,
        use_cluster_column,
    )

    raw = use_cluster_column(read_frame(path), cluster_column, str(path))
    fmt = score_format([str(c) for c in raw.columns])
    if fmt == "full":
        return validate_frame(raw, FULL_SCHEMA, str(path)), fmt, ()
    plain = plain_to_long(validate_frame(raw, PLAIN_SCHEMA, str(path)), str(path), design.clusters)
    return plain.frame, fmt, plain.notes


def synthetic_record(scores: Path, frame: pd.DataFrame) -> dict[str, object] | None:
    """The scores' ``.synthetic.json`` sidecar (from `kit simulate board`) when there is one,
    else the evidence in the rows themselves (entry_hash synthetic:*), else None."""
    sidecar = scores.with_name(scores.name + ".synthetic.json")
    if sidecar.is_file():
        record = boundary.read_json(sidecar)
        if isinstance(record, dict) and record.get("synthetic") is True:
            return {**record, "sidecar": sidecar.name}
    return synthetic_evidence(frame)


@dataclass(frozen=True)
class CertifyRequest:
    """What `kit certify` asks for beyond the score table and the design."""

    null_draws: int = 0  # sign-flip draws of calibration.csv and loco.csv (0: none)
    validate: int = 0  # null and alternative synthetic boards of validity.csv (0: none)
    seed: int = 0
    calibration_scope: str = "composite"
    engine: Engine = field(default_factory=Engine)


@dataclass(frozen=True)
class CertifiedBoard:
    """Every table of one certification, and what the command says about them."""

    frame: pd.DataFrame  # the long score table certified
    table_kind: str  # full, plain or logs
    notes: tuple[str, ...]  # how a plain table was read
    result: Certification
    calibration: pd.DataFrame | None  # with null_draws
    loco: pd.DataFrame | None  # with null_draws
    validity: pd.DataFrame | None  # with validate
    validity_line: str
    synthetic: dict[str, object] | None  # the scores' synthetic record
    harness: HarnessTables | None = None  # harness logs: the conventional analysis and the logs


def certify_scores(
    scores: Path,
    design: Design,
    targets_path: Path | None,
    cluster_column: str | None,
    request: CertifyRequest,
    progress: Callable[[str], None] = lambda line: None,
) -> CertifiedBoard:
    """Read ``scores`` and certify them under ``design`` (with the targets at ``targets_path``
    for quality / style readouts), then calibrate and validate as ``request`` says;
    ``progress`` hears each stage."""
    progress(f"reading {scores}")
    frame, table_kind, notes = read_scores(scores, design, cluster_column)
    board = _certify_frame(frame, design, targets_path, str(scores), request, progress)
    return dataclasses.replace(
        board, table_kind=table_kind, notes=notes, synthetic=synthetic_record(scores, frame)
    )


@dataclass(frozen=True)
class LogRequest:
    """What `kit certify LOGS` asks of harness logs: the score read (inspect_ai scorer, or
    ``scorer.key`` of a dict score; lm-eval metric; None: the logs' only one) and the lm-eval
    filter (None: each file's first)."""

    score: str | None = None
    filter_name: str | None = None


@dataclass(frozen=True)
class HarnessTables:
    """What `kit certify LOGS` adds to the board: the conventional analysis beside it (per
    model means with CIs treating samples as independent; the unpaired z-test of each pair),
    the logs read and their declared conditions, and the summary (summary.json)."""

    means: pd.DataFrame
    unpaired: pd.DataFrame
    logs: pd.DataFrame
    conditions: pd.DataFrame
    summary: dict[str, object]


def certify_input(
    inputs: Sequence[Path],
    design: Design,
    targets_path: Path | None,
    cluster_column: str | None,
    request: CertifyRequest,
    logs: LogRequest = LogRequest(),
    progress: Callable[[str], None] = lambda line: None,
) -> CertifiedBoard:
    """`kit certify INPUT...`: harness logs (a folder, or ``.eval`` / ``.json`` / ``.jsonl``
    files: :func:`certify_logs`) or one score table (CSV / Parquet: :func:`certify_scores`).
    Raises :class:`ConfigError` for several score tables, or for ``logs`` options given with a
    score table."""
    from kit.runs.importers.harness_scores import is_harness_input

    if is_harness_input(inputs):
        return certify_logs(inputs, design, targets_path, cluster_column, request, logs, progress)
    if len(inputs) != 1:
        raise ConfigError(
            "bad_parameter",
            f"{len(inputs)} score tables given: kit certify reads one score table, or a folder "
            "(or files) of harness logs",
        )
    given = [n for n, v in (("--score", logs.score), ("--filter", logs.filter_name)) if v]
    if given:
        raise ConfigError(
            "bad_parameter",
            f"{' and '.join(given)} choose what is read from harness logs; {inputs[0]} is a "
            "score table (its score column is read)",
        )
    return certify_scores(inputs[0], design, targets_path, cluster_column, request, progress)


def certify_logs(
    inputs: Sequence[Path],
    design: Design,
    targets_path: Path | None,
    cluster_column: str | None,
    request: CertifyRequest,
    logs: LogRequest = LogRequest(),
    progress: Callable[[str], None] = lambda line: None,
) -> CertifiedBoard:
    """Certify the models of a folder (or files) of harness logs (kit.certify.harness): one
    benchmark or exit 2; pairs whose declared conditions differ refused (decided from the
    conditions alone); the logs laid out as the full score table and certified by the one
    engine; the conventional analysis computed beside it."""
    from kit.certify.harness import (
        check_one_benchmark,
        condition_table,
        log_table,
        pair_refusals,
        sample_means,
        score_frame,
        unpaired_tests,
    )
    from kit.certify.plain import FULL_SCHEMA
    from kit.runs.importers.harness_scores import read_harness_logs

    progress(f"reading harness logs: {', '.join(map(str, inputs))}")
    read = read_harness_logs(inputs, logs.score, logs.filter_name)
    check_one_benchmark(read)
    refused = pair_refusals(read)  # declared conditions only: no score enters the decision
    design = dataclasses.replace(design, refused={**design.refused, **refused})
    laid = score_frame(read, cluster_column)
    source = str(inputs[0]) if len(inputs) == 1 else f"{len(inputs)} inputs"
    frame = validate_frame(laid.frame, FULL_SCHEMA, source)
    board = _certify_frame(frame, design, targets_path, source, request, progress)
    means = sample_means(frame, design.alpha)
    summary: dict[str, object] = {
        "harness": read[0].harness,
        "task": str(read[0].conditions.get("task")),
        "score": read[0].readout,
        "logs": len(read),
        "cluster": cluster_column or "each sample its own cluster",
        "failed samples": laid.failed_samples,
        "pairs refused from declared conditions": len(refused),
    }
    tables = HarnessTables(
        means,
        unpaired_tests(means, board.result.pairs, design.alpha),
        log_table(read),
        condition_table(read),
        summary,
    )
    notes = (
        *laid.notes,
        *(
            f"{a} vs {b} refused before any score was read: {why}"
            for (a, b), why in refused.items()
        ),
    )
    return dataclasses.replace(board, table_kind="logs", notes=notes, harness=tables)


def _certify_frame(
    frame: pd.DataFrame,
    design: Design,
    targets_path: Path | None,
    source: str,
    request: CertifyRequest,
    progress: Callable[[str], None],
) -> CertifiedBoard:
    """Certify a validated long score table, then calibrate and validate as ``request`` says."""
    targets = read_table(targets_path, "certify_targets") if targets_path else None
    progress(f"certifying {len(frame)} rows")
    targets_source = str(targets_path or "")
    result = certify_board(frame, design, targets, source, targets_source)
    _check_scope(request, result)
    cal = loco = validity = None
    validity_line = ""
    draws = request.null_draws > 0 or request.validate > 0
    with mapper(request.engine) if draws else nullcontext() as run:
        if request.null_draws > 0:
            progress(f"calibrating: {request.null_draws} sign-flip draws + leave-one-cluster-out")
            cal, loco = calibrate_board(
                frame,
                design,
                result,
                request.null_draws,
                np.random.default_rng(request.seed),
                targets,
                request.calibration_scope,
                mapper=run,
            )
        if request.validate > 0:
            from kit.certify.validity import validate_board, validity_sentence

            n = request.validate
            progress(f"validating: {n} null + {n} alternative SYNTHETIC boards")
            validity = validate_board(
                frame, design, n, request.seed, targets, source, targets_source, mapper=run
            )
            validity_line = validity_sentence(validity)
    return CertifiedBoard(frame, "full", (), result, cal, loco, validity, validity_line, None)


def _check_scope(request: CertifyRequest, result: Certification) -> None:
    """``calibration_scope`` names a readout of the board (or 'all') when calibration runs."""
    scope = request.calibration_scope
    if request.null_draws > 0 and scope != "all" and scope not in set(result.pairs["readout"]):
        raise ConfigError("bad_parameter", f"--calibration-scope {scope!r} is not a readout")


def verdict_counts(result: Certification) -> dict[str, int]:
    """How many (pair, readout) rows got each verdict, by verdict name."""
    counts = result.pairs["verdict"].value_counts().sort_index()
    return {str(k): int(v) for k, v in counts.items()}
