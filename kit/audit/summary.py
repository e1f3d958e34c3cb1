"""Stage: the summary -- headline numbers with their intervals, the per-run table, the
planted-vs-recovered comparison, and ``summary.json`` (pure).

Headline numbers carry Wilson intervals (a cluster-bootstrap interval for the flag rate,
citations of one answer being clustered), the Rogan-Gladen-corrected wrong-paper rate
(instrument error rates measured on the held-out construction-labelled pairs), and -- for a
planted set -- every headline number next to its planted truth.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kit.audit.flags import InstrumentCounts
from kit.grade.citation_audit import CITATION_ROW_COLUMNS, EVIDENCE, L2_SCORED
from kit.guard.verifiers.card import identity_entry
from kit.stats.wilson import wilson_ci

CITATION_COLUMNS = [
    *CITATION_ROW_COLUMNS,
    "l1",
    "corpus",
    "evidence",
    "evidence_calls",
    "record_format",
    "tool_score",
    "corpus_score",
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
    "status",
    "status_detail",
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
    scored = cites[cites["support_score"].notna() & cites["l1"].isin(L2_SCORED)]
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
            "L2: no / scored citations (conservative, no-only)",
        ),
        _metric(
            "wrong_paper_upper",
            no + partial,
            len(scored),
            level,
            "L2: (no + partial) / scored citations; an upper bound",
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
        "conformal rule s <= tau on scored citations: the review budget",
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
    """Pooled behaviour rates: the runs the harness did not finish (error, limit) over all
    runs; zero-tool, non-attempt and cite rates over the finished runs (zero-tool over the
    tool-enabled ones only)."""
    done = per_run[per_run["status"] == "ok"]
    tools = done[done["arm"] == "tools"]
    return [
        _metric(
            "error_rate",
            int((per_run["status"] == "error").sum()),
            len(per_run),
            level,
            "runs the harness failed on (status error; e.g. a tool raised): kept, never audited "
            "as answers",
        ),
        _metric(
            "limit_rate",
            int((per_run["status"] == "limit").sum()),
            len(per_run),
            level,
            "runs a limit cancelled (status limit: message, token, time...): kept, never "
            "audited as answers",
        ),
        _metric(
            "zero_tool_rate",
            int(tools["zero_tool"].sum()),
            len(tools),
            level,
            "finished tool-enabled runs with no tool call",
        ),
        _metric(
            "non_attempt_rate",
            int(done["non_attempt"].sum()),
            len(done),
            level,
            "declared lexical non-attempt detector, over finished runs",
        ),
        _metric("cite_rate", int(done["cites"].sum()), len(done), level, "finished runs citing"),
    ]


def status_counts(runs: Sequence[Any]) -> dict[str, int]:
    """Runs by their fate in the harness (kit.runs.model.RUN_STATUSES)."""
    from kit.runs.model import RUN_STATUSES

    return {s: sum(1 for r in runs if r.status == s) for s in RUN_STATUSES}


def unfinished_runs(runs: Sequence[Any]) -> list[dict[str, str]]:
    """The runs the harness did not finish, sorted by run_id: run, status and what happened."""
    return [
        {
            "run_id": r.run_id,
            "model": r.model,
            "task_id": r.task_id,
            "status": r.status,
            "detail": r.status_detail,
        }
        for r in sorted(runs, key=lambda r: r.run_id)
        if not r.completed
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
    """One row per run (sorted by run_id): distinct identifiers cited and their L1 counts,
    flagged (claim, citation) rows, behaviour flags, checklist score."""
    # per-run counts in one pass each (a get_group per run cost O(runs) pandas calls)
    first = cites.drop_duplicates(["run_id", "citation"])  # L1 is per identifier
    n_cited = first.groupby("run_id").size().to_dict()
    l1_counts = first.groupby(["run_id", "l1"]).size().to_dict()
    n_flagged = cites.groupby("run_id")["flagged"].sum().to_dict()
    beh = behaviour.set_index("run_id")
    non_attempt, zero_tool = beh["non_attempt"].to_dict(), beh["zero_tool"].to_dict()
    sc = (
        scores.sort_values(["judge", "model", "task_id"])
        .drop_duplicates(["model", "task_id"])
        .set_index(["model", "task_id"])
        if scores is not None and len(scores)
        else None
    )
    rows = []
    for r in sorted(runs, key=lambda r: r.run_id):
        entry = r.model if r.tools_enabled else f"{r.model} [no tools]"
        s = (
            sc.loc[(entry, r.task_id)]
            if sc is not None and (entry, r.task_id) in sc.index
            else None
        )
        rid = r.run_id
        rows.append(
            {
                "run_id": rid,
                "model": r.model,
                "task_id": r.task_id,
                "status": r.status,
                "status_detail": r.status_detail,
                "tools_enabled": bool(r.tools_enabled),
                "n_tool_calls": int(r.n_tool_calls),
                "n_cited": int(n_cited.get(rid, 0)),
                "n_found": int(l1_counts.get((rid, "found"), 0)),
                "n_notfound": int(l1_counts.get((rid, "notfound"), 0)),
                "n_transient": int(l1_counts.get((rid, "transient"), 0)),
                "n_unchecked": int(l1_counts.get((rid, "unchecked"), 0)),
                "n_flagged": int(n_flagged.get(rid, 0)),
                "non_attempt": bool(non_attempt[rid]),
                "zero_tool": bool(zero_tool[rid]),
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


def board_summary(placed: Mapping[str, Any], agent: str) -> dict[str, Any]:
    """The board block of summary.json from :func:`kit.audit.board.board_placement`'s result."""
    pairs, ranks = placed["pairs"], placed["ranks"]
    me = ranks[ranks["system"] == agent].iloc[0]
    comp = pairs[pairs["readout"] == "composite"]
    return {
        "agent": agent,
        "m": placed["m"],
        "rank_lo": int(me["rank_lo"]),
        "rank_hi": int(me["rank_hi"]),
        "n_systems": len(ranks),
        "composite": float(me["composite"]),
        "pairs": json_clean(pairs.to_dict("records")),
        "ranks": json_clean(ranks.to_dict("records")),
        "composite_refused": int((~comp["admissible"]).sum()),
        "composite_certified": int((comp["verdict"] == "certified").sum()),
        "synthetic": json_clean(placed.get("synthetic")),
    }


