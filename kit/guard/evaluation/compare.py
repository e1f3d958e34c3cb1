"""Two verifiers' scores on the same labelled pairs, compared paired (pure).

Is the adapted verifier better than the default, the default better than the bi-encoder? Two
AUCs with overlapping CIs do not answer it: both verifiers scored the same pairs, so their
errors are correlated, and the question is about the *difference*. Per subset (entailment vs
unsupported, vs each negative class present, vs each negative type), one row: AUC_A, AUC_B,
AUC_A - AUC_B with a CI and a two-sided p-value.

* Pairs independent: the paired DeLong test (:func:`kit.stats.roc.paired_auc_difference`).
* Clustered pairs (``groups``, e.g. one claim against several passages): a cluster percentile
  bootstrap of the difference, both verifiers resampled together
  (:func:`kit.stats.bootstrap.cluster_bootstrap_ci`); its p-value is the normal approximation
  2 (1 - Phi(|diff| / sd of the resampled differences)).

Rows follow ``schemas/guard_pair_comparison.yaml``. A subset without positives or negatives is a
row with NaN and a note, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.stats import norm

from kit.core.errors import ConfigError, check_param
from kit.guard.evaluation.evaluate import CLASSES, POSITIVE, negative_subsets
from kit.stats.bootstrap import cluster_bootstrap_ci
from kit.stats.roc import auc_score, paired_auc_difference


@dataclass(frozen=True)
class Comparison:
    """One row of the comparison table (schemas/guard_pair_comparison.yaml)."""

    subset: str
    n_pos: int
    n_neg: int
    auc_a: float
    auc_b: float
    difference: float  # auc_a - auc_b
    lo: float
    hi: float
    p_value: float
    ci_method: str  # delong-paired | cluster-bootstrap | none
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _difference(a: np.ndarray, b: np.ndarray, y: np.ndarray) -> float:
    return auc_score(a, y) - auc_score(b, y)


def _row(
    a: np.ndarray,
    b: np.ndarray,
    pos: np.ndarray,
    groups: np.ndarray | None,
    subset: str,
    rng: np.random.Generator,
    n_boot: int,
    level: float,
) -> Comparison:
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    nan = float("nan")
    if n_pos == 0 or n_neg == 0:
        note = f"undefined: {n_pos} entailment and {n_neg} negative pairs"
        return Comparison(subset, n_pos, n_neg, nan, nan, nan, nan, nan, nan, "none", note)
    if groups is None:
        r = paired_auc_difference(a, b, pos, level)
        return Comparison(
            subset, n_pos, n_neg, r.auc_a, r.auc_b, r.diff, r.lo, r.hi, r.p_value, "delong-paired"
        )
    auc_a, auc_b = auc_score(a, pos), auc_score(b, pos)
    diff = auc_a - auc_b
    try:
        ci = cluster_bootstrap_ci((a, b, pos), groups, _difference, rng, n_boot, level)
    except ConfigError:
        note = "CI undefined: the difference is undefined on every resample"
        return Comparison(subset, n_pos, n_neg, auc_a, auc_b, diff, nan, nan, nan, "none", note)
    note = f"{ci.n_undefined} of {n_boot} resamples undefined" if ci.n_undefined else ""
    if not np.isfinite(ci.sd):
        p = nan
    elif ci.sd > 0:
        p = float(2 * norm.sf(abs(diff) / ci.sd))
    else:
        p = 1.0 if diff == 0 else 0.0
    return Comparison(
        subset, n_pos, n_neg, auc_a, auc_b, diff, ci.lo, ci.hi, p, "cluster-bootstrap", note
    )


def row_line(r: Mapping[str, Any]) -> str:
    """One comparison row (:meth:`Comparison.to_dict`, or a card's copy with null for NaN) as
    the line the commands print: its AUCs, A - B with the CI and p, or its note when the
    difference or its CI is undefined."""

    def defined(v: Any) -> bool:
        return v is not None and bool(np.isfinite(v))

    if not (defined(r["difference"]) and defined(r["lo"])):
        return f"{r['subset']}: {r['note']}"
    p = float("nan") if r["p_value"] is None else r["p_value"]
    # a card keeps p to 4 decimals: 0 there means below 0.0001, not zero
    shown = "p < 0.0001" if p < 1e-4 else f"p = {p:.3g}"
    return (
        f"{r['subset']}: AUC {r['auc_a']:.3f} vs {r['auc_b']:.3f}, A - B {r['difference']:+.3f} "
        f"[{r['lo']:+.3f}, {r['hi']:+.3f}], {shown}"
    )


def compare_scores(
    scores_a: np.ndarray,
    scores_b: np.ndarray,
    classes: Sequence[str] | np.ndarray,
    rng: np.random.Generator,
    groups: np.ndarray | None = None,
    negative_types: np.ndarray | None = None,
    n_boot: int = 2000,
    level: float = 0.95,
) -> list[Comparison]:
    """Paired comparison of verifier A and verifier B on the same pairs, one row per subset.

    Parameters
    ----------
    scores_a, scores_b : (n,) float, higher = more support, row-aligned (the same pairs).
    classes : (n,) canonical classes, each one of :data:`kit.guard.evaluation.evaluate.CLASSES`.
    groups : (n,) optional cluster ids; the CIs become cluster bootstraps over them.
    negative_types : (n,) optional finer type of each pair; one extra row per type present among
        the unsupported pairs.
    """
    a = np.asarray(scores_a, dtype=float)
    b = np.asarray(scores_b, dtype=float)
    c = np.asarray(classes, dtype=object)
    func = "compare_scores"
    check_param("scores_b", b.size, b.size == a.size and a.size >= 1, "aligned with scores_a", func)
    check_param("classes", c.size, c.size == a.size, "aligned with scores", func)
    unknown = sorted({str(x) for x in c} - set(CLASSES))
    check_param("classes", unknown, not unknown, f"values in {CLASSES}", func)
    if groups is not None:
        groups = np.asarray(groups)
        check_param("groups", groups.size, groups.size == a.size, "aligned with scores", func)
    pos = c == POSITIVE
    rows = []
    for name, neg in negative_subsets(c, negative_types, func):
        keep = pos | neg
        g = groups[keep] if groups is not None else None
        rows.append(
            _row(a[keep], b[keep], pos[keep], g, f"entailment vs {name}", rng, n_boot, level)
        )
    return rows
