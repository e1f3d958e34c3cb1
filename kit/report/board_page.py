"""The certified board as one self-contained HTML page (no external resource of any kind).

Pure rendering: frames and metadata in, an HTML string out. The page answers first: how many
pairs are certified / refused / undecided at alpha and the top of the board with rank
intervals, then the evidence. The rank-interval chart is inline SVG (like the paper's Figure 1:
one bar per system from rank_lo to rank_hi); the pair table shows every verdict with the reason
in words (why a pair is undecided or refused), sortable (click a header) and filterable (text,
verdict, readout; also from the address, ``board.html#verdict=refused&readout=composite&sort=gap``) by a
few lines of inline JavaScript; a glossary; the validity report of ``kit certify --validate``
when there is one; a SYNTHETIC banner when the scores were generated; the footer names the data
hashes, alpha, the command line and kit version the page was built from.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from kit.report.glossary import glossary_html

VERDICT_STYLE = {
    "certified": ("#1b7837", "certified"),
    "undecided_sampling": ("#b8860b", "undecided: sampling-limited"),
    "undecided_attribution": ("#8c510a", "undecided: attribution-limited"),
    "refused": ("#b2182b", "refused (inadmissible)"),
    "too_few_tasks": ("#666666", "too few common tasks"),
    "too_few_clusters": ("#666666", "too few clusters"),
    "too_little_variation": ("#666666", "too little variation (se = 0)"),
}

# Definition 1's machine-readable admission reasons, in words.
ADMISSION_WORDS = {
    "exact": "identical entry conditions (ε_outside = 0)",
    "within_tolerance": "entries differ; nuisance radius within the declared tolerance",
    "backbone_differs": "backbones differ under a scaffold window",
    "no_nuisance_constants": "entries differ and the design gives no nuisance constants",
    "no_tolerance": "no tolerance declared for this readout",
    "tolerance_unusable": "declared tolerance outside (0, 0.5)",
    "radius_infinite": "nuisance radius is infinite",
    "radius_exceeds_tolerance": "nuisance radius exceeds the declared tolerance",
}

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem;color:#222;max-width:1100px}
h1{font-size:1.5rem;margin-bottom:.2rem} h2{font-size:1.15rem;margin-top:2rem}
.meta{color:#555;font-size:.9rem}
.answer{font-size:1.1rem;line-height:1.5;border-left:4px solid #2166ac;padding:.4rem .8rem;background:#f5f8fc}
.synthetic{background:#fff3cd;border:2px solid #b8860b;padding:.4rem .8rem;font-weight:600}
table{border-collapse:collapse;font-size:.85rem;margin-top:.5rem}
th,td{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#f4f4f4;white-space:nowrap} td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th.sort{cursor:pointer;user-select:none} th.sort:after{content:" \\2195";color:#999}
.nowrap{white-space:nowrap}
.badge{display:inline-block;padding:.05rem .45rem;border-radius:.6rem;color:#fff;font-size:.78rem;white-space:nowrap}
.counts span{margin-right:1.2rem}
.filters{margin:.6rem 0;display:flex;gap:.8rem;align-items:center;flex-wrap:wrap;font-size:.9rem}
.glossary dt{font-weight:600;margin-top:.3rem} .glossary dd{margin:0 0 0 1.2rem;color:#333;font-size:.9rem}
.code{color:#777;font-size:.75rem}
footer{margin-top:2rem;font-size:.8rem;color:#555;word-break:break-all}
"""

