"""Pure orchestration of `kit audit` (no file I/O, no printing; RNG passed in).

Joins the existing pieces into one audit of an agent's runs:

* L1 / L2 from :mod:`kit.grade.citation_audit` (found / notfound / transient / unchecked, decided
  over the named corpora with their declared coverage, :mod:`kit.corpus.coverage`; yes / partial /
  no at declared thresholds); the L2 instrument is any scorer (the runner wraps the verifier in
  :class:`kit.guard.score_store.StoredScorer`, so a rerun reuses every score by hash).
* The split-conformal flag rule of :mod:`kit.guard.conformal`: a found citation whose support
  score is ``<= tau`` is flagged. tau comes from unsupported-class calibration scores of the
  *same* verifier; the kit's default calibration set is construction-labelled (an item's
  conclusion against the abstract of its on-topic MeSH neighbour -- :mod:`kit.grade.pubmedqa_corpus`),
  drawn from corpus items the audited runs neither answer nor cite.
* Re-attribution suggestions (DESIGN.md section B): BM25 (:mod:`kit.guard.reattribute`'s
  Lucene-idf BM25, served by :mod:`kit.corpus.bm25`) over the whole corpus proposes the best other paper for a flagged claim; the
  verifier judges it; a suggestion is made only when it scores above tau. Nothing is deleted.
* Headline numbers with Wilson intervals (cluster-bootstrap interval for the flag rate, citations
  of one answer being clustered), the Rogan-Gladen-corrected wrong-paper rate (instrument error
  rates measured on the held-out construction-labelled pairs), and -- for a planted set --
  every headline number next to its planted truth.
* Board placement: the certify engine (:func:`kit.certify.engine.certify_board`) on the board
  table that includes the agent's rows; the agent's pairs (admissible or refused, certified or
  not) and its rank interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kit.errors import ConfigError, check_param
from kit.grade.citation_audit import SupportRule
from kit.grade.support import SupportScorer
from kit.guard.reattribute import tokenize
from kit.stats.wilson import wilson_ci

CITATION_COLUMNS = [
    "run_id",
    "model",
    "task_id",
    "citation",
    "id_type",
    "value",
    "claim",
    "l1",
    "corpus",
    "support_score",
    "l2",
    "flagged",
    "flag_reason",
    "candidate",
    "candidate_score",
    "suggested",
]
RUN_COLUMNS = [
    "run_id",
    "model",
    "task_id",
    "tools_enabled",
    "n_tool_calls",
    "n_cited",
    "n_found",
    "n_notfound",
    "n_transient",
    "n_unchecked",
    "n_flagged",
    "non_attempt",
    "zero_tool",
    "checklist_score",
    "solved",
]
FLAG_REASONS = ("notfound", "no_passage", "score_at_or_below_tau")


def flag_citations(audited: pd.DataFrame, tau: float) -> pd.DataFrame:
    """Add ``flagged`` and ``flag_reason``: notfound (fabricated identifier), no_passage (found
    but no text to verify against), score_at_or_below_tau (the conformal rule, s <= tau)."""
    out = audited.copy()
    s = out["support_score"].to_numpy(dtype=float)
    found = (out["l1"] == "found").to_numpy()
    reason = np.full(len(out), "", dtype=object)
    reason[(out["l1"] == "notfound").to_numpy()] = "notfound"
    reason[found & np.isnan(s)] = "no_passage"
    with np.errstate(invalid="ignore"):
        reason[found & ~np.isnan(s) & (s <= tau)] = "score_at_or_below_tau"
    out["flag_reason"] = reason
    out["flagged"] = reason != ""
    return out


@dataclass(frozen=True)
class CorpusIndex:
    """BM25 (Lucene idf; the formula of :mod:`kit.guard.reattribute`) over every corpus paper,
    built once as a :class:`kit.corpus.bm25.BM25Index` (scores identical to the rank-bm25
    reference, tests/corpus/test_corpus_bm25.py; a query reads only its terms' postings)."""

    ids: tuple[str, ...]
    index: Any = field(hash=False, compare=False)

    @classmethod
    def build(cls, texts: Mapping[str, str]) -> CorpusIndex:
        from kit.corpus.bm25 import BM25Index

        ids = tuple(sorted(k for k, v in texts.items() if tokenize(v)))
        check_param("texts", len(ids), len(ids) >= 1, "at least one non-empty text", "CorpusIndex")
        return cls(ids, BM25Index.build((i, texts[i]) for i in ids))

    def best_other(self, query: str, exclude: str) -> str | None:
        """The top-ranked paper other than ``exclude`` (ties -> smallest id), or None."""
        if not tokenize(query):
            return None
        top = self.index.top(query, 1, exclude=[exclude])
        return top[0][0] if top else None


def suggest_reattribution(
    flagged: pd.DataFrame,
    index: CorpusIndex,
    texts: Mapping[str, str],
    scorer: SupportScorer,
    tau: float,
    label: Callable[[str], str] = lambda v: f"PMID:{v}",
) -> pd.DataFrame:
    """For each citation flagged by the conformal rule: BM25's best other corpus paper
    (``candidate``), its verifier score (``candidate_score``) and ``suggested`` = the candidate's
    label when it scores above tau (the pointer may move), else ''. Never deletes a citation."""
    out = flagged.copy()
    out["candidate"] = ""
    out["candidate_score"] = np.nan
    out["suggested"] = ""
    rows = np.flatnonzero((out["flag_reason"] == "score_at_or_below_tau").to_numpy())
    cands: list[tuple[int, str]] = []
    for i in rows:
        c = index.best_other(str(out["claim"].iat[i]), str(out["value"].iat[i]))
        if c is not None:
            cands.append((int(i), c))
    if cands:
        s = scorer.score([str(out["claim"].iat[i]) for i, _ in cands], [texts[c] for _, c in cands])
        cc, cs, cg = (out.columns.get_loc(k) for k in ("candidate", "candidate_score", "suggested"))
        for (i, c), v in zip(cands, s, strict=True):
            out.iat[i, cc] = label(c)
            out.iat[i, cs] = float(v)
            out.iat[i, cg] = label(c) if float(v) > tau else ""
    return out


def _metric(metric: str, k: int, n: int, level: float, note: str, **extra: Any) -> dict[str, Any]:
    """One headline number: Wilson estimate and interval, or an explicit 'undefined' (n = 0)."""
    row: dict[str, Any] = {"metric": metric, "k": int(k), "n": int(n), "note": note}
    if n == 0:
        row.update(estimate=None, lo=None, hi=None, ci="undefined: n = 0")
    else:
        ci = wilson_ci(int(k), int(n), level)
        row.update(estimate=ci.estimate, lo=ci.lo, hi=ci.hi, ci=f"Wilson {level:.0%}")
    row.update(extra)
    return row


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


def citation_headline(
    cites: pd.DataFrame,
    level: float,
    rng: np.random.Generator,
    instrument: InstrumentCounts | None,
    n_boot: int = 2000,
) -> list[dict[str, Any]]:
    """Headline citation numbers from the flagged, re-attributed citation table."""
    from kit.grade.citation_audit import rogan_gladen
    from kit.stats.bootstrap import cluster_bootstrap_mean

    l1 = cites["l1"].value_counts()
    found, notfound = int(l1.get("found", 0)), int(l1.get("notfound", 0))
    scored = cites[cites["support_score"].notna() & (cites["l1"] == "found")]
    no = int((scored["l2"] == "no").sum())
    partial = int((scored["l2"] == "partial").sum())
    flag = (scored["flag_reason"] == "score_at_or_below_tau").to_numpy()
    unresolved = flag & (scored["suggested"] == "").to_numpy()
    out = [
        _metric(
            "fabrication_rate",
            notfound,
            found + notfound,
            level,
            "L1: notfound / (found + notfound); transient lookups excluded, never fabrication",
        ),
        _metric(
            "unchecked_citations",
            int(l1.get("unchecked", 0)),
            len(cites),
            level,
            "L1: outside every corpus's declared complete coverage (e.g. a real paper missing from "
            "a sample corpus); counted apart, never as fabrication",
        ),
        _metric(
            "transient_lookups",
            int(l1.get("transient", 0)),
            len(cites),
            level,
            "L1 lookups that failed (outage); excluded from every rate",
        ),
        _metric(
            "wrong_paper_rate",
            no,
            len(scored),
            level,
            "L2: no / scored found citations (conservative, no-only)",
        ),
        _metric(
            "wrong_paper_upper",
            no + partial,
            len(scored),
            level,
            "L2: (no + partial) / scored found citations; an upper bound",
        ),
    ]
    if instrument is not None and len(scored) and instrument.sens_n and instrument.fpr_n:
        if instrument.sens_k / instrument.sens_n > instrument.fpr_k / instrument.fpr_n:
            rg = rogan_gladen(no, len(scored), **instrument.__dict__, level=level)
            out.append(
                {
                    "metric": "wrong_paper_corrected",
                    "k": no,
                    "n": len(scored),
                    "estimate": rg.estimate,
                    "lo": rg.lo,
                    "hi": rg.hi,
                    "ci": f"delta method {level:.0%} (Rogan-Gladen)",
                    "note": (
                        f"instrument P(no|wrong)={instrument.sens_k}/{instrument.sens_n}, "
                        f"P(no|right)={instrument.fpr_k}/{instrument.fpr_n} on held-out "
                        "construction-labelled pairs"
                    ),
                }
            )
    fr = _metric(
        "flag_rate",
        int(flag.sum()),
        len(scored),
        level,
        "conformal rule s <= tau on scored found citations: the review budget",
    )
    if len(scored):
        cb = cluster_bootstrap_mean(
            flag.astype(float), scored["run_id"].to_numpy(), rng, n_boot, level
        )
        fr["cluster_bootstrap"] = [cb.lo, cb.hi]
    out.append(fr)
    out.append(
        _metric(
            "unverified_after_reattribution",
            int(unresolved.sum()),
            len(scored),
            level,
            "flagged and no re-attribution candidate above tau: marked [UNVERIFIED]",
        )
    )
    return out


def behaviour_headline(per_run: pd.DataFrame, level: float) -> list[dict[str, Any]]:
    """Pooled behaviour rates over all runs (zero-tool over tool-enabled runs only)."""
    tools = per_run[per_run["arm"] == "tools"]
    return [
        _metric(
            "zero_tool_rate",
            int(tools["zero_tool"].sum()),
            len(tools),
            level,
            "tool-enabled runs with no tool call",
        ),
        _metric(
            "non_attempt_rate",
            int(per_run["non_attempt"].sum()),
            len(per_run),
            level,
            "declared lexical non-attempt detector",
        ),
        _metric("cite_rate", int(per_run["cites"].sum()), len(per_run), level, "runs citing"),
    ]


def checklist_headline(scores: pd.DataFrame, level: float) -> list[dict[str, Any]]:
    """Solve rate (score >= threshold) with Wilson CI, and the mean checklist score."""
    row = _metric(
        "solve_rate",
        int(scores["solved"].sum()),
        len(scores),
        level,
        "checklist score >= threshold (weighted mean of criterion credits)",
    )
    row["mean_score"] = float(scores["score"].mean()) if len(scores) else None
    return [row]


def run_table(
    runs: Sequence[Any], cites: pd.DataFrame, behaviour: pd.DataFrame, scores: pd.DataFrame | None
) -> pd.DataFrame:
    """One row per run (sorted by run_id): citation counts, behaviour flags, checklist score."""
    by_run = cites.groupby("run_id")
    beh = behaviour.set_index("run_id")
    sc = (
        scores.sort_values(["judge", "model", "task_id"])
        .drop_duplicates(["model", "task_id"])
        .set_index(["model", "task_id"])
        if scores is not None and len(scores)
        else None
    )
    rows = []
    for r in sorted(runs, key=lambda r: r.run_id):
        g = by_run.get_group(r.run_id) if r.run_id in by_run.groups else cites.iloc[0:0]
        entry = r.model if r.tools_enabled else f"{r.model} [no tools]"
        s = (
            sc.loc[(entry, r.task_id)]
            if sc is not None and (entry, r.task_id) in sc.index
            else None
        )
        rows.append(
            {
                "run_id": r.run_id,
                "model": r.model,
                "task_id": r.task_id,
                "tools_enabled": bool(r.tools_enabled),
                "n_tool_calls": int(r.n_tool_calls),
                "n_cited": len(g),
                "n_found": int((g["l1"] == "found").sum()),
                "n_notfound": int((g["l1"] == "notfound").sum()),
                "n_transient": int((g["l1"] == "transient").sum()),
                "n_unchecked": int((g["l1"] == "unchecked").sum()),
                "n_flagged": int(g["flagged"].sum()),
                "non_attempt": bool(beh.loc[r.run_id, "non_attempt"]),
                "zero_tool": bool(beh.loc[r.run_id, "zero_tool"]),
                "checklist_score": float(s["score"]) if s is not None else np.nan,
                "solved": ("" if s is None else "true" if bool(s["solved"]) else "false"),
            }
        )
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def planted_comparison(
    cites: pd.DataFrame,
    truth: pd.DataFrame,
    design: Mapping[str, float],
    headline: Sequence[Mapping[str, Any]],
    alpha: float,
    level: float,
) -> list[dict[str, Any]]:
    """Recovered vs planted: every citation headline number next to its planted truth.

    ``planted`` is the design's generating rate and ``covered`` the check: planted inside the
    interval (for the upper bound: planted <= hi; for the conformal catch rate: the interval
    reaches 1 - alpha, the guaranteed minimum; for transient lookups: the count equals the
    planted outages). ``realised`` is the rate in this draw, counted from the truth file.
    """
    h = {m["metric"]: m for m in headline}
    rows: list[dict[str, Any]] = []
    resolved = truth[~truth["transient"].astype(bool)]
    n_fab = int((resolved["planted"] == "fabricated").sum())
    n_wrong = int((resolved["planted"] == "wrong").sum())
    realised = {
        "fabrication_rate": n_fab / len(resolved) if len(resolved) else None,
        "wrong_paper_corrected": n_wrong / (len(resolved) - n_fab)
        if len(resolved) > n_fab
        else None,
    }
    realised["wrong_paper_upper"] = realised["wrong_paper_corrected"]

    def from_headline(metric: str, planted: float, rule: str) -> None:
        m = h.get(metric)
        if m is None or m["estimate"] is None:
            return
        covered = planted <= m["hi"] if rule == "upper" else bool(m["lo"] <= planted <= m["hi"])
        rows.append(
            {
                "metric": metric,
                "planted": planted,
                "realised": realised.get(metric),
                "estimate": m["estimate"],
                "lo": m["lo"],
                "hi": m["hi"],
                "k": m["k"],
                "n": m["n"],
                "covered": bool(covered),
                "rule": "planted <= hi" if rule == "upper" else "lo <= planted <= hi",
            }
        )

    wgf = float(design["p_wrong"]) / (1.0 - float(design["p_fabricated"]))
    from_headline("fabrication_rate", float(design["p_fabricated"]), "ci")
    from_headline("wrong_paper_corrected", wgf, "ci")
    from_headline("wrong_paper_upper", wgf, "upper")
    merged = cites.merge(truth[["run_id", "planted", "pmid"]], on="run_id", how="inner")
    n_tr = int(h["transient_lookups"]["k"]) if "transient_lookups" in h else 0
    planted_tr = int(truth["transient"].astype(bool).sum())
    rows.append(
        {
            "metric": "transient_lookups",
            "planted": float(planted_tr),
            "estimate": float(n_tr),
            "lo": None,
            "hi": None,
            "k": n_tr,
            "n": len(cites),
            "covered": n_tr == planted_tr,
            "rule": "count equals the planted outages",
        }
    )
    wrong = merged[(merged["planted"] == "wrong") & merged["support_score"].notna()]
    if len(wrong):
        k = int((wrong["flag_reason"] == "score_at_or_below_tau").sum())
        ci = wilson_ci(k, len(wrong), level)
        rows.append(
            {
                "metric": "catch_rate_wrong_paper",
                "planted": 1.0 - alpha,
                "estimate": ci.estimate,
                "lo": ci.lo,
                "hi": ci.hi,
                "k": k,
                "n": len(wrong),
                "covered": bool(ci.hi >= 1.0 - alpha),
                "rule": "hi >= 1 - alpha (conformal guarantee: catch >= 1 - alpha)",
            }
        )
        moved = wrong[wrong["suggested"] != ""]
        if len(moved):
            k2 = int((moved["suggested"] == "PMID:" + moved["pmid"].astype(str)).sum())
            ci2 = wilson_ci(k2, len(moved), level)
            rows.append(
                {
                    "metric": "reattribution_to_true_paper",
                    "planted": math.nan,
                    "estimate": ci2.estimate,
                    "lo": ci2.lo,
                    "hi": ci2.hi,
                    "k": k2,
                    "n": len(moved),
                    "covered": None,
                    "rule": "informational: suggestions that name the answer's own paper",
                }
            )
    return rows


def board_placement(
    frame: pd.DataFrame, design: Any, agent: str, source: str = "<board>"
) -> dict[str, Any]:
    """Certify the board table that includes the agent's rows; the agent's pairs and ranks.

    Returns ``pairs`` (the agent against every board system, per readout: admissible or
    refused with the reason, verdict, winner, gap, radius q), ``ranks`` (all systems' rank
    intervals over the composite), ``m`` (Bonferroni denominator) and ``synthetic`` (the
    evidence that rows were generated by ``kit simulate board``, else None; also kept in
    ``ranks.attrs["synthetic"]`` so the report page and stdout label the placement SYNTHETIC).
    """
    from kit.certify.engine import certify_board
    from kit.certify.simulate import synthetic_evidence

    systems = sorted(set(frame["system"]))
    if agent not in systems:
        raise ConfigError(
            "agent_not_on_board",
            f"system {agent!r} has no rows in the board table (systems: {', '.join(systems)}); "
            "give the agent's rows with --agent-scores or name it with --agent-system",
        )
    cert = certify_board(frame, design, None, source)
    p = cert.pairs
    mine = p[(p["system_a"] == agent) | (p["system_b"] == agent)].copy()
    mine["other"] = np.where(mine["system_a"] == agent, mine["system_b"], mine["system_a"])
    mine["admissible"] = mine["verdict"] != "refused"
    mine["agent_better"] = np.where(
        mine["verdict"] == "certified", np.where(mine["winner"] == agent, "yes", "no"), ""
    )
    sign = np.where(mine["system_a"] == agent, 1.0, -1.0)
    mine["agent_gap"] = mine["gap"].to_numpy(dtype=float) * sign
    cols = ["other", "readout", "admissible", "verdict", "reason", "agent_better", "agent_gap", "q"]
    pairs = mine[cols].sort_values(["readout", "other"], kind="stable").reset_index(drop=True)
    synthetic = synthetic_evidence(frame)
    ranks = cert.ranks.copy()
    ranks.attrs["synthetic"] = synthetic
    return {"pairs": pairs, "ranks": ranks, "m": int(cert.m), "synthetic": synthetic}


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


def json_clean(obj: Any) -> Any:
    """Replace NaN / inf by None and numpy scalars by Python ones (strict JSON)."""
    if isinstance(obj, dict):
        return {str(k): json_clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_clean(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if obj is pd.NA:
        return None
    return obj
