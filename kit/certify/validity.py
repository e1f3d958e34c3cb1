"""The validity report of one board: can ITS certificates be trusted at their nominal level?

``kit certify --validate N`` draws N null and N alternative SYNTHETIC boards shaped like the
user's board and runs each through the same verdicts as ``kit certify``
(:func:`kit.certify.engine.pair_verdicts`: the design's inference, family and admissibility):

* shape kept from the board: the systems, the tasks and their K clusters (so the cluster
  sizes), the metadata (so every admission and eps_outside), and the failure pattern (a run
  that failed or is missing on the board is failed on every synthetic board, so the task sets
  and the composite's common set are the board's);
* variance components estimated from the board, per readout on the [0, 1] human-band scale
  (:func:`board_shape`), fed to the score model of :mod:`kit.certify.simulate`
  (:func:`kit.certify.simulate.simulate_scores`);
* null boards: every system equal in truth; alternative boards: the system effects estimated
  from the board, so the true gaps are the observed ones.

Reported (:func:`validity_report`): the family-wise false-certification rate (share of null
boards with at least one certified (pair, readout) row; Wilson 95% interval) against alpha,
the power at the observed gaps (mean share of the admissible rows with a nonzero true gap
certified with the right winner) and the share of alternative boards certifying a wrong
winner, overall and per readout, and the estimated components. Pure and deterministic: board i
is drawn from ``np.random.default_rng([seed, i, 0 | 1])``, so the boards can run in any grouping
and on any engine (``--engine ray``: groups of boards as Ray tasks) with the same table.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kit.certify.composite import composite
from kit.certify.design import Design
from kit.certify.engine import Board, pair_verdicts, prepare_board, rescored
from kit.certify.inference_study import mean_interval, rate_interval
from kit.certify.simulate import simulate_scores
from kit.core.errors import check_param
from kit.core.parallel import SerialMap, split

ALL = "all"
BACKFIT_ITERATIONS = 50


@dataclass(frozen=True)
class BoardShape:
    """Per readout (R,): the score model's parameters estimated from a board (method of
    moments on the additive model score = base + effect_s + task_t + u_s,g + e_s,t)."""

    base: np.ndarray  # (R,) grand mean
    effects: np.ndarray  # (R, S) system effects, centred (0 where a system has no score)
    task_sd: np.ndarray  # (R,)
    cluster_sd: np.ndarray  # (R,) system-by-cluster sd
    noise_sd: np.ndarray  # (R,) task noise sd


def _two_way(y: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Additive fit y[s, t] = mu + a_s + b_t on the finite cells (backfitting), a centred."""
    ok = np.isfinite(y)
    mu = float(y[ok].mean())
    a = np.zeros(y.shape[0])
    b = np.zeros(y.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        for _ in range(BACKFIT_ITERATIONS):
            b = np.nan_to_num(np.nanmean(np.where(ok, y - mu - a[:, None], np.nan), axis=0))
            a = np.nan_to_num(np.nanmean(np.where(ok, y - mu - b[None, :], np.nan), axis=1))
            shift = a[ok.any(axis=1)].mean()
            a, mu = a - shift, mu + shift
    return mu, a, b


def board_shape(board: Board) -> BoardShape:
    """Estimate :class:`BoardShape` from the readout layers of ``board`` (not the composite).

    After the additive fit, residuals r_s,t = (u_s,g - mean_s u) + (e_s,t - mean_s e): within a
    (system, cluster) cell they vary by the noise only, so the pooled within-cell variance
    times S/(S-1) estimates sigma_e^2; a cell mean has variance ~ (S-1)/S (K-1)/K
    (sigma_u^2 + sigma_e^2 / n_g), solved for sigma_u^2 (floored at 0). The task sd is the sd
    of the task effects less their noise share. Approximate (the system effects also absorb a
    little), which is all a simulation shaped like the board needs.
    """
    y_all = board.cube[:-1]
    n_r, n_s, _ = y_all.shape
    k = len(board.clusters)
    fs = n_s / (n_s - 1) if n_s > 1 else 1.0
    fk = k / (k - 1) if k > 1 else 1.0
    base, task_sd, cluster_sd, noise_sd = (np.zeros(n_r) for _ in range(4))
    effects = np.zeros((n_r, n_s))
    for r in range(n_r):
        y = y_all[r]
        ok = np.isfinite(y)
        if not ok.any():
            continue
        mu, a, b = _two_way(y)
        resid = np.where(ok, y - mu - a[:, None] - b[None, :], 0.0)
        onehot = np.eye(k)[board.codes]  # (T, K)
        n_cell = ok.astype(float) @ onehot  # (S, K)
        sums = resid @ onehot
        with np.errstate(invalid="ignore", divide="ignore"):
            cell_mean = np.where(n_cell > 0, sums / n_cell, 0.0)
        within = float(((resid - cell_mean[:, board.codes]) ** 2)[ok].sum())
        df_w = float(np.maximum(n_cell - 1, 0).sum())
        sig_e2 = within / df_w * fs if df_w > 0 else 0.0
        cells = n_cell > 0
        sig_u2 = max(
            0.0,
            float((cell_mean[cells] ** 2).mean()) * fs * fk
            - sig_e2 * float((1.0 / n_cell[cells]).mean()),
        )
        has_task = ok.any(axis=0)
        var_b = float(b[has_task].var()) if has_task.sum() > 1 else 0.0
        base[r] = mu
        effects[r] = a
        noise_sd[r] = math.sqrt(sig_e2)
        cluster_sd[r] = math.sqrt(sig_u2)
        task_sd[r] = math.sqrt(max(0.0, var_b - (sig_e2 + sig_u2) / n_s))
    return BoardShape(base, effects, task_sd, cluster_sd, noise_sd)


def _synthetic(
    board: Board,
    design: Design,
    shape: BoardShape,
    effects: np.ndarray,
    rng: np.random.Generator,
) -> Board:
    """One SYNTHETIC board: the model's scores where the board has a score, NaN elsewhere."""
    n_r = len(board.readouts) - 1
    scores = simulate_scores(
        rng,
        effects.T,
        board.codes,
        len(board.clusters),
        n_r,
        shape.base,
        shape.task_sd,
        shape.cluster_sd,
        shape.noise_sd,
    ).transpose(2, 0, 1)
    return rescored(board, np.where(np.isfinite(board.cube[:-1]), scores, np.nan), design)


def _draw_boards(
    board: Board,
    design: Design,
    shape: BoardShape,
    seed: int,
    true_gap: np.ndarray,
    different: np.ndarray,
    eligible: np.ndarray,
    layer: np.ndarray,
    boards: range,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Null and alternative boards ``boards`` (indices into 0..N-1, board i seeded by
    ``[seed, i, 0 | 1]``): (null_any, null_layer, wrong_any, power) rows for those boards."""
    n_r = len(board.readouts)
    n = len(boards)
    null_any = np.zeros(n, dtype=bool)
    null_layer = np.zeros((n, n_r), dtype=bool)
    wrong_any = np.zeros(n, dtype=bool)
    power = np.full((n, n_r + 1), np.nan)  # last column: all rows
    zero = np.zeros_like(shape.effects)
    for row, i in enumerate(boards):
        for is_null, effects in ((True, zero), (False, shape.effects)):
            rng = np.random.default_rng([seed, i, int(is_null)])
            v = pair_verdicts(_synthetic(board, design, shape, effects, rng), design)
            cert = v.verdict == "certified"
            if is_null:
                null_any[row] = cert.any()
                null_layer[row] = np.bincount(layer[cert], minlength=n_r) > 0
                continue
            right = cert & different & (np.sign(v.ct.gap) == np.sign(true_gap))
            wrong_any[row] = (cert & ~right).any()
            for j in range(n_r + 1):
                sel = eligible if j == n_r else eligible & (layer == j)
                if sel.any():
                    power[row, j] = right[sel].sum() / sel.sum()
    return null_any, null_layer, wrong_any, power


def validity_report(
    board: Board, design: Design, n_boards: int, seed: int, mapper: Any = None
) -> pd.DataFrame:
    """The validity table (``schemas/certify_validity.yaml``) of ``board`` under ``design``.

    Columns: quantity, readout (``all`` or one readout), value, lo, hi, n_boards, detail.
    ``mapper`` (:class:`kit.core.parallel.SerialMap` when None, or a Ray one) runs the boards in
    contiguous groups; board i has its own seed, so every mapper gives the same table.
    """
    check_param("n_boards", n_boards, n_boards >= 1, "an integer >= 1", "validity_report")
    shape = board_shape(board)
    observed = pair_verdicts(board, design)
    fam = observed.fam
    n_r, n_p = len(board.readouts), len(fam.pairs)
    # true system effects per layer: the readouts' and the composite of them (axes are means)
    comp_eff, _ = composite(shape.effects[:, :, None], list(board.readouts[:-1]), design.axes)
    true_eff = np.vstack([shape.effects, comp_eff[:, 0][None, :]])  # (R + 1, S)
    ia, ib = np.maximum(fam.ia, 0), np.maximum(fam.ib, 0)
    absent = (fam.ia < 0) | (fam.ib < 0)
    true_gap = np.where(absent[None, :], 0.0, true_eff[:, ia] - true_eff[:, ib]).ravel()
    different = np.abs(true_gap) > 1e-12
    eligible = observed.admissible & different  # rows that could be certified rightly
    layer = np.repeat(np.arange(n_r), n_p)

    draw = functools.partial(
        _draw_boards, board, design, shape, seed, true_gap, different, eligible, layer
    )
    run = mapper or SerialMap()
    parts = run.map(draw, split(n_boards, run.parts))
    null_any = np.concatenate([p[0] for p in parts])
    null_layer = np.concatenate([p[1] for p in parts])
    wrong_any = np.concatenate([p[2] for p in parts])
    power = np.concatenate([p[3] for p in parts])

    sizes = np.bincount(board.codes, minlength=len(board.clusters))
    shaped = (
        f"SYNTHETIC boards shaped like the input: {len(board.systems)} systems, "
        f"{len(board.clusters)} clusters of sizes {'/'.join(str(int(x)) for x in sizes)}, its "
        "failure pattern and estimated variance components"
    )
    how = (
        f"family {design.multiplicity} m = {observed.m}, inference {design.inference}, "
        f"alpha {design.alpha}, seed {seed}"
    )

    def row(q: str, r: str, est: tuple[float, float, float], detail: str) -> dict[str, object]:
        return {
            "quantity": q,
            "readout": r,
            "value": est[0],
            "lo": est[1],
            "hi": est[2],
            "n_boards": n_boards,
            "detail": detail,
        }

    nan = math.nan
    rows = [
        row("alpha", ALL, (design.alpha, nan, nan), "target: fwer_false_certification <= alpha"),
        row(
            "fwer_false_certification",
            ALL,
            rate_interval(int(null_any.sum()), n_boards),
            f"{shaped}, every system equal in truth: share with at least one certified "
            f"(pair, readout) row [Wilson 95%]; {how}",
        ),
        row(
            "power_at_observed_gaps",
            ALL,
            mean_interval(power[:, n_r]),
            f"{shaped}, true gaps = the observed ones: mean share of the admissible rows with "
            f"a nonzero true gap certified with the right winner [normal 95%]; {how}",
        ),
        row(
            "wrong_winner_alternative",
            ALL,
            rate_interval(int(wrong_any.sum()), n_boards),
            f"{shaped}, true gaps = the observed ones: share certifying a wrong winner",
        ),
    ]
    for j, name in enumerate(board.readouts):
        rows.append(
            row(
                "fwer_false_certification",
                name,
                rate_interval(int(null_layer[:, j].sum()), n_boards),
                "null boards with a certified pair of this readout",
            )
        )
        rows.append(
            row(
                "power_at_observed_gaps",
                name,
                mean_interval(power[:, j]),
                "empty: no admissible pair of this readout with a nonzero true gap"
                if not (eligible & (layer == j)).any()
                else "share of this readout's true differences certified rightly",
            )
        )
    for j, name in enumerate(board.readouts[:-1]):
        for q, arr, what in (
            ("noise_sd", shape.noise_sd, "task noise sd"),
            ("cluster_sd", shape.cluster_sd, "system-by-cluster sd"),
        ):
            rows.append(
                row(q, name, (float(arr[j]), nan, nan), f"estimated {what} (method of moments)")
            )
    return pd.DataFrame(rows)


def validate_board(
    frame: pd.DataFrame,
    design: Design,
    n_boards: int,
    seed: int,
    targets: pd.DataFrame | None = None,
    source: str = "",
    targets_source: str = "",
    mapper: Any = None,
) -> pd.DataFrame:
    """:func:`validity_report` of a validated score table (laid out by ``prepare_board``)."""
    board = prepare_board(frame, design, targets, source, targets_source)
    return validity_report(board, design, n_boards, seed, mapper)


def validity_sentence(validity: pd.DataFrame) -> str:
    """The report in one plain sentence (CLI and board page say the same)."""
    rows = validity.set_index(["quantity", "readout"])
    fwer = rows.loc[("fwer_false_certification", ALL)]
    power = rows.loc[("power_at_observed_gaps", ALL)]
    alpha = float(rows.loc[("alpha", ALL), "value"])
    n = int(fwer["n_boards"])

    def pct(x: object) -> str:
        f = float(x)  # type: ignore[arg-type]
        return "undefined" if math.isnan(f) else f"{100 * f:.1f}%"

    text = (
        f"On {n} SYNTHETIC boards shaped like yours with no true differences, "
        f"{pct(fwer['value'])} [{pct(fwer['lo'])}, {pct(fwer['hi'])}] certified at least one "
        f"false claim; the target is at most {pct(alpha)} (alpha)."
    )
    if float(fwer["lo"]) > alpha:
        text += " The certificates of this board do NOT hold at their nominal level."
    if math.isfinite(float(power["value"])):
        text += (
            f" On {n} SYNTHETIC boards whose true gaps equal your observed gaps, "
            f"{pct(power['value'])} [{pct(power['lo'])}, {pct(power['hi'])}] of the true "
            "differences were certified with the right winner."
        )
    return text
