"""The certified board as one self-contained HTML page (no external resource of any kind).

Pure rendering: frames and metadata in, an HTML string out. The rank-interval chart is inline
SVG (like the paper's Figure 1: one bar per system from rank_lo to rank_hi); the pair table shows
every verdict with its reason, refused pairs as refused, and the Bonferroni family it used;
the validity report of ``kit certify --validate`` (SYNTHETIC boards shaped like this one) when
there is one; the footer names the data hashes, alpha
and kit version the page was built from.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping

import pandas as pd

VERDICT_STYLE = {
    "certified": ("#1b7837", "certified"),
    "undecided_sampling": ("#b8860b", "undecided: sampling-limited"),
    "undecided_attribution": ("#8c510a", "undecided: attribution-limited"),
    "refused": ("#b2182b", "refused (inadmissible)"),
    "too_few_tasks": ("#666666", "too few common tasks"),
    "too_few_clusters": ("#666666", "too few clusters"),
    "too_little_variation": ("#666666", "too little variation (se = 0)"),
}

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem;color:#222;max-width:1100px}
h1{font-size:1.5rem;margin-bottom:.2rem} h2{font-size:1.15rem;margin-top:2rem}
.meta{color:#555;font-size:.9rem}
table{border-collapse:collapse;font-size:.85rem;margin-top:.5rem}
th,td{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left}
th{background:#f4f4f4} td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:.05rem .45rem;border-radius:.6rem;color:#fff;font-size:.78rem}
.counts span{margin-right:1.2rem}
footer{margin-top:2rem;font-size:.8rem;color:#555;word-break:break-all}
"""


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value))


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


def rank_chart_svg(ranks: pd.DataFrame, width: int = 720, row_h: int = 26) -> str:
    """Inline SVG: one horizontal bar per system spanning its certified rank interval."""
    order = ranks.sort_values(["rank_lo", "rank_hi", "system"]).reset_index(drop=True)
    n = max(int(order["rank_hi"].max()) if len(order) else 1, 1)
    left, right, top = 190, 30, 30
    plot_w = width - left - right
    height = top + row_h * len(order) + 30

    def x(rank: float) -> float:
        return left + (rank - 1) / max(n - 1, 1) * plot_w

    parts = [
        f'<svg width="{width}" height="{height}" role="img" aria-label="certified rank intervals">',
        f'<text x="{left}" y="16" font-size="12" fill="#555">certified rank interval (1 = best)</text>',
    ]
    for r in range(1, n + 1):
        parts.append(
            f'<line x1="{x(r):.1f}" y1="{top - 6}" x2="{x(r):.1f}" y2="{height - 24}" stroke="#eee"/>'
            f'<text x="{x(r):.1f}" y="{height - 8}" font-size="11" text-anchor="middle">{r}</text>'
        )
    for i, rec in enumerate(order.to_dict("records")):
        y = top + i * row_h + row_h / 2
        lo, hi = float(rec["rank_lo"]), float(rec["rank_hi"])
        colour = "#1b7837" if lo == hi else "#2166ac"
        parts.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="12" text-anchor="end">{_e(rec["system"])}</text>'
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


def render_board_page(
    ranks: pd.DataFrame,
    pairs: pd.DataFrame,
    meta: Mapping[str, object],
    title: str = "Certified board",
    validity: pd.DataFrame | None = None,
) -> str:
    """The whole page. ``meta`` should name alpha, the design and score hashes and kit version;
    ``validity`` is the table of ``kit certify --validate N`` (shown when given)."""
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
        f"<td class='num'>{_e(r['rank_lo'])}–{_e(r['rank_hi'])}</td>"
        "</tr>"
        for r in ranks.sort_values(["rank_lo", "rank_hi", "system"]).to_dict("records")
    )
    assumed = "admissibility" in pairs.columns
    pair_rows = []
    for p in pairs.to_dict("records"):
        colour, label = VERDICT_STYLE.get(str(p["verdict"]), ("#444", str(p["verdict"])))
        pair_rows.append(
            "<tr>"
            f"<td>{_e(p['system_a'])}</td><td>{_e(p['system_b'])}</td><td>{_e(p.get('readout', ''))}</td>"
            f"<td><span class='badge' style='background:{colour}'>{_e(label)}</span></td>"
            f"<td>{_e(p.get('winner', '') if not pd.isna(p.get('winner')) else '')}</td>"
            f"<td class='num'>{_num(p.get('gap'))}</td><td class='num'>{_num(p.get('q'))}</td>"
            f"<td class='num'>{_num(p.get('eps_outside'))}</td><td class='num'>{_num(p.get('mde'))}</td>"
            f"<td>{_e(p.get('reason', '') if not pd.isna(p.get('reason')) else '')}</td>"
            + (f"<td>{_e(p['admissibility'])}</td>" if assumed else "")
            + "</tr>"
        )
    meta_rows = "".join(f"<div><b>{_e(k)}</b>: {_e(v)}</div>" for k, v in sorted(meta.items()))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1>"
        f"<div class='meta'>alpha {_e(meta.get('alpha', '?'))} · {len(ranks)} systems · "
        f"{len(pairs)} pair verdicts</div>"
        "<h2>Rank intervals</h2>"
        f"{rank_chart_svg(ranks)}"
        "<table><thead><tr><th>system</th><th>composite</th><th>tasks</th><th>certified rank</th>"
        f"</tr></thead><tbody>{rank_rows}</tbody></table>"
        "<h2>Pair verdicts</h2>"
        f"{family_html(pairs)}"
        f"{assumption_html(pairs)}"
        f"<div class='counts'>{count_html}</div>"
        "<table><thead><tr><th>A</th><th>B</th><th>readout</th><th>verdict</th><th>winner</th>"
        "<th>gap</th><th>q</th><th>ε_outside</th><th>MDE</th><th>reason</th>"
        f"{'<th>admissibility</th>' if assumed else ''}</tr></thead>"
        f"<tbody>{''.join(pair_rows)}</tbody></table>"
        f"{validity_html(validity)}"
        f"<footer>{meta_rows}</footer>"
        "</body></html>\n"
    )
