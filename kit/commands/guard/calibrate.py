"""`kit guard calibrate`: calibrate the guard on a lab's own labelled sample (issue 13).

Registered on the ``guard`` group in :mod:`kit.commands.guard` (the package's ``__init__``).
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np
import pandas as pd

from kit import __version__
from kit.commands.scoring_options import batch_size_option, device_option, variant_option
from kit.commands.sealed import sealed_file
from kit.core import atomic
from kit.core.errors import ConfigError, InputError, Location
from kit.guard.verifiers.load import DEFAULT_VERIFIER, VERIFIER_HELP


def _read_labelled(path: Path, label_map: dict[str, str]) -> tuple[pd.DataFrame, np.ndarray | None]:
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


@click.command("calibrate")
@click.argument("labelled", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--verifier", default=DEFAULT_VERIFIER, show_default=True, help=VERIFIER_HELP)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Calibration artifact (JSON) for --calibration of `kit guard run` and `kit audit`.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.1,
    show_default=True,
    help="Miss tolerance: catch >= 1 - alpha of exchangeable unsupported citations.",
)
@click.option(
    "--label-map",
    default=None,
    help="Extra label mapping SRC=DST,... onto entailment/neutral/contradiction "
    "(SUPPORT/CONTRADICT/NEI and the three NLI labels are known).",
)
@click.option("--name", default=None, help="Name of the sample in reports [file name].")
@click.option(
    "--pooled",
    is_flag=True,
    help="One tau over all negative types (default: Mondrian, one tau per type, when the "
    "negatives have two or more types).",
)
@variant_option
@device_option
@batch_size_option
@sealed_file("out", kind="guard-calibrate")
def calibrate_cmd(
    labelled: Path,
    verifier: str,
    out: Path,
    alpha: float,
    label_map: str | None,
    name: str | None,
    pooled: bool,
    variant: str,
    device: str,
    batch_size: int,
) -> None:
    """Calibrate the guard's tau on a lab's own labelled sample; write a sealed artifact.

    LABELLED is a pair table in csv, parquet or jsonl (claim, passage, label; optional pair_id,
    group, type; kit.guard.pairtable) of citations
    the lab labelled itself: label SUPPORT/CONTRADICT/NEI or entailment/neutral/contradiction
    (others via --label-map). Supported = entailment; unsupported = the rest. The negative type
    is the `type` column when present, else the label (contradiction vs neutral/NEI); with two
    or more types tau is Mondrian: one tau per type (tau_t = s_(k_t), k_t = ceil((n_t+1)(1-alpha)))
    and the flag threshold is the largest, so the catch of every type is >= 1 - alpha.

    Refuses (exit 2) before scoring when the sample has too few unsupported pairs for alpha and
    says how many are needed. The artifact holds the verifier's name and sha256 (ONNX, or an LLM card's instrument), the
    sample's sha256, n, the scores, negative types, alpha, tau, k, per-type taus, the false-flag
    rate on the supported pairs (Wilson CI) and a seal (sha256 over the rest).

    \b
    Example:
      kit guard calibrate labelled.csv --verifier data/verifier-nli --alpha 0.1 --out cal.json
      kit guard run answers.jsonl --calibration cal.json --verifier data/verifier-nli --out g/
    """
    from kit.core.hashing import file_sha256
    from kit.core.schema import validate_json
    from kit.guard.conformal.calibration import build_artifact, catch_statement
    from kit.guard.conformal.rule import min_calibration_size, rank_of
    from kit.guard.scoring.pairtable import parse_label_map
    from kit.guard.training.adapt_card import check_disjoint
    from kit.guard.verifiers.card import card_identity
    from kit.guard.verifiers.load import load_verifier

    extra = parse_label_map(label_map)
    frame, types = _read_labelled(labelled, extra)
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
    v = load_verifier(verifier, variant, device, batch_size, progress=True)
    card = v.card.to_dict()
    check_disjoint(card, frame, labelled)
    scores = np.asarray(v.score(frame["claim"].tolist(), frame["passage"].tolist()), dtype=float)
    missing = np.isnan(scores)
    if missing.any():  # refused by the instrument: no score, never a number
        click.echo(
            f"left out {int(missing.sum())} labelled pair(s) the verifier gave no score (refused "
            "by its endpoint); the catch guarantee covers citations it scores -- a refused "
            "citation has no score to flag and goes to review",
            err=True,
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
        name=name or labelled.name,
        sample_sha256=file_sha256(labelled),
        labels=frame["label"].tolist(),
        scores=scores,
        alpha=alpha,
        verifier=card,
        types=None if types is None else list(types),
        by_type=not pooled,
        label_map=extra,
        kit_version=__version__,
    )
    validate_json(art, "guard_calibration_artifact", str(out))
    atomic.write_text(out, json.dumps(art, indent=2, sort_keys=True) + "\n")
    s = art["sample"]
    id_field, id_sha = card_identity(card)
    click.echo(
        f"calibrated on {art['name']} (sha256 {s['sha256'][:12]}, {s['n']} pairs: "
        f"{s['n_unsupported']} unsupported, {s['n_supported']} supported; negative types: "
        f"{', '.join(s['negative_types'])}) with {card['name']} ({id_field.replace('_', ' ')} "
        f"{id_sha[:12]})"
    )
    click.echo(
        f"  {art['rule']}: tau = {art['tau']:.4g} at alpha = {alpha:g} -> "
        + catch_statement(1 - alpha, "unsupported", art["name"])
    )
    for t_name, row in sorted(art["per_type"].items()):
        click.echo(
            f"  type {t_name}: n = {row['n']}, k = {row['k']}, tau_{t_name} = {row['tau']:.4g} "
            "-> " + catch_statement(1 - alpha, t_name, "this sample's")
        )
    ff = art["false_flag"]
    if ff:
        click.echo(
            f"  false-flag rate on supported citations: {ff['estimate']:.3f} "
            f"[{ff['lo']:.3f}, {ff['hi']:.3f}] ({ff['k']}/{ff['n']}, Wilson 95%)"
        )
    else:
        click.echo("  false-flag rate on supported citations: not measurable (no supported pairs)")
    click.echo(f"  seal {art['seal'][:16]} -> {out}")
