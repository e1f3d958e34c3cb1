"""Calibrating the guard on a lab's own labelled sample (issue 13; library verbs).

``kit guard calibrate`` is a thin shell over these (step 5 of docs/architecture.md):
:func:`calibrate` reads the labelled pair table (:func:`read_labelled`), refuses a sample too
small for alpha before loading the verifier, scores the pairs, leaves out those the verifier
gave no score and builds the sealed artifact
(:func:`kit.guard.conformal.calibration.build_artifact`); :func:`write` checks it against its
schema and writes it; :func:`calibration_lines` is what the command prints.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core import atomic
from kit.core.errors import ConfigError, InputError, Location


@dataclass(frozen=True)
class CalibrateOptions:
    """What ``kit guard calibrate`` was asked (its arguments, one field each)."""

    labelled: Path
    verifier: str
    alpha: float
    label_map: str | None
    name: str | None
    pooled: bool
    variant: str
    device: str
    batch_size: int
    kit_version: str


@dataclass(frozen=True)
class Calibrated:
    """The artifact (schema guard_calibration_artifact, sealed) and the verifier's card."""

    artifact: dict[str, Any]
    card: dict[str, Any]
    alpha: float


def read_labelled(path: Path, label_map: dict[str, str]) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The labelled pair table (kit.guard.pairtable) with labels normalised, and its ``type``
    column when present (one negative type per row; required on unsupported rows)."""
    from kit.guard.scoring.pairtable import read_labelled_table

    frame = read_labelled_table(path, label_map)
    base = int(frame.attrs.get("row_base", 2))
    types = None
    if "type" in frame.columns:
        raw = frame["type"].tolist()
        types = np.asarray(
            ["" if v is None or (isinstance(v, float) and v != v) else str(v) for v in raw],
            dtype=object,
        )
        unsup = (frame["label"] != "entailment").to_numpy()
        blank = [i for i in np.flatnonzero(unsup) if not types[i].strip()]
        if blank:
            raise InputError(
                "missing_value",
                "an unsupported pair has an empty 'type' (give every negative a type, or drop "
                "the column to type negatives by label)",
                where=Location(str(path), int(blank[0]) + base, "type"),
            )
    return frame, types


def calibrate(
    options: CalibrateOptions, say: Callable[[str], None] = lambda line: None
) -> Calibrated:
    """Score ``options.labelled`` with the verifier and calibrate tau (Mondrian per negative
    type unless ``pooled``). ``say`` gets the pairs left out (the verifier gave no score).
    Refuses (ConfigError) a sample with too few unsupported pairs for alpha, before loading the
    verifier, and again when too few of them have a score."""
    from kit.core.hashing import file_sha256
    from kit.guard.conformal.calibration import build_artifact
    from kit.guard.conformal.rule import min_calibration_size, rank_of
    from kit.guard.scoring.pairtable import parse_label_map
    from kit.guard.training.adapt_card import check_disjoint
    from kit.guard.verifiers.load import load_verifier

    labelled, alpha = options.labelled, options.alpha
    extra = parse_label_map(options.label_map)
    frame, types = read_labelled(labelled, extra)
    n_unsup = int((frame["label"] != "entailment").sum())
    need = min_calibration_size(alpha)
    if n_unsup < need:  # refuse before loading the verifier
        k = rank_of(n_unsup, alpha)
        raise ConfigError(
            "too_little_calibration",
            f"{labelled} has {n_unsup} labelled unsupported citation(s) of {len(frame)}; alpha="
            f"{alpha:g} needs k = ceil((n+1)(1-alpha)) = {k} <= n, i.e. at least {need} labelled "
            f"unsupported citations. Label {need - n_unsup} more, or raise --alpha",
        )
    v = load_verifier(
        options.verifier, options.variant, options.device, options.batch_size, progress=True
    )
    card = v.card.to_dict()
    check_disjoint(card, frame, labelled)
    scores = np.asarray(v.score(frame["claim"].tolist(), frame["passage"].tolist()), dtype=float)
    missing = np.isnan(scores)
    if missing.any():  # refused by the instrument: no score, never a number
        say(
            f"left out {int(missing.sum())} labelled pair(s) the verifier gave no score (refused "
            "by its endpoint); the catch guarantee covers citations it scores -- a refused "
            "citation has no score to flag and goes to review"
        )
        frame, scores = frame[~missing], scores[~missing]
        types = None if types is None else np.asarray(types)[~missing]
        n_left = int((frame["label"] != "entailment").sum())
        if n_left < need:
            raise ConfigError(
                "too_little_calibration",
                f"{labelled}: {n_left} labelled unsupported pair(s) have a score; alpha="
                f"{alpha:g} needs at least {need}",
            )
    art = build_artifact(
        name=options.name or labelled.name,
        sample_sha256=file_sha256(labelled),
        labels=frame["label"].tolist(),
        scores=scores,
        alpha=alpha,
        verifier=card,
        types=None if types is None else list(types),
        by_type=not options.pooled,
        label_map=extra,
        kit_version=options.kit_version,
    )
    return Calibrated(art, card, alpha)


def write(result: Calibrated, out: Path) -> None:
    """The artifact, checked against its JSON Schema, to ``out`` (indented, keys sorted)."""
    from kit.core.schema import validate_json

    validate_json(result.artifact, "guard_calibration_artifact", str(out))
    atomic.write_text(out, json.dumps(result.artifact, indent=2, sort_keys=True) + "\n")


def calibration_lines(result: Calibrated, out: Path) -> list[str]:
    """What ``kit guard calibrate`` prints: the sample, the verifier, tau (per type) with the
    catch it guarantees, the false-flag rate on the supported pairs and the seal."""
    from kit.guard.conformal.calibration import catch_statement
    from kit.guard.verifiers.card import card_identity

    art, card, alpha = result.artifact, result.card, result.alpha
    s = art["sample"]
    id_field, id_sha = card_identity(card)
    lines = [
        f"calibrated on {art['name']} (sha256 {s['sha256'][:12]}, {s['n']} pairs: "
        f"{s['n_unsupported']} unsupported, {s['n_supported']} supported; negative types: "
        f"{', '.join(s['negative_types'])}) with {card['name']} ({id_field.replace('_', ' ')} "
        f"{id_sha[:12]})",
        f"  {art['rule']}: tau = {art['tau']:.4g} at alpha = {alpha:g} -> "
        + catch_statement(1 - alpha, "unsupported", art["name"]),
    ]
    for t_name, row in sorted(art["per_type"].items()):
        lines.append(
            f"  type {t_name}: n = {row['n']}, k = {row['k']}, tau_{t_name} = {row['tau']:.4g} "
            "-> " + catch_statement(1 - alpha, t_name, "this sample's")
        )
    ff = art["false_flag"]
    if ff:
        lines.append(
            f"  false-flag rate on supported citations: {ff['estimate']:.3f} "
            f"[{ff['lo']:.3f}, {ff['hi']:.3f}] ({ff['k']}/{ff['n']}, Wilson 95%)"
        )
    else:
        lines.append(
            "  false-flag rate on supported citations: not measurable (no supported pairs)"
        )
    lines.append(f"  seal {art['seal'][:16]} -> {out}")
    return lines
