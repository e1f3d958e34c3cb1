"""Stage: conformal flags -- the calibration set, tau and its guarantee, and the flag rule (pure
apart from the injected scorer).

The split-conformal rule of :mod:`kit.guard.conformal.rule`: a scored citation whose support score
is ``<= tau`` is flagged. tau comes from unsupported-class calibration scores of the *same*
verifier; the kit's default calibration set is construction-labelled (an item's conclusion
against the abstract of its on-topic MeSH neighbour -- :mod:`kit.grade.pubmedqa_corpus`),
drawn from corpus items the audited runs neither answer nor cite. The same held-out pairs
measure the instrument's L2 error rates (:class:`InstrumentCounts`, for Rogan-Gladen).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from kit.core.errors import ConfigError
from kit.grade.citation_audit import L2_SCORED, SupportRule
from kit.guard.verifiers.support import SupportScorer

DEFAULT_CALIBRATION = "pubmedqa-neighbours"
FLAG_REASONS = ("notfound", "no_passage", "score_at_or_below_tau", "refused")


def flag_citations(audited: pd.DataFrame, tau: float) -> pd.DataFrame:
    """Add ``flagged`` and ``flag_reason``: notfound (fabricated identifier), no_passage (found
    but no text to verify against, or unchecked and the agent read only records without a
    passage -- ``evidence == "no_passage"``), score_at_or_below_tau (the conformal rule, s <=
    tau, on every scored citation: found, or unchecked and scored against what the agent
    read), refused (l2 ``refused``: the verifier's endpoint refused the question, so there is no
    score to compare with tau -- it goes to review, never passes)."""
    out = audited.copy()
    s = out["support_score"].to_numpy(dtype=float)
    found = (out["l1"] == "found").to_numpy()
    scoreable = out["l1"].isin(L2_SCORED).to_numpy()
    reason = np.full(len(out), "", dtype=object)
    refused = (
        (out["l2"] == "refused").to_numpy() if "l2" in out.columns else np.zeros(len(out), bool)
    )
    reason[(out["l1"] == "notfound").to_numpy()] = "notfound"
    reason[found & np.isnan(s) & ~refused] = "no_passage"
    if "evidence" in out.columns:
        reason[(out["evidence"] == "no_passage").to_numpy() & np.isnan(s)] = "no_passage"
    reason[refused] = "refused"
    with np.errstate(invalid="ignore"):
        reason[scoreable & ~np.isnan(s) & (s <= tau)] = "score_at_or_below_tau"
    out["flag_reason"] = reason
    out["flagged"] = reason != ""
    return out


@dataclass(frozen=True)
class InstrumentCounts:
    """L2 'no' counts of the instrument on construction-labelled held-out pairs."""

    sens_k: int  # 'no' on wrong-paper pairs
    sens_n: int
    fpr_k: int  # 'no' on right-paper pairs
    fpr_n: int

    @classmethod
    def from_scores(
        cls, right: np.ndarray, wrong: np.ndarray, rule: SupportRule
    ) -> InstrumentCounts:
        return cls(
            int(sum(rule.label(float(x)) == "no" for x in wrong)),
            len(wrong),
            int(sum(rule.label(float(x)) == "no" for x in right)),
            len(right),
        )


def instrument_items(
    pool: Sequence[str], exclude: set[str], n_cal: int, rng: np.random.Generator
) -> tuple[str, ...]:
    """Up to ``n_cal`` held-out corpus items (not answered or cited by the runs), drawn by ``rng``,
    returned sorted numerically."""
    cands = sorted((p for p in pool if p not in exclude), key=lambda p: (len(p), p))
    if not cands:
        return ()
    k = min(n_cal, len(cands))
    idx = sorted(rng.choice(len(cands), size=k, replace=False).tolist())
    return tuple(cands[i] for i in idx)


@dataclass(frozen=True)
class Calibration:
    """The calibration set tau is read from, how it was made, and the instrument's error counts."""

    cal_set: Any  # kit.guard.conformal.calibration.CalibrationSet
    meta: dict[str, Any]
    same_verifier: bool
    instrument: InstrumentCounts | None


def calibrate(
    corpus: Any,
    runs: Sequence[Any],
    scorer: SupportScorer,
    rule: SupportRule,
    given: Any | None,
    same_verifier: bool | None,
    n_cal: int,
    seed: int,
) -> Calibration:
    """Score ``n_cal`` held-out right / wrong pairs (the instrument) and, without a ``given``
    calibration set, make them the default construction-labelled calibration."""
    from kit.grade.pubmedqa_corpus import claim_text
    from kit.guard.conformal.calibration import CalibrationSet, scores_sha256

    texts: Mapping[str, str] = corpus.abstract
    used = {r.task_id.removeprefix("pubmedqa-") for r in runs}
    used |= {c.value for r in runs for c in r.cited}
    items = instrument_items(corpus.pool, used, n_cal, np.random.default_rng(seed))
    claims = [claim_text(corpus, p) for p in items]
    right = np.asarray(scorer.score(claims, [texts.get(p, "") for p in items]), dtype=float)
    wrong = np.asarray(
        scorer.score(claims, [texts.get(corpus.neighbour[p], "") for p in items]), dtype=float
    )
    ok = np.isfinite(right) & np.isfinite(wrong)  # an LLM endpoint may refuse a question
    refused = int((~ok).sum())
    if refused:
        items = [p for p, keep in zip(items, ok, strict=True) if keep]
        right, wrong = right[ok], wrong[ok]
    left_out = (
        f"; {refused} held-out item(s) left out: the verifier's endpoint refused them (no "
        "score, never a number)"
        if refused
        else ""
    )
    instrument = InstrumentCounts.from_scores(right, wrong, rule) if items else None
    if given is not None:
        artifact = given.kind == "artifact"
        meta = {
            "source": given.source,
            "sha256": given.sha256,
            "construction": (
                f"the labelled sample {given.display_name} (sha256 {given.source_sha256}) "
                "scored by this verifier (kit guard calibrate; seal checked)"
                if artifact
                else "unsupported-class scores read from the calibration source"
            ),
            "same_verifier": bool(same_verifier),
        }
        return Calibration(given, meta, bool(same_verifier), instrument)
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
    meta = {
        "source": DEFAULT_CALIBRATION,
        "sha256": scores_sha256(wrong),
        "construction": (
            "each held-out PubMedQA item's conclusion vs the abstract of its on-topic MeSH "
            "neighbour (wrong paper, construction-labelled), scored by this verifier; items "
            f"the runs answer or cite excluded; seed {seed}{left_out}"
        ),
        "same_verifier": True,
    }
    return Calibration(cal_set, meta, True, instrument)


@dataclass(frozen=True)
class Flags:
    """The flagged citation table, the threshold (``t``: tau, k, n_cal, ...) and the guarantee."""

    frame: pd.DataFrame
    alpha: float
    t: Any  # kit.guard.conformal.calibration guard_rule result
    promise: dict[str, Any]


def conformal_flags(audited: pd.DataFrame, cal: Calibration, alpha: float, level: float) -> Flags:
    """tau at miss tolerance ``alpha`` from the calibration set; flag ``audited`` by it."""
    from kit.guard.conformal.calibration import guarantee, guard_rule

    t = guard_rule(cal.cal_set, alpha)
    scores = audited["support_score"].to_numpy(dtype=float)
    promise = guarantee(cal.cal_set, t, scores, cal.same_verifier, level=level)
    return Flags(flag_citations(audited, t.tau), alpha, t, promise)