# Sort (click a header) and filter (text, verdict, readout; initial state from the address).
TABLE_JS = """
(function(){
var t=document.getElementById('pairs');if(!t)return;
var b=t.tBodies[0],q=document.getElementById('pair-filter'),
v=document.getElementById('verdict-filter'),r=document.getElementById('readout-filter'),
s=document.getElementById('pair-shown');
function apply(){var x=q.value.toLowerCase(),n=0;
for(var i=0;i<b.rows.length;i++){var w=b.rows[i];
var ok=(!v.value||w.getAttribute('data-verdict')===v.value)&&
(!r.value||w.getAttribute('data-readout')===r.value)&&
(!x||w.textContent.toLowerCase().indexOf(x)>=0);
w.hidden=!ok;if(ok)n++;}
s.textContent=n+' of '+b.rows.length+' verdicts shown';}
q.addEventListener('input',apply);v.addEventListener('change',apply);
r.addEventListener('change',apply);
var h=t.tHead.rows[0].cells;
function key(c){var d=c.getAttribute('data-v');
if(d!==null){var f=parseFloat(d);return isNaN(f)?Infinity:f;}return c.textContent.toLowerCase();}
Array.prototype.forEach.call(h,function(th,j){th.className+=' sort';
th.addEventListener('click',function(){var up=th.getAttribute('aria-sort')!=='ascending';
Array.prototype.forEach.call(h,function(o){o.removeAttribute('aria-sort');});
th.setAttribute('aria-sort',up?'ascending':'descending');
var rows=Array.prototype.slice.call(b.rows);
rows.sort(function(a,c){var x=key(a.cells[j]),y=key(c.cells[j]);
return (x<y?-1:x>y?1:0)*(up?1:-1);});
rows.forEach(function(w){b.appendChild(w);});});});
var p=new URLSearchParams(location.hash.slice(1));
if(p.get('verdict'))v.value=p.get('verdict');if(p.get('readout'))r.value=p.get('readout');
if(p.get('q'))q.value=p.get('q');
apply();
if(p.get('sort'))Array.prototype.forEach.call(h,function(th){
if(th.textContent===p.get('sort'))th.click();});})();
"""


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value))


