"""Reproductions for kit.grade: OpenBioRQ's published rates (seed 002) and the planted audit.

``openbiorq_rates`` recomputes every OpenBioRQ rate that is printed with its counts (or with a
denominator from which the count can be implied) with a Wilson 95% interval, and the board's
order; figures that need per-question data are listed with an empty ``kit_value`` and a note.
Registry inputs: ``published/published_constants.yaml`` (openbiorq section) and
``published/openbiorq_board.csv``. A few counts printed only in the paper's text are transcribed
in :data:`PAPER_COUNTS` with their section.

``planted_audit`` builds the seeded planted-truth audit from PubMedQA (kit.grade.planted) and
reports recovered vs planted rates for one seed and interval coverage over many seeds.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core.schema import validate_frame
from kit.grade import planted as pl
from kit.grade.citation_audit import SupportRule
from kit.grade.support import LexicalSupport
from kit.guard.scoring.score_store import scorer_name
from kit.registry.loaders import openbiorq_board, published_constants, pubmedqa_tables
from kit.stats.wilson import wilson_ci

# Counts printed in the paper's text but not in published_constants.yaml (seed 002).
PAPER_COUNTS: tuple[dict[str, Any], ...] = (
    {
        "quantity": "partial_flip_probe",
        "section": "C.1",
        "k": 10,
        "n": 25,
        "paper_pct": 40.0,
        "note": "partial citations flipping to 'no' in a 25-item probe (k = 40% of 25)",
    },
    {
        "quantity": "churn_flips_qwen_deepseek",
        "section": "C.6",
        "k": 19,
        "n": 23,
        "paper_pct": 100 * 19 / 23,
        "note": "share of re-decode flips from Qwen3.6 and DeepSeek-V4 (19 of 23)",
    },
    {
        "quantity": "self_contained_refined",
        "section": "A.1",
        "k": 427,
        "n": 500,
        "paper_pct": 85.4,
        "note": "self-contained refined questions, n = 500 (k = 85.4% of 500)",
    },
    {
        "quantity": "self_contained_baseline",
        "section": "A.1",
        "k": 258,
        "n": 500,
        "paper_pct": 51.6,
        "note": "self-contained extractor-only questions, n = 500 (k = 51.6% of 500)",
    },
    {
        "quantity": "frozen_core_of_core",
        "section": "C, Core difficulty",
        "k": 423,
        "n": 657,
        "paper_pct": 100 * 423 / 657,
        "note": "frozen core (deterministic all-roster fail) as a share of the 657-item core",
    },
)
BROAD_SET_N = 1969  # C.2: broad-set zero-tool rates 20.8 / 19.6 / 31.3 % on 1,969 questions
BROAD_ZERO_TOOL = {"GLM-5.1": 20.8, "Qwen3.6": 19.6, "DeepSeek-V4": 31.3}
SPLIT_N = {"frozen_core_423": 423, "full_core_657": 657}
# Figures printed in the paper's text without a count or denominator: listed, not recomputed.
PAPER_FIGURES_WITHOUT_COUNTS: tuple[tuple[str, str, float, str], ...] = (
    ("zero_tool_priority_GLM-5.1", "C.2", 65.3, "priority-track n per model not printed"),
    ("zero_tool_priority_DeepSeek-V4", "C.2", 62.3, "priority-track n per model not printed"),
    ("zero_tool_priority_Qwen3.6", "C.2", 22.1, "priority-track n per model not printed"),
    ("non_attempt_priority_GLM-5.1", "C.2", 69.1, "needs per-question non-attempt labels"),
    ("non_attempt_priority_DeepSeek-V4", "C.2", 62.3, "needs per-question non-attempt labels"),
    ("non_attempt_priority_Qwen3.6", "C.2", 26.3, "needs per-question non-attempt labels"),
    ("partial_bin_share_opus", "C.1", 28.1, "count of evaluable citations per bin not printed"),
    ("wrong_paper_must_ground_risk_ratio", "C.1", 1.07, "needs the 2x2 table of 879 answers"),
    ("checklist_judge_kappa_solved", "C.4", 0.65, "needs per-question solve labels"),
    ("churn_boundary_items_pct", "C.6", 46.5, "number of boundary items not printed"),
    ("churn_deep_failures_pct", "C.6", 34.7, "number of near-threshold items not printed"),
    ("gold_misattribution_pct", "Discussion", 74.0, "n only approximate (~360 citations)"),
)
NOT_RECOMPUTABLE = (
    ("judge_kappa_wrong_paper", "judge_kappa", "needs the two judges' per-citation labels"),
    ("checklist_spearman_before", "checklist_spearman_before_after.0", "needs per-question scores"),
    ("checklist_spearman_after", "checklist_spearman_before_after.1", "needs per-question scores"),
)


def _pct(x: float) -> float:
    return 100.0 * x


def _row(
    quantity: str, section: str, paper: float, k: int | None, n: int | None, note: str
) -> dict[str, Any]:
    if k is None or n is None:
        return {
            "quantity": quantity,
            "section": section,
            "paper_value": paper,
            "k": None,
            "n": None,
            "kit_value": math.nan,
            "ci_lo": math.nan,
            "ci_hi": math.nan,
            "delta": math.nan,
            "note": note,
        }
    ci = wilson_ci(k, n)
    kit = round(_pct(ci.estimate), 10)
    return {
        "quantity": quantity,
        "section": section,
        "paper_value": paper,
        "k": k,
        "n": n,
        "kit_value": kit,
        "ci_lo": round(_pct(ci.lo), 10),
        "ci_hi": round(_pct(ci.hi), 10),
        "delta": round(kit - paper, 10) if not math.isnan(paper) else math.nan,
        "note": note,
    }


def _implied_k(pct: float, n: int) -> tuple[int, bool]:
    """The count k whose k / n is nearest the printed percentage, and whether it rounds back."""
    k = round(pct * n / 100.0)
    return k, round(100.0 * k / n, 1) == round(pct, 1)


def openbiorq_rates(raw: Path) -> dict[str, pd.DataFrame]:
    """OpenBioRQ rates with Wilson CIs (percent) and the board's order."""
    c = published_constants(raw)["openbiorq"]
    rows = _headline_rows(c) + _printed_rows(c)
    rates = pd.DataFrame(rows)
    rates["k"] = rates["k"].astype("Int64")
    rates["n"] = rates["n"].astype("Int64")

    bt = _separation(_board_rows(raw))
    src = "kit.reproductions.grade:openbiorq_rates"
    return {
        "openbiorq_rates": validate_frame(rates, "grade_openbiorq_rates", src),
        "openbiorq_board_rates": validate_frame(bt, "grade_openbiorq_board_rates", src),
    }


