"""Certify a whole board: a pure function from a validated score table and a Design to tables.

Pipeline (docs/architecture.md, "Certified leaderboard"): checks (clusters declared, metadata
consistent) -> a dense (readout, system, task) cube -> admissibility per (pair, readout) from
metadata alone (Definition 1) -> paired contrasts and the cluster-robust radius of every (pair,
readout) in one vectorised pass -> Eq. (4) verdicts -> composite on one common task set -> rank
intervals -> the conventional analysis R1..R5 side by side (the paper's Table 2).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kit.certify.admissibility import Admission, PairConditions, admit, admit_assumed
from kit.certify.composite import composite, normalise_quality, normalise_style
from kit.certify.contrast import decide, mde
from kit.certify.design import ASSUMED_LABEL, COMPOSITE, Design, family_description
from kit.certify.inference import sampling_radius
from kit.certify.ranks import rank_intervals
from kit.core.errors import ConfigError, InputError, Location
from kit.stats.cluster import ClusterT, naive_t

META = ("entry_hash", "backbone", "entry_condition", "length_view")


@dataclass(frozen=True)
class Board:
    """A score table laid out for vectorised certification.

    ``cube[r, s, t]`` is the score (NaN if failed or missing); the last readout is the
    composite, restricted to the common task set where every system has a composite.
    """

    systems: tuple[str, ...]
    tasks: tuple[str, ...]
    clusters: tuple[str, ...]
    codes: np.ndarray  # (T,) cluster code per task
    readouts: tuple[str, ...]  # table readouts then COMPOSITE
    cube: np.ndarray  # (R+1, S, T)
    failed: np.ndarray  # (R+1, S, T) a row exists and failed
    present: np.ndarray  # (R+1, S, T) a row exists
    meta: Mapping[str, np.ndarray]  # META column -> (S, T) object array (None = no row);
    # empty under ``admissibility: assumed`` (a table without entry metadata)
    composite_tasks: np.ndarray  # (T,) bool: the common composite task set


@dataclass(frozen=True)
class Certification:
    """All result tables of one board (every frame sorted deterministically)."""

    pairs: pd.DataFrame
    ranks: pd.DataFrame
    conventional: pd.DataFrame
    conventional_counts: pd.DataFrame
    m: int  # Bonferroni denominator
    family: str  # the Bonferroni family in words (design.family_description)
    inference: str  # the small-sample method of every radius q (Design.inference)
    n_failed_runs: int  # rows of the score table marked failed (or unscorable)
    n_tasks: int  # tasks of the board
    n_composite_tasks: int  # tasks of the common composite set (every system scored)
    admissibility: str = "tested"  # Design.admissibility; "assumed": no pair was tested


def prepare_board(
    frame: pd.DataFrame,
    design: Design,
    targets: pd.DataFrame | None = None,
    source: str = "",
    targets_source: str = "",
) -> Board:
    """Check a validated score table against the design and lay it out as a cube.

    Raises :class:`InputError` for a cluster the design does not declare, a task in two
    clusters, metadata that differ across readouts of one (task, system), a readout named by
    the design's axes that the table lacks or a table readout on none of them, a failed run
    that carries a score (or a run with neither), a table with no pair to compare (one system and no
    declared family), or a degenerate normalisation target (target <= q10_peers,
    band_hi <= band_lo) in ``targets_source``; for a table without the entry metadata columns
    (``META``) unless the design says ``admissibility: assumed`` (Definition 1 cannot be tested
    without them), and a :class:`ConfigError` for ``admissibility: assumed`` on a table that has
    them (the assumption would override what the metadata can decide).
    """
    if frame.empty:
        raise InputError("empty_table", "the score table has no rows", where=Location(source))
    frame = frame.reset_index(drop=True)
    check_metadata(list(frame.columns), design, source)
    _check_clusters(frame, design, source)
    systems = _systems(frame, design, source)
    readouts = _readouts(frame, design, source)
    tasks, cluster_names, codes = _task_layout(frame)
    si = pd.Index(systems).get_indexer(frame["system"].astype(str))
    ti = pd.Index(tasks).get_indexer(frame["task_id"].astype(str))
    ri = pd.Index(readouts).get_indexer(frame["readout"].astype(str))
    shape = (len(readouts) + 1, len(systems), len(tasks))
    cube = np.full(shape, np.nan)
    failed = np.zeros(shape, dtype=bool)
    present = np.zeros(shape, dtype=bool)
    score = frame["score"].to_numpy(dtype=float, na_value=np.nan)
    fail = frame["failed"].to_numpy(dtype=bool)
    _check_scores(score, fail, source)
    score = _normalise(frame, score, design, targets, source, targets_source)
    cube[ri, si, ti] = np.where(fail, np.nan, score)
    failed[ri, si, ti] = fail | ~np.isfinite(score)
    present[ri, si, ti] = True
    meta = _metadata(frame, design, (len(systems), len(tasks)), si, ti, source)
    common = _composite_layer(cube, present, failed, readouts, design)
    return Board(
        systems=systems,
        tasks=tasks,
        clusters=cluster_names,
        codes=codes,
        readouts=(*readouts, COMPOSITE),
        cube=cube,
        failed=failed,
        present=present,
        meta=meta,
        composite_tasks=common,
    )


def _check_clusters(frame: pd.DataFrame, design: Design, source: str) -> None:
    """Every cluster declared (when the design declares them); no task in two clusters."""
    if design.clusters is not None:
        declared = set(design.clusters)
        bad = ~frame["cluster"].isin(declared)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(
                "undeclared_cluster",
                f"cluster {frame.loc[i, 'cluster']!r} of task {frame.loc[i, 'task_id']!r} is "
                f"not declared in the design ({int(bad.sum())} row(s) in all); declare it "
                "under 'clusters:' -- unknown clusters are never made singletons",
                where=Location(source, i + 2, "cluster"),
            )
    per_task = frame.groupby("task_id", sort=True)["cluster"].nunique()
    if (per_task > 1).any():
        task = str(per_task[per_task > 1].index[0])
        raise InputError(
            "task_in_two_clusters",
            f"task {task!r} appears under more than one cluster",
            where=Location(source, column="cluster"),
        )


def _systems(frame: pd.DataFrame, design: Design, source: str) -> tuple[str, ...]:
    """The table's systems, sorted: at least one pair to certify, none the design omits."""
    systems = tuple(sorted(frame["system"].astype(str).unique()))
    if not design.pairs(list(systems)):
        raise InputError(
            "too_few_systems",
            f"the score table has {len(systems)} system(s) ({', '.join(systems)}) and the design "
            "declares no family or systems: there is no pair to certify",
            where=Location(source, column="system"),
        )
    if design.systems is not None:
        extra = sorted(set(systems) - set(design.systems))
        if extra:
            raise InputError(
                "undeclared_system",
                f"system(s) {', '.join(extra)} are in the table but not in the design's "
                "'systems:' list",
                where=Location(source, column="system"),
            )
    return systems


