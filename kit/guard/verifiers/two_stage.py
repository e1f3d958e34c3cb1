"""Two-stage verification: the bi-encoder picks the windows, the cross-encoder judges them.

Issue 19, item 7. A cross-encoder costs one forward pass per (claim, window); a long passage has
many windows. :class:`TwoStageVerifier` scores every window of each passage against the claim
with the bi-encoder (cheap: each distinct text is embedded once), keeps the ``top_k`` windows
of each pair, and sends only those to the cross-encoder: s = max over the kept windows of the
cross-encoder's score. With ``top_k`` at least the number of windows (or ``None``) it is the
full cross-encoder, exactly (the same pairs, batched the same way).

What it costs in separation is measured, not assumed: :func:`auc_cost` computes the AUC of the
full cross-encoder and of the two-stage mode on the same labelled pairs (held-out data).

Assumption: both verifiers read the same windows -- the cross-encoder's window rule
(``cross.window``) is used for both stages.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kit.core.errors import ConfigError, check_param
from kit.guard.scoring.windows import passage_windows
from kit.guard.verifiers.card import ModelCard
from kit.guard.verifiers.session import best_window
from kit.stats.roc import AUC, roc_auc


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class TwoStageVerifier:
    """``TwoStageVerifier(bi, cross, top_k=2)``: a verifier (``.card``, ``.score``,
    ``.score_classes``) that cross-encodes only the bi-encoder's ``top_k`` windows per pair.

    Ties in the bi-encoder score keep the earlier window (stable, deterministic). After each
    call, ``last_stats`` holds ``pairs``, ``windows`` (all windows of all pairs) and ``judged``
    (the (claim, window) pairs sent to the cross-encoder).
    """

    def __init__(self, bi: Any, cross: Any, top_k: int | None = 2) -> None:
        check_param(
            "top_k",
            top_k,
            top_k is None or (isinstance(top_k, int | np.integer) and top_k >= 1),
            "an integer >= 1 or None (all windows)",
            "TwoStageVerifier",
        )
        for name, obj, need in (
            ("bi", bi, "_pair_scores"),
            ("cross", cross, "_pair_probs"),
        ):
            if not hasattr(obj, need):
                raise ConfigError(
                    "bad_parameter",
                    f"TwoStageVerifier: {name} must be an ONNX "
                    f"{'bi' if name == 'bi' else 'cross'}-encoder verifier "
                    f"(got {type(obj).__name__})",
                )
        self.bi = bi
        self.cross = cross
        self.top_k = None if top_k is None else int(top_k)
        self.window = cross.window
        self.labels = list(cross.labels)
        self.scoring = cross.scoring
        self.last_stats: dict[str, int] = {"pairs": 0, "windows": 0, "judged": 0}
        k = "all" if self.top_k is None else str(self.top_k)
        stage = (
            f"two-stage: the bi-encoder {bi.card.name!r} (onnx sha256 "
            f"{bi.card.onnx_sha256[:12]}) scores every window against the claim and keeps the "
            f"top {k} per pair (ties: earlier window); only those are cross-encoded"
        )
        cc = cross.card
        self.card: ModelCard = dataclasses.replace(
            cc,
            name=f"{cc.name} + two-stage top-{k} ({bi.card.name})",
            scoring_rule=f"{cc.scoring_rule}; {stage}; s = max over the kept windows",
            window_rule=f"{cc.window_rule}; {stage}",
            extra={
                **cc.extra,
                "two_stage": {
                    "top_k": self.top_k,
                    "bi_encoder": bi.card.name,
                    "bi_onnx_sha256": bi.card.onnx_sha256,
                },
            },
        )

    def kept_windows(self, claims: Sequence[str], passages: Sequence[str]) -> list[list[str]]:
        """For each pair, the windows the cross-encoder will judge (in passage order)."""
        if len(claims) != len(passages):
            raise ConfigError("bad_parameter", "claims and passages must have the same length")
        cache: dict[str, list[str]] = {}
        wins: list[list[str]] = []
        for p in passages:
            key = _key(p)
            if key not in cache:
                cache[key] = passage_windows(p, self.window)
            wins.append(cache[key])
        # bi-encode only the pairs that have more windows than the cross-encoder may judge
        flat_c: list[str] = []
        flat_w: list[str] = []
        owner: list[int] = []
        for i, (c, ws) in enumerate(zip(claims, wins, strict=True)):
            if self.top_k is not None and len(ws) > self.top_k:
                flat_c.extend([c] * len(ws))
                flat_w.extend(ws)
                owner.extend([i] * len(ws))
        kept = [list(ws) for ws in wins]
        if flat_c:
            sims = np.asarray(self.bi._pair_scores(flat_c, flat_w), dtype=float)
            owner_a = np.asarray(owner)
            for i in np.unique(owner_a):
                s = sims[owner_a == i]
                order = np.argsort(-s, kind="stable")[: self.top_k]
                kept[int(i)] = [wins[int(i)][j] for j in sorted(order.tolist())]
        self.last_stats = {
            "pairs": len(claims),
            "windows": sum(len(w) for w in wins),
            "judged": sum(len(w) for w in kept),
        }
        return kept

    def score_classes(
        self, claims: Sequence[str], passages: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(s [n], class probabilities [n, C] of the best kept window); an empty passage has
        s = 0 and probabilities NaN (as :meth:`OnnxCrossEncoder.score_classes`)."""
        kept = self.kept_windows(claims, passages)
        flat_c: list[str] = []
        flat_w: list[str] = []
        owner: list[int] = []
        for i, (c, ws) in enumerate(zip(claims, kept, strict=True)):
            flat_c.extend([c] * len(ws))
            flat_w.extend(ws)
            owner.extend([i] * len(ws))
        if not flat_c:
            return np.zeros(len(claims)), np.full((len(claims), len(self.labels)), np.nan)
        probs = self.cross._pair_probs(flat_c, flat_w)[:, : len(self.labels)]
        scores = self.cross.rule_scores(flat_c, flat_w, probs)
        return best_window(scores, probs, owner, len(claims))

    def score(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        """One score per pair: max over the kept windows of the cross-encoder's score."""
        return self.score_classes(claims, passages)[0]


@dataclass(frozen=True)
class AucCost:
    """The separation two-stage mode gives up, on one labelled pair table."""

    top_k: int | None
    full: AUC
    two_stage: AUC
    delta: float  # two_stage.auc - full.auc (negative = cost)
    windows: int  # windows the full cross-encoder judges
    judged: int  # windows the two-stage mode judges


def auc_cost(
    bi: Any,
    cross: Any,
    claims: Sequence[str],
    passages: Sequence[str],
    positive: Sequence[bool] | np.ndarray,
    top_k: int | None = 2,
) -> AucCost:
    """AUC of the full cross-encoder and of the two-stage mode on the same labelled pairs.

    ``positive`` marks the supported pairs (the caller maps its labels, e.g. SUPPORT /
    entailment -> True). AUC with DeLong CIs (:func:`kit.stats.roc.roc_auc`; assumes
    independent pairs). Run it on held-out data never used to train either verifier.
    """
    y = np.asarray(positive).astype(bool)
    check_param("positive", y.size, y.size == len(claims), f"one flag per pair ({len(claims)})")
    full = cross.score(claims, passages)
    ts = TwoStageVerifier(bi, cross, top_k)
    two = ts.score(claims, passages)
    a_full = roc_auc(full, y)
    a_two = roc_auc(two, y)
    return AucCost(
        top_k=ts.top_k,
        full=a_full,
        two_stage=a_two,
        delta=a_two.auc - a_full.auc,
        windows=ts.last_stats["windows"],
        judged=ts.last_stats["judged"],
    )
