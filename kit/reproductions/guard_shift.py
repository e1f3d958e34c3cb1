"""A worked example of the catch guarantee failing under shift and being restored (issue 13).

Everything comes from the registry's human-labelled NLI / claim-verification files (``nli/``,
read by :func:`kit.guard.training.train_data.read_nli`), held-out splits only (dev / test: never used to
train the kit's cross-encoder, whose recipe trains on the ``train`` splits), scored by the
verifier the declaration names (``needs: [verifier_nli]``, the kit-trained cross-encoder by
default). Unsupported = label neutral or contradiction; the negative type is that label
(contradiction = contradicted by the passage, neutral = not enough information).

1. **Calibrated on another source.** tau = the split-conformal threshold (seed 001, Section 3 /
   Appendix S5; :func:`kit.guard.conformal.rule.conformal_tau`, alpha = 0.1) on the unsupported pairs
   of a random sample of a general-domain source (SNLI test), pooled and per type (Mondrian,
   :func:`kit.guard.conformal.rule.mondrian_tau`). It is used to audit every held-out pair of a
   biomedical target (Check-COVID dev + test, SciFact dev): achieved catch of unsupported pairs
   with a Wilson 95% CI (:func:`kit.stats.wilson.wilson_ci`), the false-flag rate on supported
   pairs with its CI, the review budget, and the shift check (:func:`kit.guard.conformal.shift.
   ks_shift_check`: whole labelled calibration sample vs the audited scores).
2. **Recalibrated on the target.** A random labelled sample of ``n_lab`` target pairs (fixed seed)
   is the calibration sample; the *other* target pairs are audited (disjoint by construction),
   pooled and -- where the target's negatives have two types -- Mondrian.
3. **Repeated splits.** Step 2 over ``splits`` random lab samples (vectorised: one sort of a
   splits x pairs score matrix per rule and negative type): mean catch (the marginal coverage the guarantee
   promises), its spread, the share of splits below target, the mean false-flag rate and how
   often the shift check fires. The source-calibrated tau audited on the same held-out parts is
   the contrast row.

Caveats, stated in the tables: the verifier saw the *train* splits of these sets, so the target
is less foreign to it than a lab's own citations would be; SciFact has no NEI pairs; the SNLI
source is a random sample of its test split, not all of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core.errors import check_param
from kit.core.schema import validate_frame
from kit.guard.conformal import rule as conformal
from kit.guard.conformal.shift import ks_shift_check
from kit.guard.training.train_data import read_nli
from kit.stats.wilson import wilson_ci

ALPHA = 0.1
SOURCE = "snli"
TARGETS = ("check_covid", "scifact")
N_SOURCE = 1000  # random held-out source pairs (all three labels) scored for step 1
N_LAB = 100  # the target's labelled calibration sample
SPLITS = 200
SEED = 0
SHIFT_LEVEL = 0.05
SHA_PREFIX = 12
SUPPORTED = "entailment"
NEGATIVE_TYPES = ("contradiction", "neutral")
HELD_OUT = ("dev", "test")

DESCRIBE = {
    "snli": "SNLI 1.0 test (crowd-worker labels, majority of 5; general domain, image captions)",
    "sick": "SICK trial + test (crowd-sourced labels; general domain, image/video captions)",
    "check_covid": "Check-COVID dev + test (expert human labels, Wang et al. 2023; COVID-19 news "
    "claims vs CORD-19 abstract sentences)",
    "scifact": "SciFact dev (expert human labels, Wadden et al. 2020; rationale sentences; "
    "SUPPORT / CONTRADICT only, no NEI)",
    "covidfact": "COVID-Fact dev + test (REFUTED claims generated automatically, then "
    "crowd-validated)",
    "climate_fever": "Climate-FEVER held-out claims (human labels per evidence sentence)",
}
LABELS_NOTE = (
    "human labels of the public sets named (no construction-labelled PubMedQA pairs); held-out "
    "dev/test splits only (the kit's cross-encoder trains on the train splits of these sets)"
)


@dataclass(frozen=True)
class Scored:
    """One set of held-out pairs with its verifier scores (a frame: pair_id, label, score)."""

    name: str
    frame: pd.DataFrame
    description: str


def held_out(raw: Path, name: str, n: int | None, rng: np.random.Generator) -> pd.DataFrame:
    """The dev / test pairs of one registry NLI file, sorted by pair_id; a random ``n`` of them
    (without replacement, order kept) when ``n`` is smaller than the set."""
    frame = read_nli(raw, name)
    frame = frame[frame["split"].isin(HELD_OUT)].sort_values("pair_id", kind="stable")
    frame = frame.reset_index(drop=True)
    if n is not None and n < len(frame):
        frame = frame.iloc[np.sort(rng.choice(len(frame), n, replace=False))]
    return frame.reset_index(drop=True)


def lab_sample(n_pairs: int, n_lab: int, rng: np.random.Generator) -> np.ndarray:
    """Boolean mask of a simple random sample of ``n_lab`` of ``n_pairs`` (the lab's labels)."""
    check_param("n_lab", n_lab, 1 <= n_lab < n_pairs, f"in [1, {n_pairs - 1}]", "lab_sample")
    mask = np.zeros(n_pairs, dtype=bool)
    mask[rng.choice(n_pairs, n_lab, replace=False)] = True
    return mask


# --- single calibration -> audit ---------------------------------------------------------------


def _rate(k: int, n: int) -> tuple[float, float, float]:
    p = wilson_ci(int(k), int(n))
    return p.estimate, p.lo, p.hi


def _thresholds(
    cal_scores: np.ndarray, cal_labels: np.ndarray, alpha: float, rule: str
) -> tuple[float, dict[str, conformal.Threshold], conformal.Threshold]:
    """(deployed tau, per-type thresholds (Mondrian only), pooled threshold)."""
    unsup = cal_labels != SUPPORTED
    pooled = conformal.conformal_tau(cal_scores[unsup], alpha)
    if rule == "pooled":
        return pooled.tau, {}, pooled
    m = conformal.mondrian_tau(cal_scores[unsup], cal_labels[unsup], alpha)
    return m.tau, dict(m.per_type), pooled


def audit_rows(
    cal: pd.DataFrame,
    audited: pd.DataFrame,
    rule: str,
    alpha: float,
    shift_level: float = SHIFT_LEVEL,
) -> list[dict[str, Any]]:
    """Calibrate on ``cal`` (pair_id, label, score) and audit ``audited``: one row for all
    unsupported pairs and one per negative type present in ``audited``.

    The deployed tau is the pooled conformal tau (``rule`` pooled) or the Mondrian max over types
    (``rule`` mondrian); every row flags with it (s <= tau). catch = caught / n_unsupported of the
    row's type; false_flag_rate = flagged supported / supported; review_budget = flagged / all
    audited. The shift check compares the whole calibration sample with the audited scores.
    """
    cs, cl = cal["score"].to_numpy(float), cal["label"].to_numpy(object)
    a_s, a_l = audited["score"].to_numpy(float), audited["label"].to_numpy(object)
    tau, per_type, pooled = _thresholds(cs, cl, alpha, rule)
    flagged = conformal.flag(a_s, tau)
    sup = a_l == SUPPORTED
    shift = ks_shift_check(cs[cl != SUPPORTED], cs[cl == SUPPORTED], a_s, level=shift_level)
    n_sup, ff = int(sup.sum()), int((flagged & sup).sum())
    if n_sup:
        ff_rate, ff_lo, ff_hi = _rate(ff, n_sup)
    else:  # undefined, said so in the note
        ff_rate = ff_lo = ff_hi = float("nan")
    common = {
        "rule": rule,
        "alpha": float(alpha),
        "target_catch": 1.0 - float(alpha),
        "tau": float(tau),
        "n_supported": n_sup,
        "false_flagged": ff,
        "false_flag_rate": ff_rate,
        "false_flag_lo": ff_lo,
        "false_flag_hi": ff_hi,
        "n_audited": int(a_s.size),
        "review_budget": float(flagged.mean()),
        "shift_warning": ("fires" if shift.warning else "quiet")
        if shift.testable
        else "not_testable",
        "shift_ks_d": shift.statistic,
        "shift_p": shift.p_value,
        "cal_mean_score": shift.cal_mean,
        "audit_mean_score": shift.audit_mean,
    }
    present = [t for t in NEGATIVE_TYPES if bool(np.any(a_l == t))]
    rows = []
    for neg in ["all", *present]:
        member = (a_l != SUPPORTED) if neg == "all" else (a_l == neg)
        cal_member = (cl != SUPPORTED) if neg == "all" else (cl == neg)
        n_u, caught = int(member.sum()), int((flagged & member).sum())
        catch, lo, hi = _rate(caught, n_u)
        if rule == "pooled":
            k, type_tau = pooled.k, float("nan")
        elif neg in per_type:
            k, type_tau = per_type[neg].k, per_type[neg].tau
        else:  # the Mondrian "all" row, or a type the calibration sample lacks
            k, type_tau = None, float("nan")
        rows.append(
            {
                **common,
                "negative_type": neg,
                "n_cal_unsupported": int(cal_member.sum()),
                "n_cal_supported": int((cl == SUPPORTED).sum()),
                "k": k,
                "type_tau": type_tau,
                "n_unsupported": n_u,
                "caught": caught,
                "catch": catch,
                "catch_lo": lo,
                "catch_hi": hi,
                "verdict": _verdict(catch, alpha),
            }
        )
    return rows


# --- repeated random lab samples (vectorised) --------------------------------------------------


def _ranks(n: np.ndarray, alpha: float) -> np.ndarray:
    """conformal_rank(n, alpha) elementwise (0 where n == 0)."""
    k = np.zeros(n.shape, dtype=int)
    for v in np.unique(n):
        if v >= 1:
            k[n == v] = conformal.conformal_rank(int(v), alpha)
    return k


def split_taus(
    scores: np.ndarray, in_cal: np.ndarray, member: np.ndarray, alpha: float
) -> np.ndarray:
    """Per split (row of ``in_cal``), the conformal tau of the calibration scores that are
    ``member`` (s_(k) of that split's n members); NaN where k > n (refused)."""
    take = in_cal & member[None, :]
    srt = np.sort(np.where(take, scores[None, :], np.inf), axis=1)
    n = take.sum(axis=1)
    k = _ranks(n, alpha)
    tau = np.full(n.shape, np.nan)
    ok = np.flatnonzero((k >= 1) & (k <= n))
    tau[ok] = srt[ok, k[ok] - 1]
    return tau


def split_rates(
    scores: np.ndarray, tau: np.ndarray, test: np.ndarray, member: np.ndarray
) -> np.ndarray:
    """Per split, the share of ``test & member`` pairs with s <= tau (NaN for a refused tau or
    no such pair)."""
    m = test & member[None, :]
    n = m.sum(axis=1)
    hit = ((scores[None, :] <= tau[:, None]) & m).sum(axis=1)
    out = np.full(tau.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(tau) & (n > 0))
    out[ok] = hit[ok] / n[ok]
    return out


def repeated_splits(
    frame: pd.DataFrame,
    n_lab: int,
    splits: int,
    rng: np.random.Generator,
    alpha: float,
    source_tau: float,
    shift_level: float = SHIFT_LEVEL,
    source_cal: pd.DataFrame | None = None,
) -> list[dict[str, Any]]:
    """Step 2 over ``splits`` random lab samples of ``frame`` (pair_id, label, score).

    Rules: ``source_pooled`` (the fixed tau from another source), ``pooled`` (conformal on the
    split's lab sample) and ``mondrian`` (when the target has both negative types). Each split
    audits only the pairs outside its lab sample.
    """
    check_param("splits", splits, splits >= 1, "an integer >= 1", "repeated_splits")
    s = frame["score"].to_numpy(float)
    lab = frame["label"].to_numpy(object)
    n_pairs = s.size
    check_param("n_lab", n_lab, 1 <= n_lab < n_pairs, f"in [1, {n_pairs - 1}]", "repeated_splits")
    order = np.argsort(rng.random((splits, n_pairs)), axis=1)
    in_cal = np.zeros((splits, n_pairs), dtype=bool)
    np.put_along_axis(in_cal, order[:, :n_lab], True, axis=1)
    test = ~in_cal
    unsup, sup = lab != SUPPORTED, lab == SUPPORTED
    present = [t for t in NEGATIVE_TYPES if bool(np.any(lab == t))]

    taus = {
        "source_pooled": np.full(splits, float(source_tau)),
        "pooled": split_taus(s, in_cal, unsup, alpha),
    }
    if len(present) >= 2:
        per = np.stack([split_taus(s, in_cal, lab == t, alpha) for t in present])
        taus["mondrian"] = per.max(axis=0)  # NaN when any type refused

    # shift check per split: lab sample vs the rest (source rule: source sample vs the rest)
    warn = np.zeros(splits, dtype=bool)
    warn_src = np.zeros(splits, dtype=bool)
    if source_cal is not None:
        cs, cl = source_cal["score"].to_numpy(float), source_cal["label"].to_numpy(object)
    for b in range(splits):
        c, r = in_cal[b], test[b]
        warn[b] = ks_shift_check(s[c & unsup], s[c & sup], s[r], level=shift_level).warning
        if source_cal is not None:
            warn_src[b] = ks_shift_check(
                cs[cl != SUPPORTED], cs[cl == SUPPORTED], s[r], level=shift_level
            ).warning

    rows = []
    everything = np.ones(n_pairs, dtype=bool)
    for rule, tau in taus.items():
        refused = int(np.sum(~np.isfinite(tau)))
        ff = split_rates(s, tau, test, sup)
        budget = split_rates(s, tau, test, everything)
        if rule == "source_pooled":
            fire = float(warn_src.mean()) if source_cal is not None else float("nan")
        else:
            fire = float(warn.mean())
        for neg in ["all", *present]:
            member = unsup if neg == "all" else (lab == neg)
            catch = split_rates(s, tau, test, member)
            ok = catch[np.isfinite(catch)]
            mean = float(ok.mean()) if ok.size else float("nan")
            sd = float(ok.std(ddof=1)) if ok.size > 1 else float("nan")
            rows.append(
                {
                    "rule": rule,
                    "negative_type": neg,
                    "alpha": float(alpha),
                    "target_catch": 1.0 - float(alpha),
                    "splits": int(splits),
                    "splits_refused": refused,
                    "n_lab": int(n_lab),
                    "n_audited": int(n_pairs - n_lab),
                    "mean_tau": float(np.nanmean(tau)) if refused < splits else float("nan"),
                    "mean_catch": mean,
                    "catch_sd": sd,
                    "catch_se": sd / np.sqrt(ok.size) if ok.size > 1 else float("nan"),
                    "frac_splits_below_target": float(np.mean(ok < 1.0 - alpha))
                    if ok.size
                    else float("nan"),
                    "mean_false_flag_rate": float(np.nanmean(ff)) if refused < splits else np.nan,
                    "mean_review_budget": float(np.nanmean(budget)) if refused < splits else np.nan,
                    "shift_warning_rate": fire,
                    "verdict": _verdict(mean, alpha),
                }
            )
    return rows


def _verdict(catch: float, alpha: float) -> str:
    return conformal.catch_verdict(catch, 1.0 - alpha)


# --- the tables ---------------------------------------------------------------------------------


def shift_example_tables(
    source: Scored,
    targets: list[Scored],
    verifier: dict[str, str],
    alpha: float = ALPHA,
    n_lab: int = N_LAB,
    splits: int = SPLITS,
    seed: int = SEED,
    shift_level: float = SHIFT_LEVEL,
) -> dict[str, pd.DataFrame]:
    """Both tables from already-scored pairs (frames with pair_id, label, score)."""
    src = source.frame
    src_desc = (
        f"{source.name}: random {len(src)} held-out pairs of {source.description} (seed {seed})"
    )
    single: list[dict[str, Any]] = []
    repeated: list[dict[str, Any]] = []
    name = {
        "verifier": verifier["name"],
        "verifier_onnx_sha256": verifier["onnx_sha256"][:SHA_PREFIX],
    }
    for ti, tgt in enumerate(targets):
        frame = tgt.frame.reset_index(drop=True)
        types = {t for t in NEGATIVE_TYPES if bool(np.any(frame["label"] == t))}
        rules = ["pooled", "mondrian"] if len(types) >= 2 else ["pooled"]
        labels = f"{LABELS_NOTE}; target: {tgt.description}; source: {source.description}"
        # 1. calibrated on the source, auditing every held-out target pair
        for rule in ("pooled", "mondrian"):
            for row in audit_rows(src, frame, rule, alpha, shift_level):
                single.append(
                    {
                        "step": "1_source_calibrated",
                        "target": tgt.name,
                        **row,
                        "calibrated_on": src_desc,
                        "audited_on": f"all {len(frame)} held-out {tgt.name} pairs",
                        "guarantee": _guarantee(row, alpha, src_desc),
                        **name,
                        "labels": labels,
                    }
                )
        # 2. calibrated on a random lab sample of the target, auditing the rest
        mask = lab_sample(len(frame), n_lab, np.random.default_rng([seed, 1, ti]))
        cal, rest = frame[mask], frame[~mask]
        lab_desc = f"{tgt.name}: random {n_lab} of its {len(frame)} held-out pairs (seed {seed})"
        for rule in rules:
            for row in audit_rows(cal, rest, rule, alpha, shift_level):
                single.append(
                    {
                        "step": "2_target_calibrated",
                        "target": tgt.name,
                        **row,
                        "calibrated_on": lab_desc,
                        "audited_on": f"the other {len(rest)} held-out {tgt.name} pairs "
                        "(disjoint from the calibration sample)",
                        "guarantee": _guarantee(row, alpha, lab_desc),
                        **name,
                        "labels": labels,
                    }
                )
        # 3. step 2 over many random lab samples
        src_tau = conformal.conformal_tau(
            src.loc[src["label"] != SUPPORTED, "score"].to_numpy(float), alpha
        ).tau
        for row in repeated_splits(
            frame,
            n_lab,
            splits,
            np.random.default_rng([seed, 2, ti]),
            alpha,
            src_tau,
            shift_level,
            source_cal=src,
        ):
            cal_on = (
                src_desc
                if row["rule"] == "source_pooled"
                else (f"{tgt.name}: a random {n_lab} of its {len(frame)} held-out pairs, per split")
            )
            repeated.append(
                {
                    "target": tgt.name,
                    **row,
                    "calibrated_on": cal_on,
                    "audited_on": f"the other {len(frame) - n_lab} held-out {tgt.name} pairs "
                    "of each split",
                    **name,
                    "labels": labels,
                }
            )
    note = (
        "flag s <= tau; catch = caught / n_unsupported (Wilson 95% CI); false_flag_rate = "
        "flagged supported / supported; review_budget = flagged / audited; shift check = KS "
        "test of the whole calibration sample's scores vs the audited scores "
        f"(kit.guard.shift, level {shift_level:g}); Mondrian tau = max over negative types"
    )
    t1 = pd.DataFrame(single)
    t1["note"] = note
    t2 = pd.DataFrame(repeated)
    t2["note"] = (
        f"{splits} random lab samples (seed {seed}); each split audits only the pairs outside its "
        "sample; mean_catch is the marginal coverage the guarantee promises (>= target under "
        "exchangeability); source_pooled = the source-calibrated tau on the same held-out parts"
    )
    return {
        "guard_shift_example": validate_frame(t1[_COLUMNS_SINGLE], "guard_shift_example"),
        "guard_shift_example_splits": validate_frame(
            t2[_COLUMNS_SPLITS], "guard_shift_example_splits"
        ),
    }


def _guarantee(row: dict[str, Any], alpha: float, cal_desc: str) -> str:
    pct = f"{100 * (1 - alpha):.4g}%"
    if row["rule"] == "mondrian" and row["negative_type"] != "all":
        t = row["negative_type"]
        return f"catch >= {pct} of {t} citations exchangeable with the {t} pairs of {cal_desc}"
    return f"catch >= {pct} of unsupported citations exchangeable with {cal_desc}"


_COLUMNS_SINGLE = [
    "step",
    "target",
    "rule",
    "negative_type",
    "alpha",
    "target_catch",
    "n_cal_unsupported",
    "n_cal_supported",
    "k",
    "type_tau",
    "tau",
    "n_unsupported",
    "caught",
    "catch",
    "catch_lo",
    "catch_hi",
    "verdict",
    "n_supported",
    "false_flagged",
    "false_flag_rate",
    "false_flag_lo",
    "false_flag_hi",
    "n_audited",
    "review_budget",
    "shift_warning",
    "shift_ks_d",
    "shift_p",
    "cal_mean_score",
    "audit_mean_score",
    "calibrated_on",
    "audited_on",
    "guarantee",
    "verifier",
    "verifier_onnx_sha256",
    "labels",
    "note",
]
_COLUMNS_SPLITS = [
    "target",
    "rule",
    "negative_type",
    "alpha",
    "target_catch",
    "splits",
    "splits_refused",
    "n_lab",
    "n_audited",
    "mean_tau",
    "mean_catch",
    "catch_sd",
    "catch_se",
    "frac_splits_below_target",
    "verdict",
    "mean_false_flag_rate",
    "mean_review_budget",
    "shift_warning_rate",
    "calibrated_on",
    "audited_on",
    "verifier",
    "verifier_onnx_sha256",
    "labels",
    "note",
]


def score_frame(verifier: Any, frame: pd.DataFrame) -> pd.DataFrame:
    """(pair_id, label, score) of ``frame`` scored by ``verifier``."""
    out = frame[["pair_id", "label"]].copy()
    out["score"] = np.asarray(
        verifier.score(frame["claim"].tolist(), frame["passage"].tolist()), dtype=float
    )
    return out.reset_index(drop=True)


def guard_shift_example(
    raw: Path,
    verifier_nli_dir: Path,
    source: str = SOURCE,
    targets: tuple[str, ...] = TARGETS,
    n_source: int = N_SOURCE,
    n_lab: int = N_LAB,
    splits: int = SPLITS,
    seed: int = SEED,
    alpha: float = ALPHA,
    max_target: int | None = None,
) -> dict[str, pd.DataFrame]:
    """Calibrate on a general-domain source, audit biomedical targets (catch collapses, shift
    check fires), recalibrate on a lab sample of each target (catch restored, check quiet).

    ``verifier_nli_dir``: the card folder of the verifier (``kit reproduce run --verifier-nli``).
    ``max_target`` caps each target at a random subset (tests only; None = all held-out pairs).
    """
    from kit.guard.verifiers.load import load_verifier

    v = load_verifier(Path(verifier_nli_dir))
    src = held_out(raw, source, n_source, np.random.default_rng([seed, 0]))
    scored_src = Scored(source, score_frame(v, src), DESCRIBE.get(source, source))
    scored = [
        Scored(
            t,
            score_frame(v, held_out(raw, t, max_target, np.random.default_rng([seed, 3, i]))),
            DESCRIBE.get(t, t),
        )
        for i, t in enumerate(targets)
    ]
    return shift_example_tables(
        scored_src,
        scored,
        {"name": v.card.name, "onnx_sha256": v.card.onnx_sha256},
        alpha=alpha,
        n_lab=n_lab,
        splits=splits,
        seed=seed,
    )
