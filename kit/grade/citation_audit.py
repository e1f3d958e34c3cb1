"""The two-level citation audit: L1 existence, L2 support (pure; resolvers and scorer injected).

Seed 002 (OpenBioRQ), Appendix B (Definitions) and C.1:

* **L1 existence.** Each cited identifier is looked up in a corpus: ``found``, ``notfound``
  (a fabricated identifier) or ``transient`` (the lookup itself failed: timeout, service error).
  Transient outcomes never count as fabrication; they are excluded from both numerator and
  denominator. The kit adds ``unchecked``: the identifier lies outside every corpus's *declared
  complete coverage* (:mod:`kit.corpus.coverage`: a corpus that is only a sample, such as the
  1,000 PubMedQA abstracts, cannot prove an identifier invented) or its type has no corpus at
  all; also never fabrication. Each row names the corpus that decided it.
  Existence rate = found / (found + notfound); fabrication rate = notfound / (found + notfound).
* **L2 support** on found citations (and, in the kit, on unchecked ones the agent read a
  passage about): a support score s in [0, 1] from a declared instrument, labelled ``yes``
  (s >= yes_at), ``partial`` (partial_at <= s < yes_at) or ``no``. The passage is what the agent
  read when a tool response of its run names the identifier, else the corpus passage
  (:data:`EVIDENCE_RULE`, :func:`score_support`).
  Wrong-paper rate = no / found (the paper's conservative, no-only definition) with a Wilson
  interval; the partial-inclusive upper bound = (no + partial) / found (C.1: "including
  partials would raise the wrong-paper upper bound"). Reported pooled, by identifier type (PMID,
  NCT) and by model.

Wilson intervals assume independent citations; several citations of one answer are clustered,
so with many citations per answer the intervals are optimistic (stated in every output).

Instrument correction (kit addition, not in the paper): when the support instrument's error
rates on known right / wrong pairs are measured -- sens = P(no | wrong paper), fpr = P(no | right
paper) -- the Rogan-Gladen estimator p = (q - fpr) / (sens - fpr) corrects the observed no-rate
q (delta-method interval including the calibration uncertainty; :func:`rogan_gladen`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd

from kit.core.errors import check_param
from kit.corpus.coverage import Resolution
from kit.corpus.identifiers import SCHEMES, find_identifiers, is_cited_paper
from kit.guard.verifiers.support import SupportScorer
from kit.runs.model import AgentRun, Citation
from kit.stats.wilson import wilson_ci

L1_STATUSES = ("found", "notfound", "transient", "unchecked")
L2_LABELS = ("yes", "partial", "no")
ID_TYPES = SCHEMES
CLUSTER_NOTE = "Wilson CIs treat citations as independent; citations of one answer are clustered"


class Resolver(Protocol):
    """Resolves canonical identifier values of one type: value -> a status ('found' |
    'notfound' | 'transient') or a :class:`kit.corpus.coverage.Resolution` (which also names the
    deciding corpus; :class:`kit.corpus.store.ChainResolver` applies declared coverage)."""

    def resolve(self, values: Sequence[str]) -> Mapping[str, str | Resolution]: ...


@dataclass(frozen=True)
class SetResolver:
    """A closed world given as a set of known identifiers: absent = notfound (use it only where
    the set is by construction everything that exists, e.g. in tests)."""

    known: frozenset[str]

    def resolve(self, values: Sequence[str]) -> dict[str, str]:
        return {v: ("found" if v in self.known else "notfound") for v in values}


@dataclass(frozen=True)
class FlakyResolver:
    """A set corpus whose lookups of ``failed`` identifiers fail transiently: replays the
    outages recorded in a failed_lookups file, so they count as ``transient``, never fabricated."""

    known: frozenset[str]
    failed: frozenset[str]

    def resolve(self, values: Sequence[str]) -> dict[str, str]:
        return {
            v: "transient" if v in self.failed else "found" if v in self.known else "notfound"
            for v in values
        }


@dataclass(frozen=True)
class SupportRule:
    """L2 thresholds on the support score (declared; printed with every result)."""

    yes_at: float
    partial_at: float

    def __post_init__(self) -> None:
        ok = 0.0 <= self.partial_at <= self.yes_at <= 1.0
        check_param("yes_at", self.yes_at, ok, ">= partial_at, both in [0, 1]", "SupportRule")

    def label(self, s: float) -> str:
        return "yes" if s >= self.yes_at else "partial" if s >= self.partial_at else "no"


CITATION_MARKER = re.compile(r"PMID:?\s*[0-9]{1,9}|NCT[0-9]{8}")


_PUNCT = " ;,.()[]"


def claim_for(answer: str, citation: Citation) -> str:
    """The claim a citation supports: the answer text after the previous citation marker (or the
    start) up to this citation's first marker -- the span the citation closes; adjacent markers
    (``(PMID:1; NCT01234567)``) share one span (declared rule). Markers are the identifiers the
    corpus layer reads in the answer (:func:`kit.corpus.identifiers.find_identifiers`: a PubMed
    link is a mention of its PMID, read whole); an identifier outside every scheme is found by
    its text. A web page that is no cited paper (:func:`kit.corpus.identifiers.is_cited_paper`)
    is prose, no marker, unless it is the citation itself. When the identifier is not in the
    text, the whole answer."""
    found = find_identifiers(answer) if citation.id_type in SCHEMES else []
    key = (citation.id_type, citation.value)
    marks = [(a, b) for a, b, ident in found if is_cited_paper(ident) or ident.key == key]
    pos = next((a for a, _, ident in found if ident.key == key), -1)
    if pos < 0:
        for text in (citation.label, citation.value):
            pos = answer.find(text)
            if pos >= 0:
                break
    if pos < 0:
        return answer.strip()
    marks += [(m.start(), m.end()) for m in CITATION_MARKER.finditer(answer, 0, pos)]
    # Walk back over adjacent markers ("(PMID:1; NCT...)" share one claim) to the span of text.
    seg_end, start = pos, 0
    for a, b in sorted({m for m in marks if m[1] <= pos}, reverse=True):
        if b > seg_end:
            continue  # a marker inside one already walked over
        if answer[b:seg_end].strip(_PUNCT):
            start = b
            break
        seg_end = a
    span = answer[start:seg_end].strip(_PUNCT)
    return span or answer.strip()


CITATION_ROW_COLUMNS = [
    "run_id",
    "model",
    "task_id",
    "claim_no",
    "citation",
    "id_type",
    "value",
    "claim",
]


def citation_rows(runs: Sequence[AgentRun]) -> pd.DataFrame:
    """The audit's citation rows (run_id, model, task_id, claim_no, citation, id_type, value,
    claim), by run_id.

    * A run with claims (run format v2: given explicitly or extracted from the answer by
      :mod:`kit.runs.extract`): one row per (claim, identifier it cites), ``claim`` the claim's
      own text and ``claim_no`` its 1-based position among the run's claims; then one row per
      identifier of the run that no claim cites (a reference-list entry never used), with the
      v1 rule below and ``claim_no`` 0. An identifier cited by two claims is audited twice
      (L2 is a property of the claim, L1 of the identifier).
    * Any other run (v1, or v2 without claims): one row per distinct cited identifier,
      ``claim_no`` 0, the claim cut from the answer by :func:`claim_for`. Repeated identifiers
      within one answer are counted once.
    """
    rows = []

    def row(run: AgentRun, no: int, c: Citation, claim: str) -> dict[str, object]:
        return {
            "run_id": run.run_id,
            "model": run.model,
            "task_id": run.task_id,
            "claim_no": no,
            "citation": c.label,
            "id_type": c.id_type,
            "value": c.value,
            "claim": claim,
        }

    for run in sorted(runs, key=lambda r: r.run_id):
        by_label = {c.label: c for c in run.cited}
        used: set[str] = set()
        for no, claim in enumerate(run.claims, start=1):
            for label in claim.cites:
                c = by_label.get(label)
                if c is not None:
                    rows.append(row(run, no, c, claim.text))
                    used.add(label)
        for c in dict.fromkeys(run.cited):
            if c.label not in used:
                rows.append(row(run, 0, c, claim_for(run.answer, c)))
    frame = pd.DataFrame(rows, columns=CITATION_ROW_COLUMNS)
    frame["claim_no"] = frame["claim_no"].astype("int64")
    return frame


def resolve_l1(cites: pd.DataFrame, resolvers: Mapping[str, Resolver]) -> list[Resolution]:
    """L1 resolution per row (the one L1 path of the kit); an id type with no resolver is
    'unchecked', an answer missing from a resolver or an unknown status 'transient'."""
    none = Resolution("unchecked", note="no corpus for this identifier type")
    out = [none] * len(cites)
    for id_type, resolver in resolvers.items():
        idx = np.flatnonzero(cites["id_type"].to_numpy() == id_type)
        if idx.size == 0:
            continue
        values = [str(cites["value"].iat[i]) for i in idx]
        got = resolver.resolve(sorted(set(values)))
        for i, v in zip(idx, values, strict=True):
            r = got.get(v, "transient")
            if not isinstance(r, Resolution):
                r = Resolution(r)
            out[i] = r if r.status in L1_STATUSES else Resolution("transient", r.corpus)
    return out


def classify_l1(cites: pd.DataFrame, resolvers: Mapping[str, Resolver]) -> list[str]:
    """L1 status per row (:func:`resolve_l1` without the deciding corpus)."""
    return [r.status for r in resolve_l1(cites, resolvers)]


EVIDENCE = ("tool_response", "corpus", "no_passage", "none")
L2_SCORED = ("found", "unchecked")  # L1 statuses whose citations may carry an L2 label
EVIDENCE_RULE = (
    "L2 is checked first against what the agent read: when a tool response the agent read "
    "names the cited identifier (in any spelling, or the tool was called with it), the claim is "
    "scored against that response text (tool_score) and that score decides L2 "
    "(evidence = tool_response); the corpus passage is scored too (corpus_score) and decides "
    "L2 only when the agent read nothing naming the identifier (evidence = corpus). Same "
    "verifier, windows and thresholds for both. Tool responses are cut into records (one per "
    "paper); every identifier of a record reads that record. A record with only a title and "
    "metadata is no passage: when that is all the agent read and no corpus passage exists, L2 "
    "is not scored (evidence = no_passage) rather than scored against a title. L1 stays "
    "corpus-based: a tool response does not prove that an identifier exists inside a corpus's "
    "declared coverage. A citation L1 leaves unchecked is scored only against what the agent "
    "read; notfound and transient ones never."
)


@dataclass(frozen=True)
class AgentRead:
    """The text an agent read that concerns one cited identifier (from its tool responses) and
    the 0-based indices of the tool calls it came from. An empty ``text``: the agent read
    records naming the identifier, none with a passage (a title only) -- nothing to score.
    ``record_format``: the record format(s) the text was read in (``pubmed-abstract``,
    ``key-value``, ...: :mod:`kit.audit.record_formats`), several distinct ones joined with
    ``+`` in call order; '' when unknown. It says how the text was read, not what was read:
    two reads compare equal by text and calls."""

    text: str
    calls: tuple[int, ...]
    record_format: str = field(default="", compare=False)


def score_support(
    audited: pd.DataFrame,
    scorer: SupportScorer | None,
    passage_of: Callable[[str, str], str | None] | None,
    rule: SupportRule,
    agent_read: Sequence[AgentRead | None] | None = None,
) -> pd.DataFrame:
    """L2 on rows that already carry ``l1``: add evidence, evidence_calls, record_format (the
    format(s) of the tool records read, '' when the evidence is no tool response), tool_score,
    corpus_score, support_score and l2 (the one L2 path of the kit; :data:`EVIDENCE_RULE`).

    ``corpus_score``: the claim against the corpus passage (found citations whose passage
    ``passage_of`` supplies); ``tool_score``: against ``agent_read[i]`` (found or unchecked
    citations the agent read about). ``support_score`` and ``l2`` follow the tool score when
    there is one, else the corpus score; without either, ``evidence`` is ``no_passage`` when
    the agent read records about a found or unchecked citation that held no passage (a title
    only), else ``none``, and l2 is empty. All pairs go to ``scorer`` in one call, corpus pairs first (a run without tool
    evidence scores exactly the pairs it always did). When the scorer gives no score (NaN: an
    LLM endpoint refused the question) for the evidence that decides, ``support_score`` is empty
    and l2 is ``refused``: counted apart, never a number."""
    out = audited.copy()
    n = len(out)
    read = [None] * n if agent_read is None else list(agent_read)
    check_param(
        "agent_read", len(read), len(read) == n, f"one entry per row ({n})", "score_support"
    )
    l1 = out["l1"].to_numpy()
    claim = out["claim"].tolist() if n else []  # columns read once, not cell by cell
    claims, passages, slots = [], [], []  # slots: (row, "corpus" | "tool")
    if scorer is not None and passage_of is not None:
        id_type, value = out["id_type"].tolist(), out["value"].tolist()
        for i in np.flatnonzero(l1 == "found"):
            text = passage_of(str(id_type[i]), str(value[i]))
            if text:
                claims.append(str(claim[i]))
                passages.append(text)
                slots.append((int(i), "corpus"))
    if scorer is not None:
        for i in range(n):
            r = read[i]
            if r is not None and r.text and l1[i] in L2_SCORED:
                claims.append(str(claim[i]))
                passages.append(r.text)
                slots.append((i, "tool"))
    tool = np.full(n, np.nan)
    corpus = np.full(n, np.nan)
    asked = {"tool": np.zeros(n, bool), "corpus": np.zeros(n, bool)}
    if slots:
        s = np.asarray(scorer.score(claims, passages), dtype=float)  # type: ignore[union-attr]
        for (i, kind), v in zip(slots, s, strict=True):
            (tool if kind == "tool" else corpus)[i] = float(v)
            asked[kind][i] = True
    # the instrument gave no score for the evidence that decides L2 (an LLM endpoint refused
    # the question): that evidence still decides, its score is missing and l2 is 'refused' --
    # never a number, never another evidence's score in its place
    refused = (asked["tool"] & np.isnan(tool)) | (
        ~asked["tool"] & asked["corpus"] & np.isnan(corpus)
    )
    has_tool = ~np.isnan(tool) | (asked["tool"] & refused)
    has_corpus = ~np.isnan(corpus) | (asked["corpus"] & refused)
    bare = np.array(
        [r is not None and not r.text and l1[i] in L2_SCORED for i, r in enumerate(read)], bool
    )
    out["evidence"] = np.where(
        has_tool,
        "tool_response",
        np.where(has_corpus, "corpus", np.where(bare, "no_passage", "none")),
    )
    out["evidence_calls"] = [
        ";".join(str(c) for c in r.calls)
        if r is not None and (has_tool[i] or (bare[i] and not has_corpus[i]))
        else ""
        for i, r in enumerate(read)
    ]
    out["record_format"] = [
        r.record_format
        if r is not None and (has_tool[i] or (bare[i] and not has_corpus[i]))
        else ""
        for i, r in enumerate(read)
    ]
    out["tool_score"] = tool
    out["corpus_score"] = corpus
    support = np.where(has_tool, tool, corpus)
    out["support_score"] = support
    out["l2"] = [
        "refused" if r else "" if np.isnan(v) else rule.label(float(v))
        for v, r in zip(support, refused, strict=True)
    ]
    return out


def audit_citations(
    cites: pd.DataFrame,
    resolvers: Mapping[str, Resolver],
    scorer: SupportScorer | None,
    passage_of: Callable[[str, str], str | None] | None,
    rule: SupportRule,
    agent_read: Sequence[AgentRead | None] | None = None,
) -> pd.DataFrame:
    """Add l1, corpus (the corpus that decided L1, '' when none), then L2 by
    :func:`score_support` (evidence, evidence_calls, tool_score, corpus_score, support_score,
    l2). Without a scorer every l2 is empty ('unscored')."""
    out = cites.copy()
    resolved = resolve_l1(cites, resolvers)
    out["l1"] = [r.status for r in resolved]
    out["corpus"] = [r.corpus for r in resolved]
    return score_support(out, scorer, passage_of, rule, agent_read)


def _rate(k: int, n: int, level: float) -> tuple[float, float, float]:
    if n == 0:
        return (float("nan"),) * 3
    ci = wilson_ci(k, n, level)
    return ci.estimate, ci.lo, ci.hi


def audit_rates(audited: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """L1 and L2 rates pooled ('all'), by id_type, by model, and by model x id_type.

    L2 counts cover every scored citation (found, or unchecked and scored against what the
    agent read). Undefined rates (no found citation in a group) are empty cells, never 0.
    """
    groups: list[tuple[str, str, pd.DataFrame]] = [("all", "all", audited)]
    for key in ("id_type", "model"):
        for val, g in audited.groupby(key, sort=True):
            groups.append((key, str(val), g))
    for (m, t), g in audited.groupby(["model", "id_type"], sort=True):
        groups.append(("model:id_type", f"{m}:{t}", g))
    rows = []
    for by, group, g in groups:
        l1 = g["l1"].value_counts()
        found, notfound = int(l1.get("found", 0)), int(l1.get("notfound", 0))
        l2 = g.loc[g["l1"].isin(L2_SCORED), "l2"].value_counts()
        yes, partial, no = (int(l2.get(k, 0)) for k in L2_LABELS)
        scored = yes + partial + no
        ex, ex_lo, ex_hi = _rate(found, found + notfound, level)
        fab, fab_lo, fab_hi = _rate(notfound, found + notfound, level)
        wp, wp_lo, wp_hi = _rate(no, scored, level)
        ub, ub_lo, ub_hi = _rate(no + partial, scored, level)
        rows.append(
            {
                "by": by,
                "group": group,
                "n_cited": len(g),
                "found": found,
                "notfound": notfound,
                "transient": int(l1.get("transient", 0)),
                "unchecked": int(l1.get("unchecked", 0)),
                "existence_rate": ex,
                "existence_lo": ex_lo,
                "existence_hi": ex_hi,
                "fabrication_rate": fab,
                "fabrication_lo": fab_lo,
                "fabrication_hi": fab_hi,
                "l2_scored": scored,
                "l2_yes": yes,
                "l2_partial": partial,
                "l2_no": no,
                "wrong_paper_rate": wp,
                "wrong_paper_lo": wp_lo,
                "wrong_paper_hi": wp_hi,
                "wrong_paper_upper": ub,
                "wrong_paper_upper_lo": ub_lo,
                "wrong_paper_upper_hi": ub_hi,
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Corrected:
    estimate: float
    lo: float
    hi: float
    se: float


def rogan_gladen(
    k: int,
    n: int,
    sens_k: int,
    sens_n: int,
    fpr_k: int,
    fpr_n: int,
    level: float = 0.95,
) -> Corrected:
    """Misclassification-corrected rate p = (q - f) / (s - f) (Rogan & Gladen 1978).

    q = k / n is the observed 'no' rate; s = sens_k / sens_n = P(no | wrong paper) and
    f = fpr_k / fpr_n = P(no | right paper) are measured on a disjoint calibration set of known
    pairs. Interval: delta method with all three binomial variances (calibration uncertainty
    included), Var(p) ~ [Var(q) + (1 - p)^2 Var(f) + p^2 Var(s)] / (s - f)^2, estimate +- z se,
    clipped to [0, 1]. Requires s > f (an instrument better than chance).
    """
    from scipy.stats import norm

    for name, kk, nn in (("k", k, n), ("sens_k", sens_k, sens_n), ("fpr_k", fpr_k, fpr_n)):
        check_param(
            name, kk, nn >= 1 and 0 <= kk <= nn, f"in [0, n], n >= 1 (n={nn})", "rogan_gladen"
        )
    q, sv, f = k / n, sens_k / sens_n, fpr_k / fpr_n
    check_param("sens", sv, sv > f, f"> fpr ({f:.4g}): better than chance", "rogan_gladen")
    p = (q - f) / (sv - f)
    var = (q * (1 - q) / n + (1 - p) ** 2 * f * (1 - f) / fpr_n + p**2 * sv * (1 - sv) / sens_n) / (
        sv - f
    ) ** 2
    se = math.sqrt(max(var, 0.0))
    z = float(norm.ppf(1 - (1 - level) / 2))

    def clip(x: float) -> float:
        return float(min(1.0, max(0.0, x)))

    return Corrected(clip(p), clip(p - z * se), clip(p + z * se), se)
