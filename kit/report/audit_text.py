"""The `kit audit` result in words: the verdict sentences and the stdout lines (pure).

One home for what the report page and the terminal both say: metric names in words with a
one-line definition (:data:`METRIC_WORDS`), which wrong-paper number is the headline
(:func:`headline_wrong_paper`), the verdict a reader came for (:func:`verdict_sentences`),
honest wording of degenerate intervals (:func:`interval_caveat`), the gold-anchored rates
(:func:`gold_lines`) and the lines `kit audit` prints (:func:`audit_lines`). Summary dict in
(``summary.json``), strings out; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# metric id -> (name in words, one-line definition)
METRIC_WORDS: dict[str, tuple[str, str]] = {
    "fabrication_rate": (
        "citations of papers that do not exist",
        "L1 notfound / (found + notfound): the identifier is absent from a corpus that declares "
        "complete coverage of it; failed lookups excluded",
    ),
    "unchecked_citations": (
        "citations that could not be checked",
        "identifier outside every corpus's declared complete coverage; never counted as fabricated",
    ),
    "transient_lookups": (
        "lookups that failed (outage)",
        "excluded from every rate; never counted as fabricated",
    ),
    "wrong_paper_corrected": (
        "citations of a real paper that does not support the claim (corrected)",
        "verifier 'no' rate corrected for the verifier's own error rates measured on held-out "
        "labelled pairs (Rogan-Gladen)",
    ),
    "wrong_paper_rate": (
        "wrong paper: verifier says 'no' (uncorrected)",
        "L2 'no' / scored found citations, uncorrected (conservative: 'partial' not counted)",
    ),
    "wrong_paper_upper": (
        "wrong paper: verifier says 'no' or 'partial' (upper bound)",
        "L2 ('no' + 'partial') / scored found citations, uncorrected: an upper bound",
    ),
    "flag_rate": (
        "citations flagged for review",
        "conformal rule s <= tau on scored found citations: the review budget",
    ),
    "unverified_after_reattribution": (
        "flagged with no better paper found",
        "flagged and no re-attribution candidate scores above tau: marked [UNVERIFIED]",
    ),
    "solve_rate": ("tasks solved", "checklist score >= threshold (weighted criterion credits)"),
    "zero_tool_rate": ("runs that never used a tool", "tool-enabled runs with no tool call"),
    "error_rate": (
        "runs the harness failed on",
        "status error (a tool or the solver raised): counted, not audited as answers",
    ),
    "limit_rate": (
        "runs a limit cancelled",
        "status limit (message, token, time...): counted, not audited as answers",
    ),
    "non_attempt_rate": (
        "runs that did not attempt the task",
        "lexical non-attempt detector, over finished runs",
    ),
    "cite_rate": ("runs that cite", "runs with at least one citation"),
    "catch_rate_wrong_paper": (
        "planted wrong papers the flag rule catches",
        "flagged / planted wrong-paper citations (the guarantee's target)",
    ),
    "reattribution_to_true_paper": (
        "flagged wrong papers re-attributed to the true paper",
        "suggestion equals the planted true paper",
    ),
}

WRONG_PAPER = ("wrong_paper_corrected", "wrong_paper_rate", "wrong_paper_upper")


def metric_name(metric: str) -> str:
    """The metric in words (the id itself when it has none)."""
    return METRIC_WORDS.get(metric, (metric.replace("_", " "), ""))[0]


def metric_definition(metric: str) -> str:
    return METRIC_WORDS.get(metric, ("", ""))[1]


def headline_wrong_paper(headline: Sequence[Mapping[str, Any]]) -> str | None:
    """The wrong-paper number to lead with: the corrected rate when the verifier's error rates
    allowed a correction, else the uncorrected 'no' rate (the upper bound is evidence only)."""
    have = {m["metric"] for m in headline if m.get("estimate") is not None}
    for metric in WRONG_PAPER[:2]:
        if metric in have:
            return metric
    return None


def judged_headline(summary: Mapping[str, Any]) -> str | None:
    """The metric of the judge-relative headline table to mark as the headline: none when gold
    labels anchored a citation rate (the anchored rate leads the report, so the table is the
    instruments' evidence beside it), else :func:`headline_wrong_paper`."""
    block = summary.get("gold_anchored") or {}
    if any(str(r.get("metric", "")).startswith("wrong_paper") or r.get("metric") ==
           "unsupported_rate" for r in block.get("rates") or []):  # fmt: skip
        return None
    return headline_wrong_paper(summary.get("headline") or [])


def gold_leads(summary: Mapping[str, Any]) -> bool:
    """True when a gold-anchored rate is the report's headline (:func:`judged_headline`)."""
    return bool((summary.get("gold_anchored") or {}).get("rates")) and (
        judged_headline(summary) is None
    )


def _f(x: object, digits: int = 3) -> str:
    if x is None:
        return "—"
    try:
        return f"{float(x):.{digits}f}"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(x)


def pct(x: object) -> str:
    """A proportion as a percentage with one decimal ('—' when undefined)."""
    if x is None:
        return "—"
    return f"{100 * float(x):.1f}%"  # type: ignore[arg-type]


def interval_caveat(m: Mapping[str, Any]) -> str:
    """What a reader must know about an interval before reading it ('' when nothing)."""
    n = int(m.get("n") or 0)
    if m.get("estimate") is None:
        return f"undefined: n = {n}, nothing to estimate"
    lo, hi = m.get("lo"), m.get("hi")
    if lo is not None and hi is not None and float(hi) - float(lo) <= 0:
        return (
            f"zero-width interval from n = {n}: the method cannot measure its uncertainty "
            "here; read it as unknown, not exact"
        )
    if n < 10:
        return f"only n = {n}: the interval is wide by necessity"
    return ""


def estimate_ci(m: Mapping[str, Any], as_pct: bool = False) -> str:
    """``0.083 [0.029, 0.218]`` (or ``8.3% [2.9, 21.8]``); 'undefined (n = 0)' when undefined."""
    if m.get("estimate") is None:
        return f"undefined (n = {m.get('n', 0)})"
    if as_pct:
        lo, hi = float(m["lo"]) * 100, float(m["hi"]) * 100
        return f"{pct(m['estimate'])} [{lo:.1f}, {hi:.1f}]"
    return f"{_f(m['estimate'])} [{_f(m['lo'])}, {_f(m['hi'])}]"


def _by_metric(summary: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {m["metric"]: m for m in summary.get("headline") or []}


def _count(m: Mapping[str, Any], of: str) -> str:
    return f"{m['k']} of {m['n']} {of}"


def board_sentence(board: Mapping[str, Any] | None, synthetic: bool = False) -> str | None:
    """The agent's place on the board in one sentence (None without a board)."""
    if not board:
        return None
    lo, hi, n = board["rank_lo"], board["rank_hi"], board["n_systems"]
    where = f"rank {lo}" if lo == hi else f"somewhere from rank {lo} to {hi}"
    comp = [p for p in board.get("pairs") or [] if p.get("readout") == "composite"]
    better = sum(
        1 for p in comp if p.get("verdict") == "certified" and p.get("agent_better") == "yes"
    )
    worse = sum(
        1 for p in comp if p.get("verdict") == "certified" and p.get("agent_better") == "no"
    )
    refused = sum(1 for p in comp if not p.get("admissible", True))
    label = "SYNTHETIC board: " if synthetic else ""
    return (
        f"{label}{board['agent']} places {where} of {n} systems (certified rank interval "
        f"[{lo}, {hi}], composite {_f(board.get('composite'))}): certified better than {better} "
        f"and worse than {worse} of {len(comp)} systems on the composite"
        + (f", {refused} comparison(s) refused" if refused else "")
        + f" (Bonferroni m = {board.get('m')})"
    )


def verdict_sentences(summary: Mapping[str, Any], synthetic_board: bool = False) -> list[str]:
    """The answer a reader came for, as plain sentences computed from ``summary.json``."""
    h = _by_metric(summary)
    c = summary["counts"]
    out: list[str] = []
    parts: list[str] = []
    fab = h.get("fabrication_rate")
    if fab is not None:
        parts.append(
            f"{estimate_ci(fab, True)} cite papers that do not exist "
            f"({_count(fab, 'checked identifiers')})"
            if fab.get("estimate") is not None
            else "whether cited papers exist could not be checked (no identifier resolved)"
        )
    key = headline_wrong_paper(summary.get("headline") or [])
    if key is not None:
        wp = h[key]
        how = (
            "corrected for the verifier's errors"
            if key == "wrong_paper_corrected"
            else "verifier 'no', uncorrected"
        )
        if gold_leads(summary):
            how += "; the verifier's judgement: the gold-anchored rate is the headline"
        upper = h.get("wrong_paper_upper")
        extra = (
            f"; at most {estimate_ci(upper, True)} counting 'partial'"
            if upper is not None and upper.get("estimate") is not None
            else ""
        )
        parts.append(
            f"{estimate_ci(wp, True)} cite a real paper that does not support the claim "
            f"({how}; {wp['n']} scored{extra})"
        )
    if not c["citations"]:  # an empty result is a result: say so, estimate nothing
        out.append(
            f"None of the {c['runs']:,} audited run(s) cites anything: no citation to audit."
        )
    else:
        lead = f"Of {c['citations']:,} citations in {c['runs']:,} runs: "
        out.append(lead + ("; ".join(parts) if parts else "no citation could be audited") + ".")
    refused = int((c.get("l2") or {}).get("refused", 0))
    if refused:
        out.append(
            f"{refused:,} citation(s) have no support score: the verifier's endpoint refused the "
            "question (l2 'refused', score empty -- never a number); left out of every rate and "
            "flagged for review."
        )
    status = c.get("status") or {}
    if status.get("error") or status.get("limit"):
        out.append(
            f"{status['error'] + status['limit']:,} of {c['runs']:,} runs did not finish in "
            f"their harness ({status['error']:,} errored, {status['limit']:,} cancelled by a "
            "limit): counted apart, never as non-attempts, and no citation is read from them."
        )
    g = (summary.get("conformal") or {}).get("guarantee")
    if g:
        target = g.get("target_catch")
        cal = (g.get("calibration") or {}).get("name", "the calibration sample")
        rb = g.get("review_budget")
        budget = (
            f", flagging {pct(rb['estimate'])} [{100 * rb['lo']:.1f}, {100 * rb['hi']:.1f}] of "
            "audited citations for review"
            if rb
            else ""
        )
        catch = f">= {100 * float(target):g}%" if target is not None else "a share"
        out.append(
            f"The flag rule (s <= tau = {_f(g.get('tau'), 4)}) catches {catch} of unsupported "
            f"citations if they resemble {cal}{budget}."
        )
        if (g.get("shift") or {}).get("warning"):
            out.append(f"WARNING: {g['shift']['message']}.")
    solve = h.get("solve_rate")
    if solve is not None and solve.get("estimate") is not None:
        out.append(f"Tasks solved (checklist): {estimate_ci(solve, True)} of {solve['n']}.")
    b = board_sentence(summary.get("board"), synthetic_board)
    if b:
        out.append(b + ".")
    return out


def _planted_line(r: Mapping[str, Any]) -> str:
    cov = r.get("covered")
    rule = str(r.get("rule") or "")
    verdict = (
        f"not checked ({rule})"
        if cov is None
        else (f"check holds ({rule})" if cov else f"CHECK FAILS ({rule})")
    )
    got = (
        f"recovered {_f(r.get('estimate'))} [{_f(r.get('lo'))}, {_f(r.get('hi'))}]"
        if r.get("lo") is not None
        else f"recovered {_f(r.get('estimate'))}"
    )
    realised = r.get("realised")
    drawn = f" (this draw {_f(realised)})" if realised is not None else ""
    planted = "no planted value" if r.get("planted") is None else f"planted {_f(r['planted'])}"
    return f"{metric_name(r['metric'])}: {planted}{drawn}, {got}: {verdict}"


def gold_lines(block: Any, level: float) -> list[str]:
    """The audit's stdout lines for ``gold_anchored``: the anchored rates first (with gold), or
    whose judgement the rates are (without)."""
    if not block:
        return []
    judged = "; ".join(f"{m.replace('_', ' ')}: {who}" for m, who in block["judged_by"].items())
    if not block["rates"]:
        return [
            f"whose judgement: {judged}; no gold labels given, so these rates are the instruments' "
            "(kit audit --gold GOLD.csv anchors them on human labels)"
        ]
    pct = f"{100 * level:.4g}%"
    how = "cross-PPI where adapted, else PPI++" if block.get("adapted") else "PPI++"
    lines = [f"gold-anchored rates ({how}, {pct} CI; assumption: {block['assumption']}):"]
    for r in block["rates"]:
        rows = {row["method"]: row for row in r["rows"]}
        p, j, g = rows["ppi"], rows["judge_only"], rows["gold_only"]
        name = r["metric"].replace("_", " ") + ("" if r["system"] is None else f" ({r['system']})")
        if "cross_ppi" in rows:
            lines += cross_lines(name, rows["cross_ppi"], r)
            name = "  beside it, PPI++ on the verifier's own labels"
        lines.append(
            f"  {name}: {p['estimate']:.3f} [{p['ci_low']:.3f}, {p['ci_high']:.3f}] anchored on "
            f"{r['n_gold']} gold of {r['n_judged']} judged (lambda {p['lambda']:.2f}); "
            f"{r['judge']} alone {j['estimate']:.3f} [{j['ci_low']:.3f}, {j['ci_high']:.3f}]; "
            f"gold alone {g['estimate']:.3f} [{g['ci_low']:.3f}, {g['ci_high']:.3f}]"
        )
        lines.append(
            f"    intervals: PPI++ and gold alone {p['interval']}; judge alone {j['interval']}"
        )
        if r.get("by_kind"):
            lines.append(
                "    of the gold citations (gold alone): "
                + "; ".join(
                    f"{k['kind'].replace('_', ' ')} {k['estimate']:.3f} [{k['ci_low']:.3f}, "
                    f"{k['ci_high']:.3f}] ({k['count']} of {k['n_gold']})"
                    for k in r["by_kind"]
                )
            )
        plan = r.get("plan")
        if plan:
            lines.append(plan_line(plan))
        lines += [f"    warning: {w}" for w in r["warnings"]]
    left = block.get("not_anchored") or []
    if left:
        lines.append(
            "  not anchored (no gold rows): "
            + "; ".join(f"{m.replace('_', ' ')} is {block['judged_by'][m]}'s" for m in left)
        )
    return lines


def plan_line(plan: Mapping[str, Any]) -> str:
    """``--half-width``'s plan of one rate, in words."""
    clustered = plan["design_effect"] > 1.0
    deff = f", design effect by run {plan['design_effect']:.2f}" if clustered else ""
    if plan["n_gold"] is None:
        return (
            f"    plan: +-{plan['target_half_width']:g} is out of reach with "
            f"{plan['n_judged']} judged (best projected +-{plan['half_width']:.4f}); judge more"
        )
    return (
        f"    plan: +-{plan['target_half_width']:g} needs about {plan['n_gold']} gold of "
        f"{plan['n_judged']} judged (PPI++ on this verifier, from this pilot of "
        f"{plan['pilot_n']}{deff}; gold alone would need {plan['n_gold_only']})"
    )


def cross_lines(name: str, x: Mapping[str, Any], rate: Mapping[str, Any]) -> list[str]:
    """The lead lines of a cross-fitted rate (``--adapt``): its estimate and interval, how the
    verifier was adapted, and the adapted judge's AUC against the parent's on the gold."""
    a = rate["adaptation"]
    got, parent = a["auc_adapted"], a["auc_parent"]
    aucs = "; ".join(
        f"{kind.replace('_', ' ')} {_f(got.get(kind))} (parent {_f(parent.get(kind))})"
        for kind in ("unsupported", "contradicted", "not_enough_info")
        if kind in got
    )
    return [
        f"  {name}: {x['estimate']:.3f} [{x['ci_low']:.3f}, {x['ci_high']:.3f}] cross-fitted on "
        f"{rate['n_gold']} gold of {rate['n_judged']} judged (verifier adapted by {a['method']} "
        f"in {a['folds']} folds of {a['units']} units)",
        f"    adapted judge's AUC on the held-out gold, within folds: {aucs}",
        f"    interval: {x['interval']}",
    ]


def audit_lines(
    summary: Mapping[str, Any],
    out: object,
    cache_hits: int,
    cache_misses: int,
    guarantee_text: str,
    synthetic_board: bool = False,
) -> list[str]:
    """What `kit audit` prints: the verdict first, then the numbers, every value formatted
    (no Python repr); ``guarantee_text`` is :func:`kit.guard.conformal.calibration.guarantee_line`."""
    c, conf = summary["counts"], summary["conformal"]
    flagged = ", ".join(f"{k} {v}" for k, v in c["flagged"].items())
    lines = [
        f"audited {c['runs']} runs, {c['citations']} citations (tau = {_f(conf['tau'], 4)} at "
        f"alpha = {conf['alpha']:g}); flagged: {flagged}; score store {cache_hits} hit(s), "
        f"{cache_misses} scored -> {out}",
    ]
    if c.get("limit") is not None:
        lines.insert(
            0, f"--limit {c['limit']}: auditing the first {c['runs']} of {c['runs_in_file']} runs"
        )
    block = summary.get("gold_anchored")
    anchored = gold_lines(block, float(summary.get("level") or 0.95))
    if block and block.get("rates"):  # with gold: the gold-anchored rates lead the report
        lines += ["", *anchored]
        anchored = []
    lines += ["", *verdict_sentences(summary, synthetic_board), *anchored]
    ev = c.get("evidence")
    if ev:
        lines.append(
            f"L2 evidence: {ev['tool_response']} against the tool response the agent read, "
            f"{ev['corpus']} against the corpus passage, "
            f"{ev.get('no_passage', 0)} read with a title and no passage (not scored), "
            f"{ev['none']} without a passage"
        )
    lines += [
        "",
        f"guarantee: {guarantee_text}",
    ]
    for row in (conf.get("guarantee") or {}).get("per_type") or []:
        lines.append(f"  {row['statement']}")
    if gold_leads(summary):
        lines.append(
            "judge-relative numbers (95% CI; k / n; the headline is the gold-anchored rate above):"
        )
    else:
        lines.append("headline numbers (95% CI; k / n):")
    key = judged_headline(summary)
    rows = [m for m in summary.get("headline") or []]
    width = max((len(metric_name(m["metric"])) for m in rows), default=0)
    for m in rows:
        mark = "  <- headline" if m["metric"] == key else ""
        caveat = interval_caveat(m)
        lines.append(
            f"  {metric_name(m['metric']):<{width}}  {estimate_ci(m):<22}  {m['k']} / {m['n']}"
            + (f"  ({caveat})" if caveat else "")
            + mark
        )
    if summary.get("planted"):
        lines.append("recovered vs planted:")
        lines += [f"  {_planted_line(r)}" for r in summary["planted"]["rows"]]
    b = summary.get("board")
    if b:
        lines.append("board placement:")
        lines.append(f"  {board_sentence(b, synthetic_board)}")
    return lines