def _missing(value: object) -> bool:
    try:
        return value is None or bool(pd.isna(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _num(value: object, digits: int = 3) -> str:
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return _e(value)
    if math.isnan(f):
        return ""
    if math.isinf(f):
        return "∞" if f > 0 else "-∞"
    return f"{f:.{digits}f}"


def _sortkey(value: object) -> str:
    """``data-v`` of a numeric cell: the number, '' when missing (sorted last)."""
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(f) else repr(f)


def undecided_count(counts: Mapping[str, int]) -> int:
    """Everything neither certified nor refused (sampling, attribution, too few data)."""
    return sum(n for v, n in counts.items() if v not in ("certified", "refused"))


def explain_pair(p: Mapping[str, Any]) -> str:
    """Why a pair got its verdict, in words (the ``reason`` column of the page)."""
    verdict = str(p.get("verdict", ""))
    code = "" if _missing(p.get("reason")) else str(p.get("reason"))
    admission = ADMISSION_WORDS.get(code, code)
    gap, q, eps = p.get("gap"), p.get("q"), p.get("eps_outside")
    try:
        absgap = abs(float(gap))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        absgap = math.nan
    try:
        bound = f"{float(q) + float(eps):.3f}"  # type: ignore[arg-type]
    except (TypeError, ValueError):  # eps_outside not given (the audit page): name q alone
        bound = f"({_num(q)} + ε_outside)"
    nuisance = "" if code in ("exact", "") else f"; {admission}"
    if verdict == "refused":
        return f"refused before reading scores: {admission}"
    if verdict == "certified":
        return f"|gap| {absgap:.3f} > q + ε_outside = {bound}{nuisance}"
    if verdict == "undecided_sampling":
        return (
            f"within sampling noise: |gap| {absgap:.3f} ≤ q + ε_outside = {bound}; more tasks "
            "would shrink q"
            + ("" if _missing(p.get("mde")) else f" (this board detects |gap| > {_num(p['mde'])})")
            + nuisance
        )
    if verdict == "undecided_attribution":
        return (
            f"entry differences could explain it: |gap| {absgap:.3f} ≤ ε_outside = {_num(eps)}"
            f"; more tasks will not decide it{nuisance}"
        )
    if verdict == "too_few_tasks":
        return f"only {_e(p.get('n_common', '?'))} common tasks, below the design's minimum"
    if verdict == "too_few_clusters":
        return "fewer than 2 clusters among the common tasks: no standard error"
    if verdict == "too_little_variation":
        return "the paired differences do not vary (se = 0): no honest interval"
    return admission


def rank_chart_svg(
    ranks: pd.DataFrame,
    width: int = 720,
    row_h: int = 26,
    alpha: object = None,
    synthetic: bool = False,
) -> str:
    """Inline SVG: one horizontal bar per system spanning its certified rank interval."""
    order = ranks.sort_values(["rank_lo", "rank_hi", "system"]).reset_index(drop=True)
    n = max(int(order["rank_hi"].max()) if len(order) else 1, 1)
    left, right, top = 190, 30, 30
    plot_w = width - left - right
    height = top + row_h * len(order) + 30

    def x(rank: float) -> float:
        return left + (rank - 1) / max(n - 1, 1) * plot_w

    label = "certified rank interval (1 = best)"
    if alpha is not None:
        label += f" at alpha = {alpha}"
    parts = [
        f'<svg width="{width}" height="{height}" role="img" aria-label="certified rank intervals">',
        f'<text x="{left}" y="16" font-size="13" fill="#333">{_e(label)}</text>',
    ]
    if synthetic:
        parts.append(
            f'<text x="{width - right}" y="16" font-size="13" font-weight="bold" '
            'fill="#b8860b" text-anchor="end">SYNTHETIC</text>'
        )
    for r in range(1, n + 1):
        parts.append(
            f'<line x1="{x(r):.1f}" y1="{top - 6}" x2="{x(r):.1f}" y2="{height - 24}" stroke="#eee"/>'
            f'<text x="{x(r):.1f}" y="{height - 8}" font-size="12" text-anchor="middle">{r}</text>'
        )
    for i, rec in enumerate(order.to_dict("records")):
        y = top + i * row_h + row_h / 2
        lo, hi = float(rec["rank_lo"]), float(rec["rank_hi"])
        colour = "#1b7837" if lo == hi else "#2166ac"
        parts.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="13" text-anchor="end">{_e(rec["system"])}</text>'
            f'<line x1="{x(lo):.1f}" y1="{y:.1f}" x2="{x(hi):.1f}" y2="{y:.1f}" '
            f'stroke="{colour}" stroke-width="8" stroke-linecap="round"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def family_html(pairs: pd.DataFrame) -> str:
    """The Bonferroni family the verdicts used (pairs.csv ``family`` / ``family_m``)."""
    if not {"family", "family_m"} <= set(pairs.columns) or pairs.empty:
        return ""
    fam = sorted(set(pairs["family"].astype(str)))
    m = sorted({int(x) for x in pairs["family_m"]})
    words = {
        "pairs_x_readouts": "every (pair, readout) shown, composite included",
        "pairs": "the pairs of each readout (each readout its own family: a reader of several "
        "readouts' verdicts is not protected at alpha)",
    }
    text = "; ".join(words.get(f, f) for f in fam)
    return (
        f"<p class='meta'>Bonferroni family: {_e(text)} ({_e(', '.join(fam))}), "
        f"m = {_e(', '.join(str(x) for x in m))}; every radius is at delta' = alpha / m.</p>"
    )


def assumption_html(pairs: pd.DataFrame) -> str:
    """The user's admissibility assumption (pairs.csv ``admissibility``, present only when the
    design said ``admissibility: assumed``), stated above the verdicts it qualifies."""
    if "admissibility" not in pairs.columns or pairs.empty:
        return ""
    labels = sorted(set(pairs["admissibility"].astype(str)))
    return (
        f"<p style='background:#fff4e5;border-left:4px solid #b8860b;padding:.4rem .6rem'><b>{_e('; '.join(labels)).capitalize()}</b>: the score table "
        "carries no entry metadata, so no pair was tested for admissibility (Definition 1); "
        "every pair is taken as exactly matched (ε_outside = 0) and every verdict below rests "
        "on that assumption.</p>"
    )


def validity_html(validity: pd.DataFrame | None) -> str:
    """The validity report (validity.csv of ``kit certify --validate N``) as plain sentences."""
    if validity is None or validity.empty:
        return ""
    from kit.certify.validity import ALL, validity_sentence

    fwer = validity[
        (validity["quantity"] == "fwer_false_certification") & (validity["readout"] == ALL)
    ]
    detail = fwer["detail"].iloc[0] if len(fwer) else ""
    return (
        "<h2>Validity on boards shaped like this one (SYNTHETIC)</h2>"
        f"<p>{_e(validity_sentence(validity))}</p><p class='meta'>{_e(detail)}</p>"
    )


def synthetic_banner(synthetic: Mapping[str, Any] | None, what: str = "board") -> str:
    """The SYNTHETIC label (``id=synthetic``) from the ``.synthetic.json`` record, or ''."""
    if not synthetic:
        return ""
    how = str(synthetic.get("generator") or synthetic.get("evidence") or "a simulator")
    seed = synthetic.get("seed")
    seed_text = f", seed {seed}" if seed is not None else ""
    return (
        f"<p id=synthetic class=synthetic>SYNTHETIC {_e(what)}: the scores were generated "
        f"({_e(how)}{_e(seed_text)}) with a known truth; they are not measurements of real "
        "systems.</p>"
    )


def _rank_text(r: Mapping[str, Any]) -> str:
    lo, hi = int(r["rank_lo"]), int(r["rank_hi"])
    return f"rank {lo}" if lo == hi else f"rank {lo}–{hi}"


def answer_html(
    ranks: pd.DataFrame, pairs: pd.DataFrame, alpha: object, top: int = 3
) -> tuple[str, dict[str, int]]:
    """The opening answer (``id=answer``) and the counts it states."""
    comp = pairs[pairs["readout"] == "composite"] if "readout" in pairs else pairs.iloc[0:0]
    scope = comp if len(comp) else pairs
    counts = scope["verdict"].value_counts().to_dict() if len(scope) else {}
    c = {
        "pairs": len(scope),
        "certified": int(counts.get("certified", 0)),
        "refused": int(counts.get("refused", 0)),
        "undecided": undecided_count(counts),
    }
    at = f"At alpha = {_e(alpha)}" if alpha is not None else "At an unknown alpha (no design)"
    what = "composite pairs" if len(comp) else "pair verdicts"
    head = (
        f"{at}, of {c['pairs']} {what}: <b>{c['certified']} certified</b>, "
        f"<b>{c['refused']} refused</b>, <b>{c['undecided']} undecided</b>"
    )
    if len(comp) and len(pairs) > len(comp):
        allc = pairs["verdict"].value_counts().to_dict()
        head += (
            f" (all {len(pairs)} verdicts over every readout: "
            f"{int(allc.get('certified', 0))} certified, {int(allc.get('refused', 0))} refused, "
            f"{undecided_count(allc)} undecided)"
        )
    order = ranks.sort_values(["rank_lo", "rank_hi", "system"]).to_dict("records")
    best = "; ".join(
        f"<b>{_e(r['system'])}</b> {_rank_text(r)}"
        + ("" if _missing(r.get("composite")) else f" (composite {_num(r.get('composite'))})")
        for r in order[:top]
    )
    tail = f". Top of the board of {len(ranks)} systems: {best}." if order else "."
    open_pairs = scope[~scope["verdict"].isin(["certified", "refused"])] if len(scope) else scope
    if 0 < len(open_pairs) <= 6:
        tail += " Undecided: " + ", ".join(
            f"{_e(a)} vs {_e(b)}"
            for a, b in zip(open_pairs["system_a"], open_pairs["system_b"], strict=True)
        )
        tail += " (reasons in the table below)."
    return f"<p id=answer class=answer>{head}{tail}</p>", c


def _select(ident: str, label: str, values: list[str], words: Mapping[str, str]) -> str:
    opts = "".join(f"<option value='{_e(v)}'>{_e(words.get(v, v))}</option>" for v in values)
    return (
        f"<label>{_e(label)} <select id={ident}><option value=''>all</option>{opts}</select>"
        "</label>"
    )


def _pair_table(pairs: pd.DataFrame) -> str:
    assumed = "admissibility" in pairs.columns  # a design with 'admissibility: assumed'
    rows = []
    for p in pairs.to_dict("records"):
        verdict = str(p["verdict"])
        colour, label = VERDICT_STYLE.get(verdict, ("#444", verdict))
        winner = "" if _missing(p.get("winner")) else p.get("winner")
        code = "" if _missing(p.get("reason")) else str(p.get("reason"))
        num = "".join(
            f"<td class='num' data-v='{_sortkey(p.get(k))}'>{_num(p.get(k))}</td>"
            for k in ("gap", "q", "eps_outside", "mde")
        )
        rows.append(
            f"<tr data-verdict='{_e(verdict)}' data-readout='{_e(p.get('readout', ''))}'>"
            f"<td>{_e(p['system_a'])}</td><td>{_e(p['system_b'])}</td>"
            f"<td>{_e(p.get('readout', ''))}</td>"
            f"<td><span class='badge' style='background:{colour}'>{_e(label)}</span></td>"
            f"<td>{_e(winner)}</td>{num}"
            f"<td>{_e(explain_pair(p))}"
            + (
                f" <span class=code>({_e(code)})</span>"
                if verdict == "refused" and code in ADMISSION_WORDS
                else ""
            )
            + "</td>"
            + (f"<td>{_e(p['admissibility'])}</td>" if assumed else "")
            + "</tr>"
        )
    verdicts = sorted(set(pairs["verdict"].astype(str))) if len(pairs) else []
    readouts = sorted(set(pairs["readout"].astype(str))) if "readout" in pairs else []
    words = {v: VERDICT_STYLE.get(v, ("", v))[1] for v in verdicts}
    filters = (
        "<div class=filters id=pair-filters>"
        "<label>filter <input id=pair-filter type=search placeholder='system, reason…'></label>"
        + _select("verdict-filter", "verdict", verdicts, words)
        + _select("readout-filter", "readout", readouts, {})
        + f"<span id=pair-shown class=meta>{len(pairs)} of {len(pairs)} verdicts shown</span>"
        "<span class=meta>(click a column header to sort)</span></div>"
    )
    return (
        filters + "<table id=pairs><thead><tr><th>A</th><th>B</th><th>readout</th>"
        "<th>verdict</th><th>winner</th><th>gap</th><th>q</th><th>ε_outside</th><th>MDE</th>"
        "<th>reason</th>"
        + ("<th>admissibility</th>" if assumed else "")
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def render_board_page(
    ranks: pd.DataFrame,
    pairs: pd.DataFrame,
    meta: Mapping[str, object],
    title: str = "Certified board",
    validity: pd.DataFrame | None = None,
    synthetic: Mapping[str, Any] | None = None,
) -> str:
    """The whole page. ``meta`` should name alpha, the design and score hashes and kit version;
    ``validity`` is the table of ``kit certify --validate N`` (shown when given); ``synthetic``
    the ``.synthetic.json`` record of generated scores (labels the page SYNTHETIC)."""
    alpha = meta.get("alpha")
    answer, _ = answer_html(ranks, pairs, alpha)
    counts = pairs["verdict"].value_counts().to_dict() if len(pairs) else {}
    count_html = "".join(
        f'<span><span class="badge" style="background:{VERDICT_STYLE.get(v, ("#444", v))[0]}">'
        f"{_e(VERDICT_STYLE.get(v, ('', v))[1])}</span> {n}</span>"
        for v, n in sorted(counts.items())
    )
    rank_rows = "".join(
        "<tr>"
        f"<td>{_e(r['system'])}</td><td class='num'>{_num(r.get('composite'))}</td>"
        f"<td class='num'>{_e(r.get('n_tasks'))}</td>"
        f"<td class='num'>{_e(_rank_text(r).removeprefix('rank '))}</td>"
        "</tr>"
        for r in ranks.sort_values(["rank_lo", "rank_hi", "system"]).to_dict("records")
    )
    meta_rows = "".join(f"<div><b>{_e(k)}</b>: {_e(v)}</div>" for k, v in sorted(meta.items()))
    label = "SYNTHETIC · " if synthetic else ""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(label + title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1>"
        f"{synthetic_banner(synthetic)}"
        f"{answer}"
        f"<div class='meta'>alpha {_e(meta.get('alpha', '?'))} · {len(ranks)} systems · "
        f"{len(pairs)} pair verdicts</div>"
        "<h2>Rank intervals</h2>"
        f"{rank_chart_svg(ranks, alpha=alpha, synthetic=bool(synthetic))}"
        "<table><thead><tr><th>system</th><th>composite</th><th>tasks</th><th>certified rank</th>"
        f"</tr></thead><tbody>{rank_rows}</tbody></table>"
        "<h2>Pair verdicts</h2>"
        f"{family_html(pairs)}"
        f"{assumption_html(pairs)}"
        f"<div class='counts'>{count_html}</div>"
        f"{_pair_table(pairs)}"
        f"{validity_html(validity)}"
        + glossary_html(
            (
                "alpha",
                "Bonferroni m",
                "gap",
                "q",
                "ε_outside",
                "MDE",
                "certified",
                "undecided",
                "refused",
                "rank interval",
                "composite",
                "SYNTHETIC",
            )
        )
        + f"<footer>{meta_rows}</footer>"
        f"<script>{TABLE_JS}</script>"
        "</body></html>\n"
    )