def _readouts(frame: pd.DataFrame, design: Design, source: str) -> tuple[str, ...]:
    """The table's readouts, sorted: every one the design's axes name, none off them."""
    readouts = tuple(sorted(frame["readout"].astype(str).unique()))
    if design.axes is not None:
        named = {r for rs in design.axes.values() for r in rs}
        missing = sorted(named - set(readouts))
        if missing:
            raise InputError(
                "missing_readout",
                f"{design.source} axes name readout(s) absent from the table: {', '.join(missing)}",
                where=Location(source, column="readout"),
            )
        off_axis = ~frame["readout"].astype(str).isin(named).to_numpy()
        if off_axis.any():
            i = int(np.flatnonzero(off_axis)[0])
            raise InputError(
                "readout_not_on_axes",
                f"readout {frame.loc[i, 'readout']!r} is on no axis of {design.source} "
                f"({int(off_axis.sum())} row(s) in all): a readout the design does not declare "
                "is never certified; add it to an axis or drop its rows",
                where=Location(source, i + 2, "readout"),
            )
    return readouts


def _task_layout(frame: pd.DataFrame) -> tuple[tuple[str, ...], tuple[str, ...], np.ndarray]:
    """Tasks ordered by (cluster, task_id), the cluster names and each task's cluster code."""
    task_cluster = frame.drop_duplicates("task_id").set_index("task_id")["cluster"].astype(str)
    cluster_names = tuple(sorted(task_cluster.unique()))
    cluster_index = {c: i for i, c in enumerate(cluster_names)}
    # Tasks ordered by (cluster, task_id): cluster sums are then contiguous blocks (no copies).
    tasks = tuple(sorted(task_cluster.index.astype(str), key=lambda t: (task_cluster[t], t)))
    codes = np.array([cluster_index[task_cluster[t]] for t in tasks], dtype=np.int64)
    return tasks, cluster_names, codes