def evidence_note(cites: pd.DataFrame) -> str:
    """How many L2 labels rest on what the agent read, and the rule (for notes and the page)."""
    from kit.grade.citation_audit import EVIDENCE_RULE

    ev = cites["evidence"].value_counts()
    return (
        f"L2 evidence: {int(ev.get('tool_response', 0))} citation(s) scored against the tool "
        f"response the agent read, {int(ev.get('corpus', 0))} against the corpus passage, "
        f"{int(ev.get('no_passage', 0))} read with a title and no passage (not scored), "
        f"{int(ev.get('none', 0))} without a passage. " + EVIDENCE_RULE
    )


def build_summary(
    opts: Any,
    inputs: Any,
    ctx: Any,
    check: Any,
    cal: Any,
    flagged: Any,
    cites: pd.DataFrame,
    headline: list[dict[str, Any]],
    graded: Any,
    placed: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """summary.json (strict JSON) from the stages' outputs (:mod:`kit.audit.pipeline`)."""
    from kit import __version__
    from kit.grade.citation_audit import audit_rates

    card = ctx.card
    planted = None
    if inputs.truth is not None and inputs.planted_design is not None:
        planted = {
            "design": inputs.planted_design,
            "rows": planted_comparison(
                cites, inputs.truth, inputs.planted_design, headline, flagged.alpha, opts.level
            ),
        }
    runs = inputs.runs.runs
    summary = {
        "kit_version": __version__,
        "command": "kit audit",
        "inputs": inputs.hashes,
        "verifier": _verifier_entry(opts, card),
        "corpus": _corpus_entry(opts, inputs, ctx),
        "conformal": _conformal_entry(flagged, cal),
        "l2_rule": {"yes_at": check.rule.yes_at, "partial_at": check.rule.partial_at},
        "instrument": None if cal.instrument is None else dict(cal.instrument.__dict__),
        "level": opts.level,
        "seed": opts.seed,
        "counts": _counts(opts, inputs, check, cites),
        "unfinished_runs": unfinished_runs(runs),
        "headline": headline,
        "citation_rates": audit_rates(cites, opts.level).to_dict("records"),
        "checklist": None
        if graded.scores is None
        else {"judge": graded.judge, "n_scored": len(graded.scores), "threshold": 0.5},
        "board": None if placed is None else board_summary(placed, str(inputs.agent)),
        "planted": planted,
        "notes": _notes(opts, inputs, check, cal, flagged, cites, card),
    }
    return json_clean(summary)


def _verifier_entry(opts: Any, card: Mapping[str, Any]) -> dict[str, Any]:
    """summary.json's ``verifier``: the card's name, identity and rules, variant and device."""
    return {
        "name": card["name"],
        "variant": opts.variant,
        **identity_entry(card),  # onnx_sha256, or an LLM card's instrument_sha256
        "scoring_rule": card["scoring_rule"],
        "window_rule": card["window_rule"],
        "device": opts.device,
    }


def _corpus_entry(opts: Any, inputs: Any, ctx: Any) -> dict[str, Any]:
    """summary.json's ``corpus``: the corpora of L1 / L2 in resolution order."""
    from kit.audit.resolve import RESOLUTION_RULE
    from kit.corpus.catalog import describe

    chain = ctx.chain
    return {
        "name": opts.corpus,
        "description": "; ".join(c.description for c in chain.corpora),
        "n_papers": sum(c.n_documents() for c in chain.corpora),
        "simulated_outages": len(inputs.failed_lookups),
        "order": list(chain.order),
        "resolution": RESOLUTION_RULE,
        "corpora": [describe(c) for c in chain.corpora],
        "closed_world": ctx.closed_world,
        "reattribution": "BM25 candidates from the PubMedQA corpus (registry)",
    }


def _conformal_entry(flagged: Any, cal: Any) -> dict[str, Any]:
    """summary.json's ``conformal``: the threshold, its calibration and its guarantee."""
    t, promise = flagged.t, flagged.promise
    return {
        "alpha": flagged.alpha,
        "tau": t.tau,
        "k": t.k,
        "n_cal": t.n_cal,
        "cal_recall": t.cal_recall,
        "calibration": cal.meta,
        "rule": "flag iff s <= tau; catch >= 1 - alpha for unsupported citations "
        "exchangeable with the calibration negatives"
        + ("; Mondrian: tau = max over negative types" if t.rule == "mondrian" else ""),
        "guarantee": promise,
    }


def _counts(opts: Any, inputs: Any, check: Any, cites: pd.DataFrame) -> dict[str, Any]:
    """summary.json's ``counts``: runs, lines skipped, claims and citations by label."""
    from kit.audit.flags import FLAG_REASONS

    runs = inputs.runs.runs
    return {
        "runs": len(runs),
        "runs_in_file": inputs.n_in_file,
        "status": status_counts(runs),
        "limit": opts.limit,
        "skipped_lines": len(inputs.runs.skipped),
        "skipped": [
            {"line": s.line, "reason": s.reason, "field": s.field, "message": s.message}
            for s in inputs.runs.skipped
        ],
        "claims": check.claims.n_claims,
        "claims_citing": check.claims.n_citing,
        "unresolved_markers": check.claims.n_unresolved,
        "ambiguous_markers": check.claims.n_ambiguous,
        "citations": len(cites),
        "l1": {k: int((cites["l1"] == k).sum()) for k in ("found", "notfound", "transient")}
        | {"unchecked": int((cites["l1"] == "unchecked").sum())},
        "l2": {k: int((cites["l2"] == k).sum()) for k in ("yes", "partial", "no", "refused")},
        "evidence": {k: int((cites["evidence"] == k).sum()) for k in EVIDENCE},
        "unread_response_refs": check.unread_refs,
        "flagged": {k: int((cites["flag_reason"] == k).sum()) for k in FLAG_REASONS},
        "suggested": int((cites["suggested"] != "").sum()),
    }


def _notes(
    opts: Any,
    inputs: Any,
    check: Any,
    cal: Any,
    flagged: Any,
    cites: pd.DataFrame,
    card: Mapping[str, Any],
) -> list[str]:
    """summary.json's ``notes``: what the figures mean and which assumptions they rest on."""
    from kit.grade.citation_audit import CLUSTER_NOTE

    runs, promise = inputs.runs.runs, flagged.promise
    return (
        [
            CLUSTER_NOTE,
            (
                "the verifier is a similarity bi-encoder: it measures topical support, not "
                "entailment (a negated conclusion can score high)"
                if card.get("kind") == "bi-encoder"
                else f"the verifier is a {card.get('kind', 'model')}: {card['scoring_rule']}"
            ),
            "tau is meaningful only for calibration scores of this verifier and scoring rule"
            + ("" if cal.meta["same_verifier"] else "; this calibration source is EXTERNAL"),
            "the catch guarantee: " + promise["statement"] + " -- " + promise["condition"],
        ]
        + ([promise["shift"]["message"]] if promise["shift"]["warning"] else [])
        + [evidence_note(cites)]
        + (
            [
                "tau is calibrated on claim-vs-abstract pairs; scores against tool responses "
                "(another kind of passage) may not be exchangeable with them, so the catch "
                "guarantee is stated for corpus-scored citations"
            ]
            if (cites["evidence"] == "tool_response").any()
            else []
        )
        + (
            [
                f"{check.unread_refs} tool response(s) kept only as response_ref: no response "
                "store is read by this kit, so those citations fell back to the corpus passage"
            ]
            if check.unread_refs
            else []
        )
        + (
            [f"--limit {opts.limit}: the first {len(runs)} of {inputs.n_in_file} runs audited"]
            if opts.limit is not None
            else []
        )
    )
