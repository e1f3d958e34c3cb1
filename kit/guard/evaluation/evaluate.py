"""Verifier validation on a labelled pair table, and a verifier panel's agreement (pure).

Seed 001 (arXiv 2607.20527), Section 5.1 / Table 2 and Appendix S1: a verifier is validated
against gold before it is trusted -- AUC (supported vs unsupported, and per kind of negative),
recall on the supported class (the safety axis), specificity (the unsupported pairs caught),
and Cohen's kappa between the verifier's decision and gold. Section 5.4 / Appendix S2 Table S3:
a panel of verifiers is compared by positive- and negative-specific agreement, Cohen's kappa
with a bootstrap CI and Gwet's AC1 (formulas in :mod:`kit.stats.agreement`).
docs/architecture.md, "Citation guard", "Validation before trust" and "Pair tables".

Conventions (the same as the conformal guard):

* score s in [0, 1], higher = more support; a pair is *flagged* when s <= tau and *passed*
  (decided supported) when s > tau;
* the positive class is ``entailment`` (gold support); ``neutral`` and ``contradiction`` are the
  two kinds of *unsupported* pair. Gold labels of any common vocabulary are mapped onto these
  three by :data:`LABEL_TABLE` (:func:`canonical_label`).

Confidence intervals (level 0.95 by default): with a cluster id per pair (``groups``, e.g. the
answer a citation came from, or the PubMedQA item whose conclusion is the claim) every CI is a
cluster percentile bootstrap over clusters (:func:`kit.stats.bootstrap.cluster_bootstrap_ci`;
assumption: clusters independent). Without one, pairs are taken as independent: AUC gets the
DeLong interval (:func:`kit.stats.roc.roc_auc`), rates the Wilson interval, kappa and the
specific agreements a percentile bootstrap over pairs (2000 resamples in the seed).

Deviation from the seed: the seed reports recall/specificity at each verifier's native operating
point; here tau is an explicit parameter (the CLI default 0.5 is the "more likely than not"
point of a cross-encoder's P(entailment); a conformal tau from ``kit guard tau`` is the
deployment choice).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

import numpy as np

from kit.core.errors import ConfigError, check_param
from kit.stats.agreement import cohens_kappa, gwet_ac1, specific_agreement
from kit.stats.bootstrap import bootstrap_ci, cluster_bootstrap_ci
from kit.stats.roc import auc_score, roc_auc
from kit.stats.wilson import wilson_ci

CLASSES = ("entailment", "neutral", "contradiction")
POSITIVE = "entailment"

#: Gold label -> canonical class. Keys are compared after :func:`label_key` (lower case, spaces
#: and hyphens as underscores), so ``SUPPORT``, ``Supports``, ``NOT ENOUGH INFO`` and
#: ``not-enough-info`` all match. ``unsupported`` (a binary table that does not say why, e.g.
#: the PubMedQA construction pairs) counts as ``neutral``: not supported, not shown
#: contradicted; map it otherwise with ``--label-map unsupported=contradiction``.
LABEL_TABLE: dict[str, str] = {
    # entailment = the passage supports the claim (the positive class)
    "entailment": "entailment",
    "entailed": "entailment",
    "entails": "entailment",
    "support": "entailment",
    "supports": "entailment",
    "supported": "entailment",
    "attributable": "entailment",
    # neutral = not enough information in the passage
    "neutral": "neutral",
    "nei": "neutral",
    "not_enough_info": "neutral",
    "not_enough_information": "neutral",
    "noinfo": "neutral",
    "unsupported": "neutral",
    # contradiction = the passage refutes the claim
    "contradiction": "contradiction",
    "contradict": "contradiction",
    "contradicts": "contradiction",
    "contradicted": "contradiction",
    "contradictory": "contradiction",
    "refute": "contradiction",
    "refutes": "contradiction",
    "refuted": "contradiction",
}


def label_key(value: object) -> str:
    """The comparison key of a label: stripped, lower case, runs of space/hyphen as '_'."""
    return re.sub(r"[\s\-]+", "_", str(value).strip().lower())


def canonical_label(value: object, extra: Mapping[str, str] | None = None) -> str | None:
    """The class (:data:`CLASSES`) of one gold label, or None when it is not known.

    ``extra`` (source -> destination) is consulted first; its destinations may be any key of
    :data:`LABEL_TABLE`. Both sides are compared through :func:`label_key`.

    >>> canonical_label("NOT_ENOUGH_INFO"), canonical_label("REFUTES"), canonical_label("x")
    ('neutral', 'contradiction', None)
    """
    key = label_key(value)
    if extra:
        for src, dst in extra.items():
            if label_key(src) == key:
                return LABEL_TABLE.get(label_key(dst))
    return LABEL_TABLE.get(key)


def check_label_map(extra: Mapping[str, str]) -> dict[str, str]:
    """``extra`` with every destination checked to name a class (ConfigError otherwise)."""
    bad = [f"{s}={d}" for s, d in extra.items() if label_key(d) not in LABEL_TABLE]
    if bad:
        raise ConfigError(
            "bad_parameter",
            f"--label-map destinations must be one of {', '.join(CLASSES)} (or a known alias "
            f"such as SUPPORT, NEI, CONTRADICT); got {', '.join(bad)}",
        )
    return dict(extra)


@dataclass(frozen=True)
class Estimate:
    """One row of the evaluation table (schemas/guard_pair_evaluation.yaml)."""

    metric: str  # auc | recall | specificity | kappa | flag_rate
    subset: str
    n_pos: int
    n_neg: int
    estimate: float
    lo: float
    hi: float
    ci_method: str
    tau: float
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _ci(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., float],
    groups: np.ndarray | None,
    rng: np.random.Generator,
    n_boot: int,
    level: float,
) -> tuple[float, float, str, str]:
    """(lo, hi, method, note) of a bootstrap CI; NaN and a note when it is undefined."""
    try:
        if groups is None:
            ci = bootstrap_ci(data, statistic, rng, n_boot, level)
            method = "bootstrap"
        else:
            ci = cluster_bootstrap_ci(data, groups, statistic, rng, n_boot, level)
            method = "cluster-bootstrap"
    except ConfigError:
        return (
            float("nan"),
            float("nan"),
            "none",
            "CI undefined: the statistic is undefined on every resample",
        )
    note = f"{ci.n_undefined} of {n_boot} resamples undefined" if ci.n_undefined else ""
    return ci.lo, ci.hi, method, note


def _rate(
    hit: np.ndarray,
    groups: np.ndarray | None,
    rng: np.random.Generator,
    n_boot: int,
    level: float,
) -> tuple[float, float, float, str]:
    """(estimate, lo, hi, method) of the mean of a boolean array; Wilson or cluster bootstrap."""
    if groups is None:
        p = wilson_ci(int(hit.sum()), int(hit.size), level)
        return p.estimate, p.lo, p.hi, "wilson"
    lo, hi, _, _ = _ci((hit.astype(float),), np.mean, groups, rng, n_boot, level)
    return float(hit.mean()), lo, hi, "cluster-bootstrap"


def _auc_row(
    s: np.ndarray,
    pos: np.ndarray,
    groups: np.ndarray | None,
    subset: str,
    rng: np.random.Generator,
    n_boot: int,
    level: float,
) -> Estimate:
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    nan = float("nan")
    if n_pos == 0 or n_neg == 0:
        note = f"undefined: {n_pos} entailment and {n_neg} negative pairs"
        return Estimate("auc", subset, n_pos, n_neg, nan, nan, nan, "none", nan, note)
    if groups is None:
        r = roc_auc(s, pos, level)
        return Estimate("auc", subset, n_pos, n_neg, r.auc, r.lo, r.hi, "delong", nan)
    lo, hi, method, note = _ci((s, pos), auc_score, groups, rng, n_boot, level)
    return Estimate("auc", subset, n_pos, n_neg, auc_score(s, pos), lo, hi, method, nan, note)


def auc_estimate(s: np.ndarray, pos: np.ndarray, subset: str, level: float = 0.95) -> Estimate:
    """AUC of ``s`` for ``pos`` vs the rest with its DeLong interval, pairs independent (the
    path every AUC of the guard's evaluation takes; ``kit guard score``'s quick lines too)."""
    return _auc_row(s, pos, None, subset, np.random.default_rng(0), 0, level)


def negative_subsets(
    classes: np.ndarray, negative_types: np.ndarray | None, func: str
) -> list[tuple[str, np.ndarray]]:
    """The negatives an AUC row is computed against, as (name, mask): all unsupported pairs,
    each negative class present, and each ``negative_types`` value among the unsupported pairs
    ('type=T'). Shared by :func:`evaluate_scores` and :func:`kit.guard.evaluation.compare.compare_scores`."""
    c = np.asarray(classes, dtype=object)
    pos = c == POSITIVE
    subsets: list[tuple[str, np.ndarray]] = [("unsupported", ~pos)]
    subsets += [(k, c == k) for k in CLASSES[1:] if np.any(c == k)]
    if negative_types is not None:
        t = np.asarray(negative_types, dtype=object).astype(str)
        check_param("negative_types", t.size, t.size == c.size, "aligned with scores", func)
        subsets += [(f"type={k}", ~pos & (t == k)) for k in sorted(set(t[~pos]))]
    return subsets


def evaluate_scores(
    scores: np.ndarray,
    classes: Sequence[str] | np.ndarray,
    tau: float,
    rng: np.random.Generator,
    groups: np.ndarray | None = None,
    negative_types: np.ndarray | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
) -> list[Estimate]:
    """Validation statistics of one verifier's scores against gold classes (seed 001 Table 2).

    Parameters
    ----------
    scores : (n,) float, higher = more support.
    classes : (n,) canonical classes, each one of :data:`CLASSES`.
    tau : flag threshold; a pair is flagged when score <= tau.
    groups : (n,) optional cluster ids; all CIs become cluster bootstraps over them.
    negative_types : (n,) optional finer type of each pair (e.g. PubMedQA ``pair_type``); adds
        one AUC row per type present among the unsupported pairs ('entailment vs type=T').

    Rows: ``auc`` entailment vs unsupported (all non-entailment), vs neutral, vs contradiction
    (each class present), vs each negative type; ``recall`` on entailment (P(s > tau)),
    ``specificity`` on the same negative subsets (P(s <= tau), the catch rate); ``kappa`` between
    gold (entailment or not) and the decision s > tau; ``flag_rate`` over all pairs.
    """
    s = np.asarray(scores, dtype=float)
    c = np.asarray(classes, dtype=object)
    func = "evaluate_scores"
    check_param("classes", c.size, c.size == s.size and s.size >= 1, "aligned with scores", func)
    unknown = sorted({str(x) for x in c} - set(CLASSES))
    check_param("classes", unknown, not unknown, f"values in {CLASSES}", func)
    check_param("tau", tau, bool(np.isfinite(tau)), "a finite number", func)
    if groups is not None:
        groups = np.asarray(groups)
        check_param("groups", groups.size, groups.size == s.size, "aligned with scores", func)
    pos = c == POSITIVE
    passed = s > tau
    nan = float("nan")
    rows: list[Estimate] = []
    subsets = negative_subsets(c, negative_types, func)
    for name, neg in subsets:
        keep = pos | neg
        g = groups[keep] if groups is not None else None
        rows.append(_auc_row(s[keep], pos[keep], g, f"entailment vs {name}", rng, n_boot, level))
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos:
        g = groups[pos] if groups is not None else None
        est, lo, hi, method = _rate(passed[pos], g, rng, n_boot, level)
        rows.append(Estimate("recall", "entailment", n_pos, 0, est, lo, hi, method, tau))
    else:
        rows.append(
            Estimate("recall", "entailment", 0, 0, nan, nan, nan, "none", tau, "undefined: 0 pairs")
        )
    for name, neg in subsets:
        k = int(neg.sum())
        if k == 0:
            rows.append(
                Estimate(
                    "specificity", name, 0, 0, nan, nan, nan, "none", tau, "undefined: 0 pairs"
                )
            )
            continue
        g = groups[neg] if groups is not None else None
        est, lo, hi, method = _rate(~passed[neg], g, rng, n_boot, level)
        rows.append(Estimate("specificity", name, 0, k, est, lo, hi, method, tau))
    kappa = cohens_kappa(pos, passed)
    if np.isnan(kappa):
        rows.append(
            Estimate(
                "kappa",
                "entailment vs unsupported",
                n_pos,
                n_neg,
                nan,
                nan,
                nan,
                "none",
                tau,
                "undefined: gold and decision constant and identical",
            )
        )
    else:
        lo, hi, method, note = _ci((pos, passed), cohens_kappa, groups, rng, n_boot, level)
        rows.append(
            Estimate(
                "kappa", "entailment vs unsupported", n_pos, n_neg, kappa, lo, hi, method, tau, note
            )
        )
    est, lo, hi, method = _rate(~passed, groups, rng, n_boot, level)
    rows.append(Estimate("flag_rate", "all", n_pos, n_neg, est, lo, hi, method, tau))
    return rows


def flag_rate(
    scores: np.ndarray,
    tau: float,
    rng: np.random.Generator,
    groups: np.ndarray | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
) -> Estimate:
    """The flag rate P(s <= tau) over all pairs (no labels needed): the review budget."""
    s = np.asarray(scores, dtype=float)
    check_param("scores", s.size, s.size >= 1, "non-empty", "flag_rate")
    est, lo, hi, method = _rate(s <= tau, groups, rng, n_boot, level)
    return Estimate("flag_rate", "all", 0, 0, est, lo, hi, method, tau)


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of two verifiers' decisions (one row of schemas/guard_pair_agreement.yaml)."""

    verifier_a: str
    verifier_b: str
    n: int
    flag_rate_a: float
    flag_rate_b: float
    observed: float
    positive_specific: float  # agreement on what is supported
    negative_specific: float  # agreement on what to flag
    negative_specific_lo: float
    negative_specific_hi: float
    kappa: float
    kappa_lo: float
    kappa_hi: float
    ac1: float
    ci_method: str
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _nsa(x: np.ndarray, y: np.ndarray) -> float:
    return specific_agreement(x, y)[1]