def _check_scores(score: np.ndarray, fail: np.ndarray, source: str) -> None:
    """A run without a score is failed; a failed run has no score."""
    unexplained = ~fail & ~np.isfinite(score)
    if unexplained.any():
        i = int(np.flatnonzero(unexplained)[0])
        raise InputError(
            "score_missing",
            f"score is null but failed is false ({int(unexplained.sum())} row(s)); a run "
            "without a score must be marked failed",
            where=Location(source, i + 2, "score"),
        )
    contradictory = fail & np.isfinite(score)
    if contradictory.any():
        i = int(np.flatnonzero(contradictory)[0])
        raise InputError(
            "failed_with_score",
            f"failed is true but a score ({score[i]:.17g}) is present "
            f"({int(contradictory.sum())} row(s)); a failed run has no score: clear the "
            "score or mark the run not failed",
            where=Location(source, i + 2, "score"),
        )


def _metadata(
    frame: pd.DataFrame,
    design: Design,
    shape: tuple[int, int],
    si: np.ndarray,
    ti: np.ndarray,
    source: str,
) -> dict[str, np.ndarray]:
    """Each entry-metadata column as a (system, task) array (tested admissibility only); it
    must not differ across the readouts of one (task, system)."""
    meta: dict[str, np.ndarray] = {}
    for col in META if design.admissibility == "tested" else ():
        nunique = frame.groupby(["system", "task_id"], sort=False)[col].nunique()
        if (nunique > 1).any():
            s, t = nunique[nunique > 1].index[0]
            raise InputError(
                "inconsistent_metadata",
                f"{col} differs across readouts of task {t!r}, system {s!r}",
                where=Location(source, column=col),
            )
        arr = np.full(shape, None, dtype=object)
        arr[si, ti] = frame[col].astype(str).to_numpy(dtype=object)
        meta[col] = arr

    return meta


def check_metadata(columns: list[str], design: Design, source: str = "") -> None:
    """Refuse a table whose entry metadata do not fit the design's ``admissibility:``.

    ``tested`` (default) needs every ``META`` column: without them admissibility (Definition 1)
    cannot be tested, and an untested pair is never certified. ``assumed`` needs a table with
    none of them: where the metadata exist, they decide.
    """
    present = [c for c in META if c in columns]
    if design.admissibility == "assumed" and present:
        raise ConfigError(
            "admissibility_assumed_with_metadata",
            f"{design.source} says 'admissibility: assumed' but the score table {source} carries "
            f"entry metadata ({', '.join(present)}): admissibility is tested from them; remove "
            "'admissibility: assumed' from the design (it is only for tables without metadata)",
        )
    missing = [c for c in META if c not in columns]
    if design.admissibility == "tested" and missing:
        raise InputError(
            "admissibility_untestable",
            f"no entry metadata (missing column(s): {', '.join(missing)}): admissibility "
            "(Definition 1: may these two systems be compared at all?) cannot be tested, so no "
            "pair can be certified. Either add the columns entry_hash, backbone, "
            "entry_condition, length_view to every row (the full format, schemas/scores.yaml; "
            "docs/certify.md), or declare 'admissibility: assumed' in the design "
            f"({design.source}) to assume every pair admissible and exactly matched; every "
            f"verdict then says '{ASSUMED_LABEL}'",
            where=Location(source),
        )


def _composite_layer(
    cube: np.ndarray,
    present: np.ndarray,
    failed: np.ndarray,
    readouts: tuple[str, ...],
    design: Design,
) -> np.ndarray:
    """Fill the composite (last) layer of ``cube``/``present``/``failed`` in place from the
    readout layers, on ONE common task set (every system has a composite); return that set."""
    comp, _ = composite(cube[:-1], list(readouts), design.axes)
    common = np.all(np.isfinite(comp), axis=0)
    cube[-1] = np.where(common[None, :], comp, np.nan)
    present[-1] = present[:-1].any(axis=0)
    failed[-1] = present[-1] & ~np.isfinite(comp)
    return common


