"""The `kit audit` report as one self-contained HTML page (no external resource of any kind).

Pure rendering: the audit summary, the citation table and the passages in, an HTML string out.
The page opens with the verdict in words (``id=verdict``, :func:`kit.report.audit_text.
verdict_sentences`: what share of citations name papers that do not exist, what share name a
real paper that does not support the claim, what the flag rule catches and under which
condition), then the evidence. Sections: headline numbers named in words with a one-line
definition, the headline wrong-paper number marked, intervals that say when they are
degenerate (n = 1), and what they depend on (verifier, variant, alpha, tau, calibration set); recovered vs planted (when the runs are a planted set); the
flagged citations with claim and cited passage side by side and the re-attribution suggestion;
the board placement with the inline-SVG rank-interval chart of :mod:`kit.report.board_page`
(labelled SYNTHETIC when the board's rows were generated); a glossary; input hashes and kit version in the footer. Text that quotes a URL is written with its ``//``
as HTML entities so the page source names no external address (it renders unchanged).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from kit.report.audit_text import (
    estimate_ci,
    gold_leads,
    gold_lines,
    interval_caveat,
    judged_headline,
    metric_definition,
    metric_name,
    verdict_sentences,
)
from kit.report.board_page import CSS as BOARD_CSS
from kit.report.board_page import VERDICT_STYLE, explain_pair, rank_chart_svg, synthetic_banner
from kit.report.glossary import glossary_html

MAX_FLAGGED_ROWS = 200
CSS = (
    BOARD_CSS
    + """