def panel_agreement(
    names: Sequence[str],
    passed: np.ndarray,
    rng: np.random.Generator,
    groups: np.ndarray | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
) -> list[PairAgreement]:
    """Pairwise agreement of a verifier panel's decisions (seed 001 Appendix S2, Table S3).

    ``passed`` is (V, n) boolean: verifier v decides pair i supported (s > tau_v). For each pair
    of verifiers (in the given order): observed agreement, positive-specific agreement (on
    supported), negative-specific agreement (on flagged) with a bootstrap CI, Cohen's kappa
    with a bootstrap CI, and Gwet's AC1. CIs are percentile bootstraps over pairs, or over
    ``groups`` when given. Undefined statistics are NaN with a note, never 0.
    """
    p = np.asarray(passed).astype(bool)
    func = "panel_agreement"
    check_param("passed", p.shape, p.ndim == 2 and p.shape[0] == len(names), "(V, n)", func)
    check_param("names", len(names), len(names) >= 2, "at least two verifiers", func)
    check_param("passed", p.shape, p.shape[1] >= 1, "at least one pair", func)
    if groups is not None:
        groups = np.asarray(groups)
        check_param("groups", groups.size, groups.size == p.shape[1], "aligned with pairs", func)
    out = []
    for i, j in combinations(range(len(names)), 2):
        x, y = p[i], p[j]
        psa, nsa = specific_agreement(x, y)
        kappa = cohens_kappa(x, y)
        notes = []
        nan = float("nan")
        if np.isnan(nsa):
            nsa_lo = nsa_hi = nan
            method_n = "none"
            notes.append("negative-specific undefined: neither verifier flags anything")
        else:
            nsa_lo, nsa_hi, method_n, note = _ci((x, y), _nsa, groups, rng, n_boot, level)
            if note:
                notes.append(f"negative-specific CI: {note}")
        if np.isnan(kappa):
            k_lo = k_hi = nan
            method_k = "none"
            notes.append("kappa undefined: both verifiers constant and identical")
        else:
            k_lo, k_hi, method_k, note = _ci((x, y), cohens_kappa, groups, rng, n_boot, level)
            if note:
                notes.append(f"kappa CI: {note}")
        method = method_k if method_k != "none" else method_n
        out.append(
            PairAgreement(
                verifier_a=str(names[i]),
                verifier_b=str(names[j]),
                n=int(x.size),
                flag_rate_a=float(np.mean(~x)),
                flag_rate_b=float(np.mean(~y)),
                observed=float(np.mean(x == y)),
                positive_specific=float(psa),
                negative_specific=float(nsa),
                negative_specific_lo=float(nsa_lo),
                negative_specific_hi=float(nsa_hi),
                kappa=float(kappa),
                kappa_lo=float(k_lo),
                kappa_hi=float(k_hi),
                ac1=float(gwet_ac1(x, y)),
                ci_method=method,
                note="; ".join(notes),
            )
        )
    return out