def rescored(board: Board, scores: np.ndarray, design: Design) -> Board:
    """``board`` with new readout scores ``scores`` (R, S, T; NaN = failed or missing) and its
    composite rebuilt by the rule of :func:`prepare_board`; clusters, metadata and the rows
    present are kept (a board of the same shape, e.g. a simulated one)."""
    cube = np.concatenate([scores, np.full((1, *scores.shape[1:]), np.nan)])
    present = board.present.copy()
    failed = board.failed.copy()
    failed[:-1] = present[:-1] & ~np.isfinite(scores)
    common = _composite_layer(cube, present, failed, board.readouts[:-1], design)
    return dataclasses.replace(
        board, cube=cube, present=present, failed=failed, composite_tasks=common
    )


def _normalise(
    frame: pd.DataFrame,
    score: np.ndarray,
    design: Design,
    targets: pd.DataFrame | None,
    source: str,
    targets_source: str = "",
) -> np.ndarray:
    """Apply quality / style normalisation to readouts the design declares as such.

    A target row whose band is empty (target <= q10_peers, band_hi <= band_lo) would make every
    score of that task undefined and silently drop it: it is an :class:`InputError` naming the
    targets file, row and column instead.
    """
    kinds = {r: k for r, k in design.readout_kinds.items() if k != "normalised"}
    if not kinds:
        return score
    if targets is None:
        raise InputError(
            "missing_targets",
            f"readouts {sorted(kinds)} are declared quality/style but no targets table was "
            "given (kit certify --targets)",
            where=Location(source),
        )
    _check_targets(targets, kinds, targets_source)
    key = targets.set_index(["task_id", "readout"])
    out = score.copy()
    for readout, kind in kinds.items():
        rows = np.flatnonzero((frame["readout"] == readout).to_numpy())
        if rows.size == 0:
            continue
        idx = pd.MultiIndex.from_arrays(
            [frame["task_id"].to_numpy()[rows], np.full(rows.size, readout)]
        )
        found = key.reindex(idx)
        cols = ("q10_peers", "target") if kind == "quality" else ("band_lo", "band_hi")
        vals = [found[c].to_numpy(dtype=float, na_value=np.nan) for c in cols]
        if np.any(~np.isfinite(vals[0]) | ~np.isfinite(vals[1])):
            bad = int(rows[np.flatnonzero(~np.isfinite(vals[0]) | ~np.isfinite(vals[1]))[0]])
            raise InputError(
                "missing_target",
                f"no {'/'.join(cols)} for task {frame.loc[bad, 'task_id']!r}, readout "
                f"{readout!r} in the targets table",
                where=Location(source, bad + 2),
            )
        fn = normalise_quality if kind == "quality" else normalise_style
        out[rows] = fn(score[rows], vals[0], vals[1])
    return out


def _check_targets(targets: pd.DataFrame, kinds: Mapping[str, str], source: str) -> None:
    """Raise for the first targets row of a declared readout whose normalisation band is empty."""
    targets = targets.reset_index(drop=True)
    for readout, kind in sorted(kinds.items()):
        lo_col, hi_col = ("q10_peers", "target") if kind == "quality" else ("band_lo", "band_hi")
        rows = (targets["readout"] == readout).to_numpy()
        lo = targets[lo_col].to_numpy(dtype=float, na_value=np.nan)
        hi = targets[hi_col].to_numpy(dtype=float, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            bad = rows & np.isfinite(lo) & np.isfinite(hi) & ~(hi > lo)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                "degenerate_target",
                f"{hi_col} {hi[i]:.17g} <= {lo_col} {lo[i]:.17g} for task "
                f"{targets.loc[i, 'task_id']!r}, {kind} readout {readout!r} "
                f"({int(bad.sum())} row(s) in all): the normalisation is undefined and every "
                "run of the task would be dropped as a failure",
                where=Location(source, i + 2, hi_col),
            )


def pair_conditions(board: Board, a: int, b: int) -> PairConditions:
    """Definition 1's conditions for systems ``a``, ``b`` from metadata only (no scores)."""
    both = board.present[:-1, a].any(axis=0) & board.present[:-1, b].any(axis=0)
    eq = {c: bool(np.all(board.meta[c][a, both] == board.meta[c][b, both])) for c in META}
    return PairConditions(
        entries_match=eq["entry_hash"],
        channel_match=eq["length_view"],
        protocol_match=eq["entry_condition"],
        backbone_match=eq["backbone"],
    )