def _headline_rows(c: dict[str, Any]) -> list[dict[str, Any]]:
    """The citation-audit headline figures: wrong paper (by identifier, pooled, headline),
    fabricated identifiers and the partial-inclusive upper bound."""
    rows = []
    rows = []
    nct, pmid = c["nct_wrong_paper"], c["pmid_wrong_paper"]
    rows.append(
        _row(
            "wrong_paper_nct",
            "C.1",
            20.3,
            nct["k"],
            nct["n"],
            "NCT ids, Opus judge; counts printed",
        )
    )
    rows.append(
        _row(
            "wrong_paper_pmid",
            "C.1",
            13.0,
            pmid["k"],
            pmid["n"],
            "PMIDs, Opus judge; counts printed",
        )
    )
    rows.append(
        _row(
            "wrong_paper_nct_plus_pmid",
            "C.1",
            math.nan,
            nct["k"] + pmid["k"],
            nct["n"] + pmid["n"],
            "pooled from the two printed counts (Opus judge); the paper prints no pooled figure "
            "for these counts -- its 15.9% headline is over 4,649 citations with another judge",
        )
    )
    n_real = int(c["citations_audited"])
    k_wp, ok = _implied_k(c["wrong_paper_pct"], n_real)
    rows.append(
        _row(
            "wrong_paper_headline",
            "Abstract, C.1",
            float(c["wrong_paper_pct"]),
            k_wp,
            n_real,
            f"k implied from the printed {c['wrong_paper_pct']}% of {n_real} "
            f"({'rounds back' if ok else 'does NOT round back'})",
        )
    )
    k_fab, ok = _implied_k(c["fabricated_pct_of_4863"], 4863)
    rows.append(
        _row(
            "fabricated_ids",
            "Conclusion, Discussion",
            float(c["fabricated_pct_of_4863"]),
            k_fab,
            4863,
            f"k implied from ~{c['fabricated_pct_of_4863']}% of 4,863 "
            f"({'rounds back' if ok else 'does NOT round back'}); the 214 = 4,863 - 4,649 "
            "citations outside the L2 denominator exceed the invented ones, so the rest are "
            "presumably transient or unevaluable -- not checkable without per-citation data",
        )
    )
    rows.append(
        _row(
            "wrong_paper_headline_plus_partial",
            "C.1",
            25.0,
            None,
            None,
            "paper's ~25% upper bound: 15.9% + 40% x 28.1% partial = 27.1% by direct "
            "arithmetic; the paper restricts to 'substantive' partials, whose count is not printed",
        )
    )
    return rows


