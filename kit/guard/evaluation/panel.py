"""A verifier panel on one pair table, and the quick AUC lines of a scored table (library verbs).

``kit guard panel`` and ``kit guard score`` are thin shells over these (step 5 of
docs/architecture.md): :func:`panel` loads each member by its card, scores the pairs, flags
(score <= tau), evaluates each member and measures the members' agreement
(:func:`kit.guard.evaluation.evaluate.panel_agreement`, seed 001 Table S3);
:func:`auc_lines` reads a scored table's AUC through the evaluation's one AUC path
(:func:`kit.guard.evaluation.evaluate.auc_estimate`). docs/architecture.md, "Citation guard",
"Validation before trust".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kit.core.errors import ConfigError, InputError
from kit.guard.evaluation.evaluate import (
    PairAgreement,
    auc_estimate,
    evaluate_scores,
    flag_rate,
    panel_agreement,
)
from kit.guard.scoring.pairtable import group_values, normalise_labels, parse_label_map


@dataclass(frozen=True)
class PanelResult:
    """What :func:`panel` measured: the tables the command writes and what it prints."""

    names: tuple[str, ...]  # one short, column-safe name per member
    agreement: pd.DataFrame  # one row per pair of members (guard_pair_agreement)
    verifiers: pd.DataFrame  # evaluation rows per member (guard_pair_evaluation)
    scores: pd.DataFrame  # pair_id (label, group), score_<name>, flag_<name>
    agree: tuple[PairAgreement, ...]
    n_pairs: int
    ci: str  # how the CIs were computed


def panel_names(specs: Sequence[str]) -> list[str]:
    """Short, unique, column-safe names: a built-in name or the card folder's name."""
    names: list[str] = []
    for spec in specs:
        base = re.sub(r"[^0-9A-Za-z_.\-]+", "_", Path(spec).name or spec) or "verifier"
        name, k = base, 2
        while name in names:
            name, k = f"{base}_{k}", k + 1
        names.append(name)
    return names


def panel_taus(verifiers: Sequence[str], taus: Sequence[float]) -> list[float]:
    """One tau per member: the one given for all, or one per member (ConfigError otherwise)."""
    if len(verifiers) < 2:
        raise ConfigError("bad_parameter", "a panel needs two or more --verifier")
    if len(taus) not in {1, len(verifiers)}:
        raise ConfigError(
            "bad_parameter",
            f"give one --tau for all verifiers or one per --verifier; got {len(taus)} for "
            f"{len(verifiers)}",
        )
    return list(taus) * len(verifiers) if len(taus) == 1 else list(taus)


def panel(
    frame: pd.DataFrame,
    verifiers: Sequence[str],
    taus: Sequence[float],
    load: Callable[[str], object],
    *,
    label_map: str | None = None,
    group_column: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    say: Callable[[str], None] = lambda line: None,
) -> PanelResult:
    """Score ``frame`` (a pair table) with each member (``load(spec)`` -> a verifier) and measure.

    ``say`` gets one line per member as it is loaded and scored, and the pairs left out (some
    member gave no score); the statistics are over the pairs every member scored.
    """
    tau_list = panel_taus(verifiers, taus)
    extra = parse_label_map(label_map)
    classes = (
        normalise_labels(frame["label"], extra).to_numpy(dtype=object)
        if "label" in frame.columns
        else None
    )
    groups, gcol = group_values(frame, group_column)
    names = panel_names(verifiers)
    rng = np.random.default_rng(seed)
    keep = ["pair_id", *[c for c in ("label", "group") if c in frame.columns]]
    scores_table = frame[keep].reset_index(drop=True).copy()
    passed, per_verifier, scored = [], [], []
    for name, spec, tau in zip(names, verifiers, tau_list, strict=True):
        v = load(spec)
        s = np.asarray(v.score(frame["claim"].tolist(), frame["passage"].tolist()), dtype=float)
        scores_table[f"score_{name}"] = s
        scores_table[f"flag_{name}"] = ~(s > tau)  # no score (refused): flagged, to review
        scored.append(s)
        card = v.card
        say(f"  {name}: {card.name} ({card.kind}, sha256 {card.identity_sha256[:12]}), tau={tau:g}")
    # a pair any member gave no score (its endpoint refused) is compared by no one
    ok = np.isfinite(np.vstack(scored)).all(axis=0)
    if not ok.all():
        say(
            f"  left out {int((~ok).sum())} pair(s) some member gave no score (refused by its "
            "endpoint): every statistic is over the pairs all members scored"
        )
        if not ok.any():
            raise InputError("no_scores", "no pair was scored by every panel member")
    g_ok = None if groups is None else groups[ok]
    for name, s, tau in zip(names, scored, tau_list, strict=True):
        passed.append(s[ok] > tau)
        if classes is not None:
            rows = evaluate_scores(s[ok], classes[ok], tau, rng, groups=g_ok, n_boot=n_boot)
        else:
            rows = [flag_rate(s[ok], tau, rng, groups=g_ok, n_boot=n_boot)]
        per_verifier += [{"verifier": name, **r.to_dict()} for r in rows]
    agree = panel_agreement(names, np.vstack(passed), rng, groups=g_ok, n_boot=n_boot)
    return PanelResult(
        names=tuple(names),
        agreement=pd.DataFrame([a.to_dict() for a in agree]),
        verifiers=pd.DataFrame(per_verifier),
        scores=scores_table,
        agree=tuple(agree),
        n_pairs=len(frame),
        ci=f"cluster bootstrap over {gcol}" if groups is not None else "bootstrap over pairs",
    )


def agreement_line(a: PairAgreement) -> str:
    """One pair of members, as ``kit guard panel`` prints it."""
    return (
        f"  {a.verifier_a} vs {a.verifier_b}: positive-specific {a.positive_specific:.3f}, "
        f"negative-specific {a.negative_specific:.3f} [{a.negative_specific_lo:.3f}, "
        f"{a.negative_specific_hi:.3f}], kappa {a.kappa:.3f} [{a.kappa_lo:.3f}, "
        f"{a.kappa_hi:.3f}], AC1 {a.ac1:.3f}"
    )


def auc_lines(frame: pd.DataFrame) -> list[str]:
    """Quick AUC lines of a scored table (DeLong CIs; the full report: ``kit guard evaluate``).

    A PubMedQA construction table (``pair_type``): positive vs each type; otherwise the labels
    mapped onto entailment / neutral / contradiction: entailment vs unsupported and vs each.
    """
    if "label" not in frame.columns or frame["label"].isna().any():
        return []
    s = frame["score"].to_numpy(dtype=float)
    if "pair_type" in frame.columns:  # PubMedQA construction pairs: positive vs each type
        pos = (frame["pair_type"] == "positive").to_numpy()
        negs = {
            f"positive vs {t}": (frame["pair_type"] == t).to_numpy()
            for t in sorted(set(frame["pair_type"]) - {"positive"})
        }
    else:
        try:
            cls = normalise_labels(frame["label"]).to_numpy(dtype=object)
        except InputError:
            return ["labels not recognised; map them with `kit guard evaluate --label-map`"]
        pos = cls == "entailment"
        negs = {"entailment vs unsupported": ~pos}
        negs |= {f"entailment vs {k}": cls == k for k in ("neutral", "contradiction")}
    lines = []
    for name, neg in negs.items():
        if pos.any() and neg.any():
            keep = pos | neg
            r = auc_estimate(s[keep], pos[keep], name)
            lines.append(f"AUC {name}: {r.estimate:.3f} [{r.lo:.3f}, {r.hi:.3f}] (n={r.n_neg})")
    return lines