@dataclass(frozen=True)
class _Family:
    pairs: list[tuple[str, str]]  # declared family (sorted names)
    ia: np.ndarray  # index in board.systems, -1 when absent from the table
    ib: np.ndarray


def _family(board: Board, design: Design) -> _Family:
    pairs = design.pairs(list(board.systems))
    index = {s: i for i, s in enumerate(board.systems)}
    ia = np.array([index.get(a, -1) for a, _ in pairs], dtype=np.int64)
    ib = np.array([index.get(b, -1) for _, b in pairs], dtype=np.int64)
    return _Family(pairs, ia, ib)


def bonferroni_m(n_pairs: int, n_readouts: int, design: Design) -> int:
    """m of delta' = alpha / m: every pair of the declared family, also those skipped, times
    every readout shown (the composite included) unless the design narrows the family to the
    pairs of each readout (``multiplicity: pairs``; see design.MULTIPLICITY)."""
    return n_pairs * (n_readouts if design.multiplicity == "pairs_x_readouts" else 1)


def admissions(board: Board, design: Design, fam: _Family) -> list[list[Admission]]:
    """Definition 1 for every (readout, pair); absent systems are left to too_few_tasks; a pair
    the design refuses from declared conditions outside the table (``Design.refused``: the
    harness logs' specs) is refused with its reason, whatever the metadata say."""
    out: list[list[Admission]] = []
    assumed = design.admissibility == "assumed"
    conds = [
        pair_conditions(board, int(a), int(b)) if a >= 0 and b >= 0 and not assumed else None
        for a, b in zip(fam.ia, fam.ib, strict=True)
    ]
    for readout in board.readouts:
        row = []
        for (a, b), ia, ib, cond in zip(fam.pairs, fam.ia, fam.ib, conds, strict=True):
            if ia < 0 or ib < 0:
                row.append(Admission(True, 0.0, math.nan, "system_absent"))
            elif (a, b) in design.refused:  # declared conditions outside the table differ
                eps_fair = design.tolerance.get(readout)
                fair = math.nan if eps_fair is None else float(eps_fair)
                row.append(Admission(False, math.inf, fair, design.refused[(a, b)]))
            elif cond is None:  # admissibility: assumed
                row.append(admit_assumed(readout, design))
            else:
                row.append(admit(a, b, readout, cond, design))
        out.append(row)
    return out