def _printed_rows(c: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-model figures, zero-tool rates, the paper's printed counts and the figures that
    cannot be recomputed (with why)."""
    rows = []
    for model, pct in sorted(c["wrong_paper_by_model_pct"].items()):
        rows.append(
            _row(
                f"wrong_paper_{model}",
                "C.1",
                float(pct),
                None,
                None,
                "per-model denominators not printed",
            )
        )
    for model, pct in sorted(c["existence_pct"].items()):
        rows.append(
            _row(
                f"existence_{model}",
                "Experiments",
                float(pct),
                None,
                None,
                "per-model denominators not printed",
            )
        )
    for model, pct in sorted(BROAD_ZERO_TOOL.items()):
        k, ok = _implied_k(pct, BROAD_SET_N)
        rows.append(
            _row(
                f"zero_tool_broad_{model}",
                "C.2",
                pct,
                k,
                BROAD_SET_N,
                f"k implied from {pct}% of the 1,969-question broad set "
                f"({'rounds back' if ok else 'does NOT round back'}); assumes every question "
                "was run for every model",
            )
        )
    for rec in PAPER_COUNTS:
        rows.append(
            _row(
                rec["quantity"],
                rec["section"],
                round(rec["paper_pct"], 10),
                rec["k"],
                rec["n"],
                rec["note"],
            )
        )
    flat = {
        "judge_kappa": c["judge_kappa"],
        "checklist_spearman_before_after.0": c["checklist_spearman_before_after"][0],
        "checklist_spearman_before_after.1": c["checklist_spearman_before_after"][1],
    }
    for quantity, key, why in NOT_RECOMPUTABLE:
        rows.append(
            _row(
                quantity,
                "C.1 / Checklist-based grading",
                float(flat[key]),
                None,
                None,
                f"cannot recompute: {why}",
            )
        )
    for quantity, section, value, why in PAPER_FIGURES_WITHOUT_COUNTS:
        rows.append(_row(quantity, section, value, None, None, f"cannot recompute: {why}"))
    return rows


def _board_rows(raw: Path) -> pd.DataFrame:
    """The published board's solve rates per split with the k each implies, its Wilson CI and
    the paper's and the kit's ranks."""
    board = openbiorq_board(raw)
    brows = []
    for split, g in board.groupby("split", sort=True):
        n = SPLIT_N[split]
        g = g.assign(paper_rank=g["solve_rate_pct"].rank(ascending=False, method="min").astype(int))
        for _, r in g.iterrows():
            k, ok = _implied_k(float(r["solve_rate_pct"]), n)
            ci = wilson_ci(k, n)
            brows.append(
                {
                    "split": split,
                    "model": r["model"],
                    "role": r["role"],
                    "paper_value": float(r["solve_rate_pct"]),
                    "n": n,
                    "k_implied": k,
                    "kit_value": round(_pct(ci.estimate), 10),
                    "ci_lo": round(_pct(ci.lo), 10),
                    "ci_hi": round(_pct(ci.hi), 10),
                    "rounds_back": ok,
                    "paper_rank": int(r["paper_rank"]),
                    "note": (
                        "k implied from the printed rate and the split size"
                        if ok
                        else "no k out of n gives the printed rate: a different denominator "
                        "(e.g. failed runs dropped) or a transcription error"
                    ),
                }
            )
    bt = pd.DataFrame(brows)
    bt["kit_rank"] = (
        bt.groupby("split")["kit_value"].rank(ascending=False, method="min").astype(int)
    )
    return bt


def _separation(bt: pd.DataFrame) -> pd.DataFrame:
    """Pairwise separation: does each entry's Wilson CI clear the next-ranked one's? The table
    sorted by split and kit rank, its note last."""
    sep = []
    for _, g in bt.sort_values(
        ["split", "kit_value", "model"], ascending=[True, False, True]
    ).groupby("split", sort=True):
        recs = g.to_dict("records")
        for a, b in itertools.pairwise(recs):
            sep.append(((a["split"], a["model"]), a["ci_lo"] > b["ci_hi"]))
    sep_map = dict(sep)
    bt["separated_from_next"] = [
        sep_map.get((s, m)) for s, m in zip(bt["split"], bt["model"], strict=True)
    ]
    bt = bt.sort_values(["split", "kit_rank", "model"]).reset_index(drop=True)
    bt["separated_from_next"] = bt["separated_from_next"].astype("boolean")
    bt = bt[[c for c in bt.columns if c != "note"] + ["note"]]
    return bt


DEFAULT_COVERAGE_SEEDS = 40


def _planted_tables(
    raw: Path, n_seeds: int, scorer: Any, rule: SupportRule, prefix: str
) -> dict[str, pd.DataFrame]:
    t = pubmedqa_tables(raw)
    design = pl.PlantedDesign()
    corpus = pl.build_corpus(
        t["pubmedqa_items"], t["pubmedqa_contexts"], t["pubmedqa_meshes"], design
    )
    if scorer is None:
        scorer = LexicalSupport.from_corpus(corpus.abstract[p] for p in sorted(corpus.abstract))
    instrument = (
        f"{scorer_name(scorer)}; L2 yes >= {rule.yes_at}, partial >= {rule.partial_at}, else no"
    )
    pset = pl.plant(corpus, design, np.random.default_rng(0), 0)
    res = pl.audit_planted(corpus, pset, scorer, rule)
    rec = res["recovery"].rename(columns={"planted": "planted_value", "estimate": "kit_value"})
    rec["instrument"] = instrument
    rec = rec[
        [
            "metric",
            "planted_value",
            "k",
            "n",
            "kit_value",
            "lo",
            "hi",
            "covered",
            "instrument",
            "note",
        ]
    ]
    cov = pl.coverage_over_seeds(corpus, design, range(n_seeds), scorer, rule)
    cov = cov.rename(columns={"planted": "planted_value", "mean_estimate": "kit_value"})
    cov["nominal"] = 0.95
    cov["instrument"] = instrument
    cov["note"] = cov["metric"].map(
        {
            "fabrication_rate": "Wilson interval of notfound / (found + notfound)",
            "wrong_paper_raw": "Wilson interval of the raw no-rate: biased upward by the "
            "instrument's false 'no' on right papers; expected to under-cover",
            "wrong_paper_upper": "partial-inclusive upper bound: coverage = share with planted <= hi",
            "wrong_paper_corrected": "Rogan-Gladen with delta-method interval; instrument error "
            "rates from held-out items of the same seed",
        }
    )
    conf = res["confusion"].rename(columns={"planted": "planted_type"})
    params = {
        "n_answers": design.n_answers,
        "p_wrong": design.p_wrong,
        "p_fabricated": design.p_fabricated,
        "p_transient": design.p_transient,
        "wrong_given_found": design.wrong_given_found,
        "pool_items": len(corpus.pool),
        "corpus_items": len(corpus.pmids),
        "n_seeds_coverage": n_seeds,
        "yes_at": rule.yes_at,
        "partial_at": rule.partial_at,
    }
    design_tab = pd.DataFrame(
        [{"parameter": k, "value": float(v)} for k, v in sorted(params.items())]
    )
    checklist = _planted_checklist(corpus, pset, scorer, rule, instrument)
    src = f"kit.reproductions.grade ({prefix})"
    return {
        f"{prefix}_recovery": validate_frame(rec, "grade_planted_recovery", src),
        f"{prefix}_coverage": validate_frame(cov, "grade_planted_coverage", src),
        f"{prefix}_confusion": validate_frame(conf, "grade_planted_confusion", src),
        f"{prefix}_design": validate_frame(design_tab, "grade_planted_design", src),
        f"{prefix}_checklist": validate_frame(checklist, "grade_planted_checklist", src),
    }


def _planted_checklist(
    corpus: pl.PlantedCorpus, pset: pl.PlantedSet, scorer: Any, rule: SupportRule, instrument: str
) -> pd.DataFrame:
    """Grade the planted answers against their derived checklists with the built-in judge
    (must_ground backed by the same support instrument and thresholds as L2)."""
    from kit.grade.checklist import score_verdicts
    from kit.grade.judge import JudgeRule, judge_runs

    cls = {}
    for r in pset.runs:
        cl = pl.derive_checklist(corpus, r.task_id.removeprefix("pubmedqa-"))
        cls[cl.task_id] = cl
    verdicts, _ = judge_runs(
        cls,
        pset.runs,
        "lexical-judge",
        JudgeRule(ground_yes=rule.yes_at, ground_partial=rule.partial_at),
        scorer,
        lambda c: corpus.abstract.get(c.value),
    )
    scores = score_verdicts(cls, verdicts).merge(
        verdicts[verdicts["criterion_id"] == "c5"][["task_id", "run_id", "verdict"]], on="task_id"
    )
    scores = scores.merge(pset.truth[["run_id", "planted"]], on="run_id")
    rows = []
    for kind in ("right", "wrong", "fabricated"):
        g = scores[scores["planted"] == kind]
        if g.empty:
            continue
        ci = wilson_ci(int(g["solved"].sum()), len(g))
        rows.append(
            {
                "planted_type": kind,
                "n": len(g),
                "mean_score": float(g["score"].mean()),
                "solve_rate": ci.estimate,
                "solve_lo": ci.lo,
                "solve_hi": ci.hi,
                "must_ground_met": float((g["verdict"] == "met").mean()),
                "instrument": instrument,
                "note": "6 criteria derived per item (kit.grade.planted.derive_checklist); "
                "solved iff score >= 0.5",
            }
        )
    return pd.DataFrame(rows)


def planted_audit(raw: Path, n_seeds: int = DEFAULT_COVERAGE_SEEDS) -> dict[str, pd.DataFrame]:
    """Planted-truth audit on PubMedQA: one seed in detail and coverage over ``n_seeds`` seeds.

    Instrument: the lexical IDF-coverage support scorer (kit.grade.support.LexicalSupport) with
    the declared thresholds kit.grade.planted.LEXICAL_RULE. The MiniLM variant is
    :func:`planted_audit_minilm` (needs a built verifier; slow on CPU).
    """
    return _planted_tables(raw, n_seeds, None, pl.LEXICAL_RULE, "planted")


def planted_audit_minilm(
    raw: Path, verifier_dir: Path, n_seeds: int = 20
) -> dict[str, pd.DataFrame]:
    """The planted audit with the citation guard's ONNX MiniLM bi-encoder as the L2 instrument
    (kit.guard.verifiers, thresholds kit.grade.planted.MINILM_RULE). Embeddings are cached per
    text, so seeds after the first cost little; the first embeds ~1,000 abstracts (minutes on
    2 CPU cores)."""
    from kit.guard.verifiers.load import load_verifier

    scorer = load_verifier(Path(verifier_dir))
    return _planted_tables(raw, n_seeds, scorer, pl.MINILM_RULE, "planted_minilm")
