"""`kit certify` as one library verb: read a score table, certify it, calibrate and validate.

:func:`certify_scores` is the whole pipeline of the command (docs/architecture.md, "Certified
leaderboard"): the score table read in either format (:func:`read_scores`), the board
certified (:func:`kit.certify.engine.certify_board`), and on request the sign-flip calibration
with leave-one-cluster-out and the validity of the design on synthetic boards shaped like the
input. It returns every table; the command writes them, draws the figure and prints.
"""

from __future__ import annotations

from collections.abc import Callable
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
    table_kind: str  # full or plain
    notes: tuple[str, ...]  # how a plain table was read
    result: Certification
    calibration: pd.DataFrame | None  # with null_draws
    loco: pd.DataFrame | None  # with null_draws
    validity: pd.DataFrame | None  # with validate
    validity_line: str
    synthetic: dict[str, object] | None  # the scores' synthetic record


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
    targets = read_table(targets_path, "certify_targets") if targets_path else None
    progress(f"certifying {len(frame)} rows")
    source, targets_source = str(scores), str(targets_path or "")
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
    synthetic = synthetic_record(scores, frame)
    return CertifiedBoard(
        frame, table_kind, notes, result, cal, loco, validity, validity_line, synthetic
    )


def _check_scope(request: CertifyRequest, result: Certification) -> None:
    """``calibration_scope`` names a readout of the board (or 'all') when calibration runs."""
    scope = request.calibration_scope
    if request.null_draws > 0 and scope != "all" and scope not in set(result.pairs["readout"]):
        raise ConfigError("bad_parameter", f"--calibration-scope {scope!r} is not a readout")


def verdict_counts(result: Certification) -> dict[str, int]:
    """How many (pair, readout) rows got each verdict, by verdict name."""
    counts = result.pairs["verdict"].value_counts().sort_index()
    return {str(k): int(v) for k, v in counts.items()}