def contrasts(board: Board, fam: _Family) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Paired differences (R, P, T) with NaN where either side failed; per (R, P) the failure
    counts of each side and the tasks lost although both sides scored (the composite's common
    task set drops a task when ANY system lacks a composite there)."""
    ia = np.where(fam.ia >= 0, fam.ia, 0)
    ib = np.where(fam.ib >= 0, fam.ib, 0)
    d = board.cube[:, ia, :] - board.cube[:, ib, :]
    absent = (fam.ia < 0) | (fam.ib < 0)
    d[:, absent, :] = np.nan
    both = board.present[:, ia, :] & board.present[:, ib, :]
    n_failed_a = (board.failed[:, ia, :] & both).sum(axis=2)
    n_failed_b = (board.failed[:, ib, :] & both).sum(axis=2)
    n_failed_a[:, absent] = 0
    n_failed_b[:, absent] = 0
    scored = both & ~board.failed[:, ia, :] & ~board.failed[:, ib, :]
    n_lost = (scored & ~np.isfinite(d)).sum(axis=2)
    n_lost[:, absent] = 0
    return d, n_failed_a, n_failed_b, n_lost


def certify_board(
    frame: pd.DataFrame,
    design: Design,
    targets: pd.DataFrame | None = None,
    source: str = "",
    targets_source: str = "",
) -> Certification:
    """Certify every (pair, readout) of the declared family, and the composite. Pure."""
    board = prepare_board(frame, design, targets, source, targets_source)
    return certify_prepared(board, design)


@dataclass(frozen=True)
class Verdicts:
    """Eq. (4) for every (readout, pair), flattened readout-major to (R * P,) arrays."""

    fam: _Family
    m: int
    ct: ClusterT  # the radius of the design's inference method (q = crit * se)
    verdict: np.ndarray
    eps: np.ndarray
    fair: np.ndarray
    admissible: np.ndarray
    reason: np.ndarray
    n_failed_a: np.ndarray
    n_failed_b: np.ndarray
    n_lost: np.ndarray
    d: np.ndarray  # (R * P, T) paired differences


def pair_verdicts(board: Board, design: Design) -> Verdicts:
    """Admissibility, the sampling radius and the verdict of every (readout, pair): arrays only
    (the part of :func:`certify_prepared` a simulation repeats)."""
    fam = _family(board, design)
    n_r, n_p = len(board.readouts), len(fam.pairs)
    m = bonferroni_m(n_p, n_r, design)
    delta = design.alpha / m
    adm = admissions(board, design, fam)
    d, fa, fb, lost = contrasts(board, fam)
    flat = d.reshape(n_r * n_p, -1)
    eps = np.array([[x.eps_outside for x in row] for row in adm]).ravel()
    fair = np.array([[x.eps_fair for x in row] for row in adm]).ravel()
    ok = np.array([[x.admissible for x in row] for row in adm]).ravel()
    reason = np.array([[x.reason for x in row] for row in adm], dtype=object).ravel()
    ct = sampling_radius(
        flat,
        board.codes,
        len(board.clusters),
        delta,
        design.inference,
        eps,
        design.inference_draws,
        np.random.default_rng(design.inference_seed),
    )
    verdict = decide(ok, ct.n, ct.k, ct.gap, ct.q, eps, design.min_common_tasks, ct.se)
    return Verdicts(
        fam, m, ct, verdict, eps, fair, ok, reason, fa.ravel(), fb.ravel(), lost.ravel(), flat
    )


def certify_prepared(board: Board, design: Design) -> Certification:
    """:func:`certify_board` on an already prepared :class:`Board` (used by LOCO)."""
    v = pair_verdicts(board, design)
    fam, m, ct, verdict, eps, fair, ok, reason = (
        v.fam,
        v.m,
        v.ct,
        v.verdict,
        v.eps,
        v.fair,
        v.admissible,
        v.reason,
    )
    fa, fb, lost, flat = v.n_failed_a, v.n_failed_b, v.n_lost, v.d
    n_r, n_p = len(board.readouts), len(fam.pairs)
    readout_col = np.repeat(np.array(board.readouts, dtype=object), n_p)
    a_col = np.tile(np.array([p[0] for p in fam.pairs], dtype=object), n_r)
    b_col = np.tile(np.array([p[1] for p in fam.pairs], dtype=object), n_r)
    winner = np.where(verdict == "certified", np.where(ct.gap > 0, a_col, b_col), "")
    pairs = pd.DataFrame(
        {
            "system_a": a_col,
            "system_b": b_col,
            "readout": readout_col,
            "n_common": ct.n.astype(np.int64),
            "n_failed_a": fa.ravel().astype(np.int64),
            "n_failed_b": fb.ravel().astype(np.int64),
            "n_lost": lost.ravel().astype(np.int64),
            "n_clusters": ct.k.astype(np.int64),
            "gap": ct.gap,
            "se": ct.se,
            "q": ct.q,
            "df": ct.df,
            "crit": ct.crit,
            "eps_outside": eps,
            "eps_fair": fair,
            "verdict": verdict,
            "reason": reason,
            "winner": winner,
            "t": ct.t,
            "p": ct.p,
            "mde": mde(ct.q, eps),
            "family": np.full(n_r * n_p, design.multiplicity, dtype=object),
            "family_m": np.full(n_r * n_p, m, dtype=np.int64),
        }
    )
    if design.admissibility == "assumed":  # every verdict carries the user's assumption
        pairs["admissibility"] = np.full(n_r * n_p, ASSUMED_LABEL, dtype=object)
    conventional, counts = _conventional(pairs, flat, design, m, ok)
    pairs = blank_undefined(pairs)
    ranks = _ranks(board, pairs)
    order = ["readout", "system_a", "system_b"]
    return Certification(
        pairs=pairs.sort_values(order, kind="stable").reset_index(drop=True),
        ranks=ranks,
        conventional=conventional.sort_values(order, kind="stable").reset_index(drop=True),
        conventional_counts=counts,
        m=m,
        family=family_description(design.multiplicity, n_p, n_r),
        inference=design.inference,
        n_failed_runs=int(board.failed[:-1].sum()),
        n_tasks=len(board.tasks),
        n_composite_tasks=int(board.composite_tasks.sum()),
        admissibility=design.admissibility,
    )


RADIUS_COLUMNS = ("se", "q", "df", "crit", "t", "p", "mde")
NO_RADIUS = ("too_few_tasks", "too_few_clusters")


def blank_undefined(pairs: pd.DataFrame) -> pd.DataFrame:
    """Empty (NaN in memory, an empty csv cell) every statistic a verdict row does not define.

    A row labelled too_few_tasks or too_few_clusters has no radius (Eq. (4) is not applied
    below ``min_common_tasks`` common tasks or with fewer than two clusters): its se, q, df,
    crit, t, p and mde are empty, never numbers that look like evidence; gap and the counts stay
    (descriptive). A too_little_variation row keeps its statistics: se and q are the evidence
    for the label (t = 0, p = 1 for identical systems). docs/certify.md states the rule.
    """
    out = pairs.copy()
    out.loc[out["verdict"].isin(NO_RADIUS).to_numpy(), list(RADIUS_COLUMNS)] = np.nan
    return out


def _ranks(board: Board, pairs: pd.DataFrame) -> pd.DataFrame:
    """Rank intervals over the composite's certified relations (Section 3.4)."""
    systems = list(board.systems)
    index = {s: i for i, s in enumerate(systems)}
    above = np.zeros((len(systems), len(systems)), dtype=bool)
    comp = pairs[(pairs["readout"] == COMPOSITE) & (pairs["verdict"] == "certified")]
    for a, b, w in comp[["system_a", "system_b", "winner"]].itertuples(index=False):
        if a in index and b in index:
            lo = b if w == a else a
            above[index[w], index[lo]] = True
    ri = rank_intervals(systems, above)
    common = board.composite_tasks
    with np.errstate(invalid="ignore"):
        score = (
            board.cube[-1][:, common].mean(axis=1)
            if common.any()
            else np.full(len(systems), np.nan)
        )
    ranks = pd.DataFrame(
        {
            "system": systems,
            "composite": score,
            "n_tasks": np.full(len(systems), int(common.sum()), dtype=np.int64),
            "rank_lo": ri.rank_lo.astype(np.int64),
            "rank_hi": ri.rank_hi.astype(np.int64),
            "pinned": ri.rank_lo == ri.rank_hi,
            "tie_group": (
                pd.array(ri.tie_group, dtype="Int64")
                if ri.tie_group is not None
                else pd.array([None] * len(systems), dtype="Int64")
            ),
        }
    )
    return ranks.sort_values(
        ["rank_lo", "composite", "system"], ascending=[True, False, True], kind="stable"
    ).reset_index(drop=True)


