"""Reproductions of the citation-guard paper (seed 001, arXiv 2607.20527) from registry data.

Each function is ``f(raw: Path) -> dict[str, pandas.DataFrame]``: it reads registry files under
``raw`` (a fetched ``data/raw``), calls the pure core in :mod:`kit.guard` / :mod:`kit.stats`,
and returns named tables with ``paper_value`` beside ``kit_value`` where the paper printed one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core import boundary
from kit.guard.conformal import rule as conformal
from kit.guard.conformal.calibration import load_calibration

QASA = "citation-guard/qasa_calibration_scores.json"
PUBLISHED_COVERAGE = {0.90: 0.90, 0.94: 0.94, 0.98: 0.98}  # published_constants.yaml
PUBLISHED_SMALL_N = {"n_cal": 25, "target": 0.90, "naive": 0.85, "conformal": 0.92}


def qasa_tau_curve(raw: Path) -> dict[str, pd.DataFrame]:
    """Recompute the published QASA tau curve and cal_recall (Section 3, Appendix S5).

    Convention that reproduces every published point exactly: tau = s_(k) of the 500
    unsupported-class scores with k = ceil((n+1)(1-alpha)) (computed with a 1e-9 guard against
    binary rounding), cal_recall = mean(s <= tau) with ties included. The published flag rates
    need the deployment citations' scores, which the release does not include: note says so.
    """
    cal = load_calibration(QASA, raw)
    pub = cal.published or {}
    alphas = [float(a) for a in pub.get("alphas", [])]
    rows = conformal.tau_curve(cal.unsupported, alphas)
    frame = pd.DataFrame(rows)
    frame["paper_tau"] = [float(v) for v in pub["tau"]]
    frame["paper_cal_recall"] = [float(v) for v in pub["cal_recall"]]
    frame["delta_tau"] = frame["tau"] - frame["paper_tau"]
    frame["delta_cal_recall"] = frame["cal_recall"] - frame["paper_cal_recall"]
    frame["note"] = (
        "k=ceil((n+1)(1-alpha)), tau=s_(k), flag s<=tau; published flag_rate needs deployment "
        "scores not in the release"
    )
    summary = pd.DataFrame(
        [
            {
                "quantity": "max_abs_delta_tau",
                "kit_value": float(frame["delta_tau"].abs().max()),
                "paper_value": 0.0,
            },
            {
                "quantity": "max_abs_delta_cal_recall",
                "kit_value": float(frame["delta_cal_recall"].abs().max()),
                "paper_value": 0.0,
            },
            {"quantity": "n_cal", "kit_value": float(cal.unsupported.size), "paper_value": 500.0},
        ]
    )
    return {"guard_qasa_tau_curve": frame, "guard_qasa_tau_summary": summary}


def coverage_table(
    scores: np.ndarray,
    targets: list[float],
    n_cals: list[int],
    splits: int,
    seed: int,
    n_test: int | None = None,
) -> pd.DataFrame:
    """Conformal vs naive held-out catch rate over repeated splits, one row per (target, n_cal).

    One Generator(seed) per row (seeded by seed, target, n_cal), so rows do not depend on which
    other rows were asked for. A row whose k > n_cal, or whose split does not fit in the pool,
    gets an explicit 'refused: ...' verdict and NaN rates; a row whose achieved conformal catch
    (mean over splits) is below its target gets 'below_target', else 'ok'. The verdict reports
    the estimate, not a test: ``conformal_catch_se`` (sd over splits / sqrt(splits)) says how
    far below is within Monte Carlo error (the rule's exact expected catch is k / (n_cal + 1)).
    """
    rows = []
    for target in sorted(targets):
        alpha = round(1.0 - target, 12)
        for n_cal in sorted(n_cals):
            nt = n_test if n_test is not None else max(0, min(200, scores.size - n_cal))
            row: dict[str, object] = {
                "target": target,
                "alpha": alpha,
                "n_cal": n_cal,
                "n_test": nt,
                "splits": splits,
                "seed": seed,
            }
            if nt < 1 or n_cal + nt > scores.size:
                row.update(
                    conformal_catch=np.nan,
                    conformal_catch_se=np.nan,
                    naive_catch=np.nan,
                    frac_splits_below_target=np.nan,
                    verdict=f"refused: n_cal + n_test > pool of {scores.size}",
                )
            elif conformal.conformal_rank(n_cal, alpha) > n_cal:
                row.update(
                    conformal_catch=np.nan,
                    conformal_catch_se=np.nan,
                    naive_catch=np.nan,
                    frac_splits_below_target=np.nan,
                    verdict="refused: k > n_cal",
                )
            else:
                rng = np.random.default_rng([seed, round(target * 1e6), n_cal])
                r = conformal.split_coverage(scores, alpha, n_cal, splits, rng, nt)
                row.update(
                    conformal_catch=r.conformal_catch,
                    conformal_catch_se=r.conformal_catch_sd / np.sqrt(splits)
                    if splits > 1
                    else np.nan,
                    naive_catch=r.naive_catch,
                    frac_splits_below_target=r.frac_splits_below_target,
                    # the achieved (mean held-out) catch, not the promise, decides the verdict
                    verdict=conformal.catch_verdict(r.conformal_catch, target),
                )
            rows.append(row)
    return pd.DataFrame(rows)


def qasa_coverage(raw: Path, splits: int = 1000, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Held-out catch at targets 0.90/0.94/0.98 over repeated random splits (Section 3).

    Split: n_cal = 300 calibration / n_test = 200 test of the 500 unsupported QASA scores (the
    paper does not print its split sizes for this figure; 200 test follows Appendix S3).
    """
    cal = load_calibration(QASA, raw)
    t = coverage_table(cal.unsupported, sorted(PUBLISHED_COVERAGE), [300], splits, seed, 200)
    t["paper_value"] = [PUBLISHED_COVERAGE[x] for x in t["target"]]
    t["note"] = "paper split sizes not printed; kit uses n_cal=300, n_test=200"
    return {"guard_qasa_coverage": t}


def qasa_small_n(raw: Path, splits: int = 1000, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Naive empirical quantile vs conformal at n_cal = 25..500 (Appendix S3, Table S4).

    B = 1000 splits, test n = 200, seed 0 as in the paper; n_cal = 500 leaves no test data
    from a 500-score pool, so that row is an explicit refusal. Naive = the order statistic
    tau = s_(floor(n_cal (1 - alpha))) (:func:`kit.guard.conformal.rule.naive_tau`; s_(22) at
    n_cal = 25, target 0.90), which reproduces the paper's 0.85.
    """
    cal = load_calibration(QASA, raw)
    t = coverage_table(
        cal.unsupported, [0.90, 0.95], [25, 50, 100, 200, 300, 500], splits, seed, 200
    )
    paper_naive = []
    paper_conf = []
    for target, n in zip(t["target"], t["n_cal"], strict=True):
        hit = target == PUBLISHED_SMALL_N["target"] and n == PUBLISHED_SMALL_N["n_cal"]
        paper_naive.append(PUBLISHED_SMALL_N["naive"] if hit else np.nan)
        paper_conf.append(PUBLISHED_SMALL_N["conformal"] if hit else np.nan)
    t["paper_naive"] = paper_naive
    t["paper_conformal"] = paper_conf
    t["note"] = "paper prints only n_cal=25 at target 0.90; n_cal=500 impossible with n_test=200"
    return {"guard_qasa_small_n": t}


# --- PubMedQA, construction-labelled (needs the default verifier) -------------------------

PUBMEDQA = "pubmedqa/ori_pqal.json"
PUBMEDQA_N = 100  # items sampled (seeded): keeps the fp32 run to about 3 minutes on 2 CPU cores
PUBMEDQA_SEED = 0
PAPER_CATCH_ON_HARD = {0.90: 0.37, 0.94: 0.44, 0.98: 0.61}  # Table S7 (SciFact negatives)
PAPER_BM25_RECALL1 = 0.69  # Table S5 (QASA, n = 1375)
PAPER_SCOPE_KAPPA = 0.02  # PubMedQA scope control, n = 843
LABEL_NOTE = "construction-labelled PubMedQA pairs (not human gold)"


def _verifier(verifier_dir: Path | None, tmp: Path, variant: str = "fp32") -> Any:
    from kit.guard.verifiers.export import build_verifier
    from kit.guard.verifiers.load import load_verifier

    if verifier_dir is None:
        verifier_dir = tmp / "verifier"
        if not (verifier_dir / "card.json").is_file():
            build_verifier(verifier_dir)
    return load_verifier(verifier_dir, variant)


def pubmedqa_scores(
    raw: Path, verifier_dir: Path | None = None, n: int = PUBMEDQA_N, seed: int = PUBMEDQA_SEED
) -> tuple[pd.DataFrame, dict[str, Any], list[Any]]:
    """Build the construction-labelled pairs and score them with the default verifier."""
    import tempfile

    from kit.guard.training.pairs import build_pairs, items_from_pqal
    from kit.registry.fetch import raw_path

    items = items_from_pqal(boundary.read_json(raw_path(PUBMEDQA, raw)))
    pairs, meta = build_pairs(items, n, np.random.default_rng(seed))
    with tempfile.TemporaryDirectory() as tmp:
        v = _verifier(verifier_dir, Path(tmp))
        pairs["score"] = v.score(pairs["claim"].tolist(), pairs["passage"].tolist())
        meta["verifier"] = v.card.name
        meta["verifier_onnx_sha256"] = v.card.onnx_sha256
    meta["seed"] = seed
    return pairs, meta, items


def _auc_table(pairs: pd.DataFrame, meta: dict[str, Any]) -> pd.DataFrame:
    from kit.guard.training.pairs import NEG_TYPES
    from kit.stats.roc import roc_auc

    pos = pairs.loc[pairs["pair_type"] == "positive", "score"].to_numpy()
    rows = []
    for t in NEG_TYPES:
        neg = pairs.loc[pairs["pair_type"] == t, "score"].to_numpy()
        r = roc_auc(np.r_[pos, neg], np.r_[np.ones(pos.size), np.zeros(neg.size)])
        rows.append(
            {
                "negative_type": t,
                "n_pos": r.n_pos,
                "n_neg": r.n_neg,
                "auc": r.auc,
                "auc_lo": r.lo,
                "auc_hi": r.hi,
                "mean_score_pos": float(pos.mean()),
                "mean_score_neg": float(neg.mean()),
                "seed": meta["seed"],
                "note": f"{LABEL_NOTE}; n_items={meta['n_items_sampled']}; DeLong 95% CI; "
                f"verifier {meta['verifier']}",
            }
        )
    return pd.DataFrame(rows)


def _transfer_table(pairs: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, dict[float, float]]:
    """tau calibrated on easy (random) negatives vs recalibrated on each hard type (Appendix S6).

    Items are split in half (seeded): taus are fitted on the calibration half and every catch
    rate and review budget (flag rate on supported pairs) is measured on the other half.
    """
    from kit.core.errors import ConfigError
    from kit.guard.training.pairs import NEG_TYPES
    from kit.stats.wilson import wilson_ci

    pmids = np.array(sorted(pairs["item_pmid"].unique()))
    rng = np.random.default_rng([seed, 6])
    cal_ids = set(rng.choice(pmids, size=pmids.size // 2, replace=False).tolist())
    is_cal = pairs["item_pmid"].isin(cal_ids).to_numpy()

    def scores(kind: str, cal: bool) -> np.ndarray:
        m = (pairs["pair_type"] == kind).to_numpy() & (is_cal if cal else ~is_cal)
        return pairs.loc[m, "score"].to_numpy()

    pos_test = scores("positive", False)
    rows = []
    easy_tau: dict[float, float] = {}
    for target in (0.90, 0.94, 0.98):
        alpha = round(1 - target, 10)
        for cal_on in ("random", "mesh", "bm25", "negated"):
            try:
                t = conformal.conformal_tau(scores(cal_on, True), alpha)
            except ConfigError:
                rows.append(
                    {
                        "target": target,
                        "calibrated_on": cal_on,
                        "tested_on": cal_on,
                        "n_cal": int(scores(cal_on, True).size),
                        "verdict": "refused: k > n_cal",
                    }
                )
                continue
            if cal_on == "random":
                easy_tau[target] = t.tau
            tested = NEG_TYPES if cal_on == "random" else (cal_on,)
            for test_on in tested:
                neg = scores(test_on, False)
                caught = int(np.sum(neg <= t.tau))
                w = wilson_ci(caught, neg.size)
                flagged_pos = int(np.sum(pos_test <= t.tau))
                b = wilson_ci(flagged_pos, pos_test.size)
                rows.append(
                    {
                        "target": target,
                        "calibrated_on": cal_on,
                        "tested_on": test_on,
                        "n_cal": t.n_cal,
                        "tau": t.tau,
                        "n_test": int(neg.size),
                        "catch": w.estimate,
                        "catch_lo": w.lo,
                        "catch_hi": w.hi,
                        "review_budget": b.estimate,
                        "review_budget_lo": b.lo,
                        "review_budget_hi": b.hi,
                        # below_target: the achieved catch misses the target (the guarantee
                        # holds for exchangeable negatives; a different type need not be)
                        "verdict": conformal.catch_verdict(w.estimate, target),
                        "paper_catch_on_hard": PAPER_CATCH_ON_HARD[target]
                        if cal_on == "random" and test_on != "random"
                        else np.nan,
                        "note": f"{LABEL_NOTE}; paper's hard set is SciFact (not comparable in "
                        "level, only in direction); review budget = flag rate on test positives",
                    }
                )
    return pd.DataFrame(rows), easy_tau


def _reattribution_table(pairs: pd.DataFrame, items: list[Any]) -> pd.DataFrame:
    from kit.guard.reattribute import recall_at_1
    from kit.stats.wilson import wilson_ci

    by_item = {it.pmid: it for it in items}
    queries, targets, pools_small = [], [], []
    for pmid, grp in pairs.groupby("item_pmid", sort=True):
        pool = {r.passage_pmid: r.passage for r in grp.itertuples() if r.pair_type != "negated"}
        queries.append(by_item[pmid].conclusion)
        targets.append(pmid)
        pools_small.append(pool)
    everything = {it.pmid: it.abstract for it in items}
    rows = []
    for name, pools in (
        ("own + random + mesh + bm25 abstracts", pools_small),
        (f"all {len(items)} PQA-L abstracts", [everything] * len(queries)),
    ):
        hits = recall_at_1(queries, targets, pools)
        w = wilson_ci(int(hits.sum()), hits.size)
        rows.append(
            {
                "candidate_pool": name,
                "n": int(hits.size),
                "mean_pool_size": float(np.mean([len(p) for p in pools])),
                "recall_at_1": w.estimate,
                "lo": w.lo,
                "hi": w.hi,
                "random_baseline": float(np.mean([1 / len(p) for p in pools])),
                "paper_value": PAPER_BM25_RECALL1,
                "note": f"{LABEL_NOTE}; query = conclusion, target = its own abstract (construction label); paper value is "
                "QASA (different data): direction only",
            }
        )
    return pd.DataFrame(rows)


def _scope_table(pairs: pd.DataFrame, easy_tau: dict[float, float], seed: int) -> pd.DataFrame:
    from kit.stats.agreement import agreement

    pos = pairs[(pairs["pair_type"] == "positive") & pairs["decision"].isin(["yes", "no"])]
    rows = []
    median = float(np.median(pos["score"]))
    thresholds = [*sorted(easy_tau.items()), (np.nan, median)]
    for target, tau in thresholds:
        verifier_ok = (pos["score"] > tau).to_numpy()
        decision_yes = (pos["decision"] == "yes").to_numpy()
        a = agreement(verifier_ok, decision_yes, np.random.default_rng([seed, 7]), 2000)
        rows.append(
            {
                "threshold": "median score" if np.isnan(target) else f"tau at target {target:.2f}",
                "target": target,
                "tau": tau,
                "n": a.n,
                "observed": a.observed,
                "kappa": a.kappa,
                "kappa_lo": a.kappa_ci.lo,
                "kappa_hi": a.kappa_ci.hi,
                "ac1": a.ac1,
                "paper_kappa": PAPER_SCOPE_KAPPA,
                "note": "verifier 'supported' (score > tau; tau from easy negatives, or the "
                "median score when target is empty) vs PubMedQA yes/no decision on positive "
                "pairs (maybe excluded): support is not the answer, so no agreement is "
                "expected; kappa is 0 when the verifier calls every pair supported",
            }
        )
    return pd.DataFrame(rows)


def pubmedqa_guard(
    raw: Path, verifier_dir: Path | None = None, n: int = PUBMEDQA_N, seed: int = PUBMEDQA_SEED
) -> dict[str, pd.DataFrame]:
    """PubMedQA with the default verifier: AUC per negative type, easy->hard transfer with
    recalibration and review budget, BM25 re-attribution recall@1, and scope control (kappa).

    Builds the verifier into a temporary folder when ``verifier_dir`` is None.
    """
    pairs, meta, items = pubmedqa_scores(raw, verifier_dir, n, seed)
    transfer, easy_tau = _transfer_table(pairs, seed)
    return {
        "guard_pubmedqa_auc": _auc_table(pairs, meta),
        "guard_pubmedqa_transfer": transfer,
        "guard_pubmedqa_reattribution": _reattribution_table(pairs, items),
        "guard_pubmedqa_scope": _scope_table(pairs, easy_tau, seed),
    }


def pubmedqa_fp32_vs_int8(
    raw: Path, verifier_dir: Path | None = None, n: int = 60, seed: int = PUBMEDQA_SEED
) -> dict[str, pd.DataFrame]:
    """Two verifiers compared at a matched catch rate (seed 001, Table 1 protocol): the default
    fp32 ONNX vs its int8 per-channel quantisation, on positives vs hard (mesh + bm25)
    construction-labelled negatives. Reports AUC of each and, at each target catch rate, the
    flag rate on supported pairs (review cost) with a paired bootstrap CI of the difference.
    """
    import tempfile

    from kit.guard.training.pairs import build_pairs, items_from_pqal
    from kit.registry.fetch import raw_path
    from kit.stats.roc import matched_catch_comparison, roc_auc

    items = items_from_pqal(boundary.read_json(raw_path(PUBMEDQA, raw)))
    pairs, _ = build_pairs(items, n, np.random.default_rng(seed))
    pairs = pairs[pairs["pair_type"].isin(["positive", "mesh", "bm25"])].reset_index(drop=True)
    scores = {}
    with tempfile.TemporaryDirectory() as tmp:
        for variant in ("fp32", "int8"):
            v = _verifier(verifier_dir, Path(tmp), variant)
            scores[variant] = v.score(pairs["claim"].tolist(), pairs["passage"].tolist())
    y = (pairs["label"] == "supported").to_numpy()
    auc = {k: roc_auc(s, y) for k, s in scores.items()}
    rows = []
    for target in (0.90, 0.95):
        r = matched_catch_comparison(
            scores["fp32"], scores["int8"], y, target, np.random.default_rng([seed, 8]), 2000
        )
        rows.append(
            {
                "target_catch": target,
                "n_pos": int(y.sum()),
                "n_neg": int((~y).sum()),
                "auc_fp32": auc["fp32"].auc,
                "auc_int8": auc["int8"].auc,
                "catch_fp32": r.catch_a,
                "catch_int8": r.catch_b,
                "false_flag_fp32": r.false_flag_a,
                "false_flag_int8": r.false_flag_b,
                "diff": r.diff,
                "diff_lo": r.diff_lo,
                "diff_hi": r.diff_hi,
                "max_abs_score_diff": float(np.max(np.abs(scores["fp32"] - scores["int8"]))),
                "note": f"{LABEL_NOTE}; n_items={n}, seed={seed}; hard negatives = mesh + bm25; "
                "paired percentile bootstrap (2000) of the false-flag difference",
            }
        )
    return {"guard_pubmedqa_fp32_vs_int8": pd.DataFrame(rows)}
