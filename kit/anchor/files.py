"""`kit anchor`'s shell: read and check the judged and gold tables, build the artifact, print it.

JUDGED (``schemas/anchor_judged.yaml``: item_id, judge in [0, 1], optional stratum) and GOLD
(``schemas/anchor_gold.yaml``: item_id, gold 0/1) are csv or parquet. Refused with exit status 2,
naming the file, row and column: a table that breaks its schema (a duplicate item_id, a judge
score outside [0, 1], a gold label other than 0/1, a missing value), a gold item that was not
judged, fewer than :data:`kit.anchor.rates.MIN_GOLD` gold items, and a judged set that has no
item without gold (nothing unlabelled for the judge to speak for), and -- when JUDGED has a
``stratum`` column, a stratified design -- a stratum without gold. The unlabelled part is the
judged items without gold.

The artifact (``schemas/json/anchor.schema.json``) holds the three rows of
:func:`kit.anchor.rates.anchored_rates` (``ppi``, ``judge_only``, ``gold_only``), the counts,
the assumption, the warnings and, with a target half-width, the labelling plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.anchor.rates import MIN_GOLD, AnchoredRates, anchored_rates, one_class, too_small
from kit.core.errors import InputError, Location
from kit.core.hashing import file_sha256

ARTIFACT = "anchor"
JUDGED_SCHEMA = "anchor_judged"
GOLD_SCHEMA = "anchor_gold"
MAX_LISTED = 20


def read_items(path: Path, schema: str) -> pd.DataFrame:
    """A JUDGED or GOLD table (csv as text; parquet typed), validated against ``schema``;
    whole-number item ids of a parquet file (an integer column) are read as their digits."""
    from kit.core.schema import read_frame, validate_frame

    frame = read_frame(path)
    ids = frame.get("item_id")
    if ids is not None and pd.api.types.is_integer_dtype(ids.dtype):
        frame = frame.assign(item_id=ids.astype(str))
    return validate_frame(frame, schema, str(path))


def _row_base(frame: pd.DataFrame) -> int:
    return int(frame.attrs.get("row_base", 2))


@dataclass(frozen=True)
class Aligned:
    """Gold labels and judge scores of the gold items (GOLD's order), judge scores of the
    unlabelled items (JUDGED's order), and each one's stratum when JUDGED has a stratum column."""

    gold: np.ndarray
    judge_gold: np.ndarray
    judge_unlabelled: np.ndarray
    strata_gold: np.ndarray | None = None
    strata_unlabelled: np.ndarray | None = None
    clusters_gold: np.ndarray | None = None
    clusters_unlabelled: np.ndarray | None = None


def align(judged: pd.DataFrame, gold: pd.DataFrame, judged_path: Path, gold_path: Path) -> Aligned:
    """Gold and judged items matched by item_id (:class:`Aligned`). Raises :class:`InputError`
    naming GOLD's rows whose item was not judged, a gold sample that is too small, a judged set
    without an unlabelled item, and a stratum without gold."""
    ids_judged = judged["item_id"].astype(str).tolist()
    score = dict(zip(ids_judged, judged["judge"].astype(float), strict=True))
    ids = gold["item_id"].astype(str).tolist()
    missing = [i for i, item in enumerate(ids) if item not in score]
    if missing:
        base = _row_base(gold)
        details = [
            f"{Location(str(gold_path), i + base, 'item_id')}: {ids[i]!r} is not an item_id of "
            f"{judged_path}"
            for i in missing[:MAX_LISTED]
        ]
        if len(missing) > MAX_LISTED:
            details.append(f"... and {len(missing) - MAX_LISTED} more")
        raise InputError(
            "gold_not_judged",
            f"{len(missing)} gold item(s) were not judged: gold must be a subset of the judged "
            f"items (every gold item_id a row of {judged_path})",
            where=Location(str(gold_path), missing[0] + _row_base(gold), "item_id"),
            details=details,
        )
    reason = too_small(len(ids)) or one_class(gold["gold"].to_numpy(dtype=float))
    if reason is not None:
        raise InputError("gold_too_small", reason, where=Location(str(gold_path), None, "gold"))
    labelled = set(ids)
    unlabelled = [s for item, s in score.items() if item not in labelled]
    strata_g = strata_u = None
    if "stratum" in judged.columns:
        stratum = dict(zip(ids_judged, judged["stratum"].astype(str), strict=True))
        strata_g = np.asarray([stratum[item] for item in ids], dtype=object)
        strata_u = np.asarray(
            [stratum[item] for item in ids_judged if item not in labelled], dtype=object
        )
        with_gold = set(strata_g)
        without = set(strata_u)
        full = sorted(with_gold - without)
        if full:
            first = next(i for i, item in enumerate(ids_judged) if stratum[item] == full[0])
            raise InputError(
                "stratum_all_gold",
                f"stratum {full[0]!r}: every one of its judged items has gold ({len(full)} such "
                "strata); a stratified design needs unlabelled items beside the gold in each",
                where=Location(str(judged_path), first + _row_base(judged), "stratum"),
            )
        empty = sorted({s for s in stratum.values() if s not in with_gold})
        if empty:
            first = next(i for i, item in enumerate(ids_judged) if stratum[item] == empty[0])
            raise InputError(
                "stratum_without_gold",
                f"stratum {empty[0]!r} has no gold item ({len(empty)} strata without gold): a "
                "stratified design needs gold in every stratum",
                where=Location(str(judged_path), first + _row_base(judged), "stratum"),
            )
    if not unlabelled:
        raise InputError(
            "nothing_unlabelled",
            f"every one of the {len(score)} judged items has gold: nothing is left unlabelled for "
            "the judge to speak for (the gold-only rate is the answer; or judge more items)",
            where=Location(str(judged_path)),
        )
    clusters_g = clusters_u = None
    if "cluster" in judged.columns:
        if strata_g is not None:
            raise InputError(
                "strata_and_clusters",
                "JUDGED has both a stratum and a cluster column: a stratified design with "
                "clustered items is not supported; give one of the two",
                where=Location(str(judged_path), None, "cluster"),
            )
        cluster = dict(zip(ids_judged, judged["cluster"].astype(str), strict=True))
        clusters_g = np.asarray([cluster[item] for item in ids], dtype=object)
        clusters_u = np.asarray(
            [cluster[item] for item in ids_judged if item not in labelled], dtype=object
        )
        for what, c in (("judged", set(cluster.values())), ("gold", set(clusters_g))):
            if len(c) < 2:
                raise InputError(
                    "too_few_clusters",
                    f"{len(c)} cluster(s) among the {what} items: cluster-robust intervals "
                    "need at least 2",
                    where=Location(str(judged_path), None, "cluster"),
                )
    y = gold["gold"].to_numpy(dtype=float)
    fg = np.asarray([score[item] for item in ids], dtype=float)
    return Aligned(
        y, fg, np.asarray(unlabelled, dtype=float), strata_g, strata_u, clusters_g, clusters_u
    )


def anchor_files(
    judged_path: Path,
    gold_path: Path,
    alpha: float = 0.05,
    judge: str | None = None,
    half_width: float | None = None,
) -> tuple[AnchoredRates, dict[str, Any]]:
    """Read and check JUDGED and GOLD, estimate the three rates; the result and its artifact
    (a JSON-able dict, validated by the caller against ``anchor``)."""
    judged = read_items(judged_path, JUDGED_SCHEMA)
    gold = read_items(gold_path, GOLD_SCHEMA)
    a = align(judged, gold, judged_path, gold_path)
    name = judge or judged_path.name
    result = anchored_rates(
        a.gold,
        a.judge_gold,
        a.judge_unlabelled,
        name,
        alpha,
        half_width,
        a.strata_gold,
        a.strata_unlabelled,
        a.clusters_gold,
        a.clusters_unlabelled,
    )
    return result, artifact(result, judged_path, gold_path)


def artifact(result: AnchoredRates, judged_path: Path, gold_path: Path) -> dict[str, Any]:
    """The JSON artifact of one anchored rate (``schemas/json/anchor.schema.json``)."""
    from kit import __version__

    plan = result.plan
    return {
        "artifact": ARTIFACT,
        "kit_version": __version__,
        "judge": result.judge,
        "alpha": result.alpha,
        "assumption": result.assumption,
        "design": "uniform" if result.strata is None else "stratified",
        "clusters": None if result.clusters is None else result.clusters[1],
        "strata": None
        if result.strata is None
        else [{"stratum": h, "n_judged": m, "n_gold": n} for h, m, n in result.strata],
        "inputs": {
            "judged": {"name": judged_path.name, "sha256": file_sha256(judged_path)},
            "gold": {"name": gold_path.name, "sha256": file_sha256(gold_path)},
        },
        "n_judged": result.n_judged,
        "n_gold": result.n_gold,
        "n_unlabelled": result.n_unlabelled,
        "gold_positives": result.gold_positives,
        "min_gold": MIN_GOLD,
        "rows": [
            {
                "method": r.method,
                "estimate": r.estimate,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "se": r.se,
                "n": r.n,
                "lambda": r.lam,
                "relative_to": r.relative_to,
                "description": r.description,
                "interval": r.interval,
            }
            for r in result.rows
        ],
        "warnings": list(result.warnings),
        "plan": None
        if plan is None
        else {
            "target_half_width": plan.target_half_width,
            "n_gold": plan.n_gold,
            "half_width": plan.half_width,
            "n_best": plan.n_best,
            "lambda": plan.lam,
            "n_gold_only": plan.n_gold_only,
            "pilot_n": plan.pilot_n,
            "n_judged": plan.n_judged,
        },
    }


def interval_lines(result: AnchoredRates) -> list[str]:
    """Which interval each row took: one line when all three agree, else one per method."""
    kinds = {r.interval for r in result.rows}
    if len(kinds) == 1:
        return [f"  intervals: {kinds.pop()}"]
    return [f"  {r.method} interval: {r.interval}" for r in result.rows]


def _pct(alpha: float) -> str:
    return f"{100 * (1 - alpha):.4g}%"


def lines(result: AnchoredRates, out: Path | None = None) -> list[str]:
    """The readable table `kit anchor` prints: the gold-anchored rate first."""
    level = _pct(result.alpha)
    out_lines = [
        f"rate anchored on gold: judge {result.judge}, {level} intervals (alpha = "
        f"{result.alpha:g})",
        f"  judged items {result.n_judged}: gold {result.n_gold} ({result.gold_positives} with "
        f"gold = 1), unlabelled {result.n_unlabelled}",
        "",
        f"  {'method':<11} {'estimate':>8}  {level + ' CI':<18} {'n':>7}  {'lambda':>6}  rate of",
    ]
    for r in result.rows:
        ci = f"[{r.ci_low:.4f}, {r.ci_high:.4f}]"
        lam = "" if r.lam is None else f"{r.lam:.3f}"
        who = "gold labels" if r.relative_to == "gold" else f"judge {r.relative_to}'s labels"
        out_lines.append(f"  {r.method:<11} {r.estimate:>8.4f}  {ci:<18} {r.n:>7}  {lam:>6}  {who}")
    out_lines += [
        "",
        "  ppi: PPI++ (power-tuned prediction-powered inference; lambda = 1 is PPI, 0 gold-only)",
        *interval_lines(result),
        f"  assumption: {result.assumption}",
    ]
    if result.strata is not None:
        out_lines.append(
            "  strata (judged/gold): "
            + ", ".join(f"{h} {m}/{n}" for h, m, n in result.strata)
            + "; the judge-only rate is the plain mean over every judged item"
        )
    plan = result.plan
    if plan is not None:
        if plan.n_gold is not None:
            out_lines.append(
                ("  plan (for a uniform design)" if result.strata is not None else "  plan")
                + f": +-{plan.target_half_width:g} needs about {plan.n_gold} gold items of "
                f"{plan.n_judged} judged (projected +-{plan.half_width:.4f}, lambda "
                f"{plan.lam:.3f}; gold-only would need {plan.n_gold_only}), from this pilot of "
                f"{plan.pilot_n}"
            )
        else:
            out_lines.append(
                f"  plan: +-{plan.target_half_width:g} is out of reach with {plan.n_judged} judged "
                f"items (best projected +-{plan.half_width:.4f} at {plan.n_best} gold); judge "
                f"more items, from this pilot of {plan.pilot_n}"
            )
    out_lines += [f"  warning: {w}" for w in result.warnings]
    if out is not None:
        out_lines.append(f"  wrote {out}")
    return out_lines