RULES = ("R1", "R2", "R3", "R4", "R5")


def _conventional(
    pairs: pd.DataFrame, d: np.ndarray, design: Design, m: int, admissible: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's Table 2: each rule adds one requirement to the previous one.

    R1 naive paired t at alpha; R2 + clustering (cluster-robust t); R3 + Bonferroni (alpha/m);
    R4 + admissibility (Definition 1); R5 + nuisance radius (= Eq. (4), our certification).
    R4 and R5 are counted over the admissible pairs only, as in the paper.
    """
    alpha = design.alpha
    naive = naive_t(d, alpha)
    # Every rule uses the same minimum of common tasks, so they differ only in what they add.
    enough = pairs["n_common"].to_numpy() >= design.min_common_tasks
    p_cl = pairs["p"].to_numpy()
    r1 = enough & (naive.p < alpha)
    r2 = enough & (p_cl < alpha)
    r3 = enough & (p_cl < alpha / m)
    r4 = r3 & admissible
    r5 = (pairs["verdict"] == "certified").to_numpy()
    conv = pairs[["system_a", "system_b", "readout", "n_common", "gap"]].copy()
    conv["p_naive"] = naive.p
    conv["p_cluster"] = p_cl
    conv["admissible"] = admissible
    for name, col in zip(RULES, (r1, r2, r3, r4, r5), strict=True):
        conv[name] = col
    rows = []
    for readout, grp in conv.groupby("readout", sort=True):
        adm = grp["admissible"].to_numpy()
        for rule in RULES:
            over = adm if rule in ("R4", "R5") else np.ones(len(grp), dtype=bool)
            rows.append(
                {
                    "readout": readout,
                    "rule": rule,
                    "n_pairs": int(over.sum()),
                    "n_significant": int(grp[rule].to_numpy()[over].sum()),
                }
            )
    return conv, pd.DataFrame(rows)


def calibrate_board(
    frame: pd.DataFrame,
    design: Design,
    result: Certification,
    draws: int,
    rng: np.random.Generator,
    targets: pd.DataFrame | None = None,
    scope: str = COMPOSITE,
    mapper: Any = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sign-flip calibration and leave-one-cluster-out stability (Appendix F.5).

    ``scope`` is the readout whose decidable contrasts form the family of the null (default the
    composite, the ranked table), or ``"all"`` for every (pair, readout) of the board.
    ``mapper`` (:class:`kit.core.parallel.SerialMap` when None, or a Ray one) runs the sign-flip
    draws in groups (:func:`kit.certify.calibration.sign_flip_null`); same tables either way.
    Returns (calibration, loco) tables.
    """
    from kit.certify.calibration import (
        DECIDABLE,
        certified_set,
        loco_row,
        removed_by_c_star,
        sign_flip_null,
    )

    board = prepare_board(frame, design, targets)
    fam = _family(board, design)
    d, _, _, _ = contrasts(board, fam)
    pairs_unsorted = result.pairs.set_index(["readout", "system_a", "system_b"])
    keys = pd.MultiIndex.from_arrays(
        [
            np.repeat(np.array(board.readouts, dtype=object), len(fam.pairs)),
            np.tile(np.array([p[0] for p in fam.pairs], dtype=object), len(board.readouts)),
            np.tile(np.array([p[1] for p in fam.pairs], dtype=object), len(board.readouts)),
        ]
    )
    aligned = pairs_unsorted.reindex(keys)
    use = aligned["verdict"].isin(DECIDABLE).to_numpy().copy()
    if scope != "all":
        use &= np.asarray(aligned.index.get_level_values(0) == scope)
    flat = d.reshape(-1, d.shape[2])[use]
    eps = aligned["eps_outside"].to_numpy(dtype=float)[use]
    delta = design.alpha / result.m
    # the radius each verdict used: its variance weights and critical value (sign-flip: CR1 se)
    null = sign_flip_null(
        flat,
        board.codes,
        len(board.clusters),
        eps,
        delta,
        draws,
        rng,
        method="cr1" if design.inference == "signflip" else design.inference,
        crit=aligned["crit"].to_numpy(dtype=float)[use],
        mapper=mapper,
    )
    removed = removed_by_c_star(result.pairs, null.c_star) if null.c_star > 1 else None
    rows: list[dict[str, object]] = [
        {"quantity": "n_contrasts", "value": float(use.sum()), "detail": f"scope={scope}"},
        {
            "quantity": "n_draws",
            "value": float(len(null.statistic)),
            "detail": "exact enumeration of 2^K sign vectors" if null.exact else "random",
        },
        {
            "quantity": "fwer_false_certification",
            "value": null.fwer,
            "detail": f"P(max |gap'|/(q'+eps) > 1); nominal alpha={design.alpha}",
        },
        {"quantity": "c_star", "value": null.c_star, "detail": "95th percentile of the statistic"},
        {
            "quantity": "per_pair_false_certification_min",
            "value": float(null.per_contrast.min()) if use.any() else math.nan,
            "detail": f"nominal per pair delta' = {delta:.6g}",
        },
        {
            "quantity": "per_pair_false_certification_max",
            "value": float(null.per_contrast.max()) if use.any() else math.nan,
            "detail": f"nominal per pair delta' = {delta:.6g}",
        },
    ]
    if removed is not None:
        if scope != "all":
            removed = removed[removed["readout"] == scope]
        for rec in removed.itertuples(index=False):
            loser = rec.system_b if rec.winner == rec.system_a else rec.system_a
            rows.append(
                {
                    "quantity": "removed_by_c_star",
                    "value": float(rec.ratio),
                    "detail": f"{rec.winner} > {loser} on {rec.readout}",
                }
            )
    calibration = pd.DataFrame(rows)

    full = certified_set(result.pairs)
    loco = []
    for cluster in board.clusters:
        kept = frame[frame["cluster"] != cluster]
        if kept.empty:
            continue
        again = certify_prepared(prepare_board(kept, design, targets), design)
        loco.append(loco_row(cluster, full, certified_set(again.pairs)))
    loco_frame = pd.DataFrame(
        loco,
        columns=[
            "cluster_left_out",
            "n_certified_full",
            "n_certified",
            "jaccard",
            "n_lost",
            "n_gained",
            "n_winner_flips",
        ],
    )
    return calibration, loco_frame