.pair{display:grid;grid-template-columns:1fr 1fr;gap:.6rem}
.passage{max-height:9rem;overflow:auto;background:#fafafa;border:1px solid #eee;padding:.3rem;font-size:.8rem}
.claim{font-size:.85rem} .ok{color:#1b7837} .bad{color:#b2182b}
.flagrow{border-bottom:1px solid #ddd;padding:.5rem 0}
.answer p{margin:.3rem 0} tr.headline td{background:#eef4fb;font-weight:600}
.tag{font-size:.72rem;color:#fff;background:#2166ac;border-radius:.5rem;padding:0 .4rem;white-space:nowrap}
.id{color:#888;font-size:.72rem;font-family:ui-monospace,monospace}
"""
)


def _e(value: object) -> str:
    text = html.escape("" if value is None else str(value))
    return text.replace("://", ":&#47;&#47;")


def _identity(verifier: dict[str, Any]) -> str:
    """'onnx sha256 0123...' or 'instrument sha256 0123...' (an LLM card): the first 16 hex."""
    field = "instrument_sha256" if "instrument_sha256" in verifier else "onnx_sha256"
    return f"{field.replace('_', ' ')} {_e(str(verifier.get(field, ''))[:16])}"


def _num(value: object, digits: int = 3) -> str:
    if value is None:
        return "—"
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return _e(value)
    if f != f:
        return "—"
    return f"{f:.{digits}f}"


def _ci(row: Mapping[str, Any]) -> str:
    if row.get("estimate") is None:
        return "undefined (n = 0)"
    return estimate_ci(row)


def _headline(summary: Mapping[str, Any]) -> str:
    key = judged_headline(summary)
    rows = []
    for m in summary["headline"]:
        extra = ""
        if m.get("cluster_bootstrap"):
            lo, hi = m["cluster_bootstrap"]
            extra = f"; cluster bootstrap over runs [{_num(lo)}, {_num(hi)}]"
            if lo is not None and hi is not None and float(hi) - float(lo) <= 0:
                extra += " (zero width: too few runs to resample)"
        if m.get("mean_score") is not None:
            extra += f"; mean score {_num(m['mean_score'])}"
        caveat = interval_caveat(m)
        tag = ""
        if m["metric"] == key:
            tag = " <span class=tag>headline</span>"
        elif m["metric"].startswith("wrong_paper_") and key is not None:
            tag = " <span class=meta>(evidence for the headline)</span>"
        rows.append(
            f"<tr{' class=headline' if m['metric'] == key else ''} id=metric-{_e(m['metric'])}>"
            f"<td>{_e(metric_name(m['metric']))}{tag}<br><span class=id>{_e(m['metric'])}</span>"
            f"</td><td class=num>{_ci(m)}</td>"
            f"<td class=num>{m['k']} / {m['n']}</td><td>{_e(m['ci'])}{_e(extra)}"
            + (f"<br><b class=bad>{_e(caveat)}</b>" if caveat else "")
            + f"</td><td>{_e(metric_definition(m['metric']) or m['note'])}</td></tr>"
        )
    which = (
        f"<p class=meta>Which wrong-paper number to read: <b>{_e(metric_name(key))}</b> "
        f"(<span class=id>{_e(key)}</span>) is the headline; "
        + (
            "the uncorrected 'no' rate and the 'no' + 'partial' upper bound are the evidence "
            "it was corrected from."
            if key == "wrong_paper_corrected"
            else "no correction for the verifier's errors was possible (its error rates on "
            "held-out pairs do not separate), so the uncorrected 'no' rate leads and the "
            "'no' + 'partial' rate is an upper bound."
        )
        + "</p>"
        if key is not None
        else "<p class=meta>These numbers are relative to the instruments that judged them: "
        "the headline is the gold-anchored rate above, which labels people gave anchor.</p>"
        if gold_leads(summary)
        else ""
    )
    return (
        which + "<table id=headline-table><tr><th>metric</th><th>estimate [95% CI]</th>"
        "<th>k / n</th><th>interval</th><th>definition</th></tr>" + "".join(rows) + "</table>"
    )


def _depends(summary: Mapping[str, Any]) -> str:
    v, c = summary["verifier"], summary["conformal"]
    cal = c["calibration"]
    warn = (
        ""
        if cal.get("same_verifier")
        else " <b class=bad>(external calibration: tau is meaningful only if these scores come "
        "from this verifier)</b>"
    )
    rule = summary["l2_rule"]
    return (
        "<p class=meta>These numbers depend on: verifier <b>"
        f"{_e(v['name'])}</b> ({_e(v['variant'])}, {_identity(v)}…, "
        f"device {_e(v['device'])}); conformal rule flag iff s &le; tau with alpha = "
        f"{_num(c['alpha'], 3)}, tau = {_num(c['tau'], 4)} (k = {c['k']} of n_cal = "
        f"{c['n_cal']}); calibration <b>{_e(cal['source'])}</b> (sha256 "
        f"{_e(cal['sha256'][:16])}…) — {_e(cal['construction'])}{warn}; L2 labels yes &ge; "
        f"{_num(rule['yes_at'], 2)}, partial &ge; {_num(rule['partial_at'], 2)}; corpus "
        f"{_e(summary['corpus']['name'])} ({summary['corpus']['n_papers']} papers){_coverage(summary)}.</p>"
    )


def _coverage(summary: Mapping[str, Any]) -> str:
    """Each corpus's declared coverage: notfound only inside a complete one, else unchecked."""
    parts = [
        f"{c['name']}: {cov['scheme']} {cov['kind']}"
        + (f" {cov['lo']}..{cov['hi']}" if cov["kind"] == "complete" else "")
        + f" ({cov['statement']})"
        for c in summary["corpus"].get("corpora", [])
        for cov in c["coverage"]
    ]
    if not parts:
        return ""
    return (
        "; declared coverage (an identifier absent from a sample is <b>unchecked</b>, never "
        "fabricated): " + _e("; ".join(parts))
    )


def _guarantee(summary: Mapping[str, Any]) -> str:
    """The catch guarantee with its condition, next to tau (issue 13): never a bare 'catch >= 90%'.

    Calibration source (name, sha256, n, negative types), false-flag rate on supported
    calibration citations with its Wilson CI, review budget, per-type (Mondrian) statements and
    the shift check, each in an element with an id so a browser test can read it back.
    """
    g = summary["conformal"]["guarantee"]
    cal = g["calibration"]
    types = ", ".join(cal["negative_types"]) or "not recorded"
    ff = g["false_flag_rate"]
    ff_text = (
        f"{_num(ff['estimate'])} [{_num(ff['lo'])}, {_num(ff['hi'])}] ({ff['k']} / {ff['n']} "
        f"supported calibration citations flagged; Wilson {round(100 * ff['level'])}% CI)"
        if ff
        else f"not measurable ({_e(g['false_flag_note'])})"
    )
    rb = g["review_budget"]
    rb_text = (
        f"{_num(rb['estimate'])} [{_num(rb['lo'])}, {_num(rb['hi'])}] ({rb['k']} / {rb['n']} "
        "audited citations with a score flagged)"
        if rb
        else "undefined (no audited citation has a score)"
    )
    sh = g["shift"]
    shift = (
        f"<p id=shift-check class=bad><b>{_e(sh['message'])}</b></p>"
        if sh["warning"]
        else f"<p id=shift-check class=meta>Shift check: {_e(sh['message'])} ({_e(sh['method'])}).</p>"
    )
    per = "".join(f"<li>{_e(r['statement'])}</li>" for r in g["per_type"])
    verifier = cal.get("verifier") or {}
    return (
        "<div id=guarantee>"
        f"<p><b>Guarantee:</b> <span id=guarantee-statement>{_e(g['statement'])}</span>.</p>"
        f"<p class=meta>Condition: <span id=guarantee-condition>{_e(g['condition'])}</span>. "
        f"Rule: {_e(g['rule'])}, flag iff s &le; tau = {_num(g['tau'], 4)} at alpha = "
        f"{_num(g['alpha'], 3)}.</p>"
        + (f"<ul id=guarantee-per-type>{per}</ul>" if per else "")
        + "<table><tr><th>calibration source</th><td id=calibration-source>"
        f"{_e(cal['name'])} ({_e(cal['kind'])}); sha256 {_e(cal['sha256'])}; n = "
        f"{cal['n_unsupported']} unsupported, {cal['n_supported']} supported; negative types: "
        f"{_e(types)}"
        + (f"; verifier {_e(verifier.get('name'))} ({_identity(verifier)}…)" if verifier else "")
        + "</td></tr>"
        f"<tr><th>false-flag rate on supported citations</th><td id=false-flag-rate>{ff_text}"
        "</td></tr>"
        f"<tr><th>review budget (flag rate on audited citations)</th><td id=review-budget>"
        f"{rb_text}</td></tr></table>" + shift + "</div>"
    )


def _planted(summary: Mapping[str, Any]) -> str:
    p = summary.get("planted")
    if not p:
        return ""
    rows = []
    for r in p["rows"]:
        cov = r.get("covered")
        mark = (
            "<span class=meta>not checked (no interval)</span>"
            if cov is None
            else ("<span class=ok>yes</span>" if cov else "<b class=bad>NO</b>")
        )
        ci = "" if r.get("lo") is None else f"[{_num(r['lo'])}, {_num(r['hi'])}]"
        rows.append(
            f"<tr><td>{_e(metric_name(r['metric']))}<br><span class=id>{_e(r['metric'])}</span>"
            f"</td><td class=num>{_num(r['planted'])}</td>"
            f"<td class=num>{_num(r.get('realised'))}</td>"
            f"<td class=num>{_num(r['estimate'])}</td><td class=num>{ci}</td>"
            f"<td>{mark}</td><td>{_e(r['rule'])}</td></tr>"
        )
    d = p["design"]
    design = ", ".join(f"{_e(k)} = {_e(d[k])}" for k in sorted(d))
    return (
        "<h2>Recovered vs planted</h2>"
        f"<p class=meta>Planted-truth set (kit grade planted): {design}.</p>"
        "<table><tr><th>metric</th><th>planted (design)</th><th>realised (this draw)</th>"
        "<th>recovered</th><th>95% CI</th>"
        "<th>covered</th><th>check</th></tr>" + "".join(rows) + "</table>"
    )


def _marked(text: str, window: str | None) -> str:
    """``text`` escaped, with the first occurrence of ``window`` (the deciding window) in
    <mark>; the text alone when the window is not in it verbatim."""
    if not window or window not in text:
        return _e(text)
    i = text.index(window)
    return f"{_e(text[:i])}<mark>{_e(window)}</mark>{_e(text[i + len(window) :])}"


def _flagged(
    cites: pd.DataFrame, passages: Mapping[str, str], windows: Mapping[str, str] | None = None
) -> str:
    from kit.report.review_queue import review_order

    f = review_order(cites[cites["flagged"]])
    windows = windows or {}
    if f.empty:
        return "<h2>Flagged citations</h2><p>None.</p>"
    parts = [
        f"<h2>Flagged citations ({len(f)}): the review queue</h2>",
        "<p class=meta>In the order to review them: identifiers that do not exist (notfound) "
        "first, then the conformal flags (score_at_or_below_tau) by support score, lowest "
        "first. Claim and cited passage side by side; the highlighted window is the one that "
        "decided the score (s = max over windows). A suggestion is BM25's best other paper, "
        "shown only when the verifier scores it above tau; nothing is deleted.</p>",
    ]
    for r in f.head(MAX_FLAGGED_ROWS).to_dict("records"):
        sugg = (
            f"suggest <b class=ok>{_e(r['suggested'])}</b> (s = {_num(r['candidate_score'])})"
            if r["suggested"]
            else (
                f"[{_e(r['citation'])} UNVERIFIED]"
                + (
                    f"; best candidate {_e(r['candidate'])} s = {_num(r['candidate_score'])}"
                    if r["candidate"]
                    else ""
                )
            )
        )
        text = passages.get(str(r["value"]), "")
        window = windows.get(f"{r['run_id']}/{r['claim_no']}/{r['citation']}")
        parts.append(
            "<div class=flagrow>"
            f"<div class=meta>run {_e(r['run_id'])} · {_e(r['citation'])} · L1 {_e(r['l1'])} · "
            f"L2 {_e(r['l2'] or '—')} · s = {_num(r['support_score'])} · "
            f"<b class=bad>{_e(r['flag_reason'])}</b> · {sugg}</div>"
            f"<div class=pair><div class=claim>{_e(r['claim'])}</div>"
            f"<div class=passage>{_marked(text, window) if text else '<i>no passage in the corpus</i>'}"
            "</div>"
            "</div></div>"
        )
    if len(f) > MAX_FLAGGED_ROWS:
        parts.append(f"<p class=meta>{len(f) - MAX_FLAGGED_ROWS} more in citations.csv.</p>")
    return "".join(parts)


def board_synthetic(
    summary: Mapping[str, Any], ranks: pd.DataFrame | None = None
) -> Mapping[str, Any] | None:
    """The SYNTHETIC record of the board the agent was placed on, or None: the summary's
    ``board.synthetic`` (set by :func:`kit.audit.board.board_placement` from the rows'
    ``synthetic:`` entry hash). ``ranks`` is accepted for the callers' convenience, unused."""
    b = summary.get("board") or {}
    rec = b.get("synthetic")
    return rec if isinstance(rec, Mapping) and rec.get("synthetic") else None


def _board(summary: Mapping[str, Any], ranks: pd.DataFrame | None) -> str:
    b = summary.get("board")
    if not b or ranks is None:
        return ""
    synthetic = board_synthetic(summary, ranks)
    rows = []
    for p in b["pairs"]:
        colour, label = VERDICT_STYLE.get(p["verdict"], ("#666", p["verdict"]))
        why = explain_pair({**p, "gap": p.get("agent_gap")})
        rows.append(
            f"<tr><td>{_e(p['other'])}</td><td>{_e(p['readout'])}</td>"
            f"<td>{'admissible' if p['admissible'] else '<b class=bad>refused</b>'}</td>"
            f"<td><span class=badge style='background:{colour}'>{_e(label)}</span></td>"
            f"<td>{_e(p['agent_better'])}</td><td class=num>{_num(p['agent_gap'])}</td>"
            f"<td class=num>{_num(p['q'])}</td><td>{_e(why)}</td></tr>"
        )
    lo, hi = b["rank_lo"], b["rank_hi"]
    return (
        "<h2 id=board-placement>Board placement"
        + (" (SYNTHETIC board)" if synthetic else "")
        + "</h2>"
        + synthetic_banner(synthetic)
        + f"<p>Agent <b>{_e(b['agent'])}</b>: certified rank interval "
        f"<b class=nowrap>[{lo}, {hi}]</b> of {b['n_systems']} systems (composite "
        f"{_num(b['composite'])}; Bonferroni m = {b['m']}).</p>"
        + rank_chart_svg(ranks, synthetic=synthetic is not None)
        + "<table><tr><th>vs</th><th>readout</th><th>admissibility</th><th>verdict</th>"
        "<th>agent better</th><th>gap (agent − other)</th><th>q</th><th>reason</th></tr>"
        + "".join(rows)
        + "</table>"
    )


GLOSSARY = (
    "L1",
    "L2",
    "tau",
    "alpha",
    "catch",
    "Wilson CI",
    "Rogan-Gladen",
    "gap",
    "q",
    "ε_outside",
    "rank interval",
    "certified",
    "undecided",
    "refused",
    "SYNTHETIC",
)


def _unfinished(summary: Mapping[str, Any]) -> str:
    """How many runs the harness finished, failed on (error) or cancelled (limit), and which:
    such runs are counted apart, never as non-attempts, and their text is not audited."""
    status = summary["counts"].get("status")
    if status is None:
        return ""
    runs = summary.get("unfinished_runs") or []
    head = (
        f"<p id=run-status class=meta>Run status in the harness: {status['ok']} finished, "
        f"<b>{status['error']} errored</b>, <b>{status['limit']} cancelled by a limit</b>."
    )
    if not runs:
        return head + "</p>"
    rows = "".join(
        f"<tr><td class=id>{_e(r['run_id'])}</td><td>{_e(r['model'])}</td>"
        f"<td class=id>{_e(r['task_id'])}</td><td>{_e(r['status'])}</td><td>{_e(r['detail'])}</td></tr>"
        for r in runs
    )
    return (
        head + " Their text is no answer: no claim or citation is read from it, and they are "
        "counted apart from non-attempts (error_rate, limit_rate).</p>"
        "<h2>Runs the harness did not finish</h2><table id=unfinished-runs><tr><th>run</th>"
        "<th>model</th><th>task</th><th>status</th><th>what happened</th></tr>" + rows + "</table>"
    )


def _gold(summary: Mapping[str, Any]) -> tuple[str, str]:
    """(before the verdict, after it): with gold labels the gold-anchored rates lead the page;
    without, one line after the verdict says whose judgement the rates are (the same lines the
    console prints, :func:`kit.report.audit_text.gold_lines`)."""
    block = summary.get("gold_anchored")
    lines = gold_lines(block, float(summary.get("level") or 0.95))
    if not lines:
        return "", ""
    if block.get("rates"):
        head, *rows = lines
        items = "".join(f"<li>{_e(r.strip())}</li>" for r in rows)
        return (
            f"<div id=gold-anchored><h2>Gold-anchored rates</h2><p>{_e(head)}</p><ul>{items}</ul></div>",
            "",
        )
    return "", f"<p id=whose-judgement>{_e(lines[0])}</p>"


def render_audit_page(
    summary: Mapping[str, Any],
    cites: pd.DataFrame,
    ranks: pd.DataFrame | None,
    passages: Mapping[str, str] | None = None,
    title: str = "Agent audit",
    windows: Mapping[str, str] | None = None,
) -> str:
    """The whole page as a string (deterministic for the same inputs)."""
    c = summary["counts"]
    models = sorted(set(cites["model"])) if len(cites) else []
    inputs: Sequence[str] = [
        f"{_e(k)}: {_e(v['path'])} sha256 {_e(v['sha256'])}"
        for k, v in sorted(summary["inputs"].items())
    ]
    synthetic = board_synthetic(summary, ranks) is not None
    verdict = "".join(f"<p>{_e(line)}</p>" for line in verdict_sentences(summary, synthetic))
    gold_lead, gold_tail = _gold(summary)
    body = [
        f"<h1>{_e(title)}</h1>",
        gold_lead,
        f"<div id=verdict class=answer>{verdict}{gold_tail}</div>",
        f"<p class=meta>{c['runs']} runs ({c['skipped_lines']} line(s) skipped), "
        f"{c['citations']} citations; models: {_e(', '.join(models) or '—')}. L1: "
        + ", ".join(f"{_e(k)} {v}" for k, v in c["l1"].items())
        + "; L2: "
        + ", ".join(f"{_e(k)} {v}" for k, v in c["l2"].items())
        + f"; re-attribution suggestions: {c['suggested']}.</p>",
        _unfinished(summary),
        "<h2>The evidence: headline numbers</h2>",
        _depends(summary),
        _guarantee(summary),
        _headline(summary),
        _planted(summary),
        _board(summary, ranks),
        _flagged(cites, passages or {}, windows),
        "<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in summary["notes"]) + "</ul>",
        glossary_html(GLOSSARY),
        f"<footer>kit {_e(summary['kit_version'])} · seed {summary['seed']} · inputs: "
        + "<br>".join(inputs)
        + "</footer>",
    ]
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        + "".join(body)
        + "</body></html>\n"
    )
