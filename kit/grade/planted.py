"""A planted-truth citation audit built from PubMedQA (pure; the RNG is passed in).

Purpose: show that the kit's two-level audit (kit.grade.citation_audit, seed 002 Appendix B /
C.1) recovers known rates. Construction, per seed:

* Corpus: the PubMedQA PQA-L items. A paper's text is its abstract without the conclusion (the
  CONTEXTS sections joined in order); its conclusion is LONG_ANSWER.
* On-topic wrong paper: for each item, the other item sharing the most *specific* MeSH terms
  (terms carried by at most ``specific_mesh_max_share`` of the corpus, i.e. not check tags such
  as Humans / Female / Adult); ties -> the smallest PMID. Items with no neighbour sharing at
  least ``min_shared_mesh`` specific terms are left out of the pool (counted).
* Answers: ``n_answers`` distinct items drawn without replacement; each answer is the item's real
  conclusion with one inline citation ``(PMID:x)``. The citation's planted type is drawn
  independently: ``wrong`` with probability p_wrong (x = the on-topic neighbour), ``fabricated``
  with p_fabricated (x = a random 8-digit number absent from the corpus), else ``right``
  (x = the item's own PMID). Independently, lookups fail transiently with p_transient (each
  distinct identifier's lookup fails with that probability: a simulated registry outage),
  which must never count as fabrication.
* Truth: fabrication rate among resolved lookups = p_fabricated; wrong-paper rate among found
  citations = p_wrong / (1 - p_fabricated).
* Checklists (how each is derived from its item, 6 criteria, weights in brackets):
  C1 must_mention [3] the conclusion's 4 most specific content tokens (highest IDF);
  C2 must_mention [2] the question's 3 most specific content tokens;
  C3 must_mention [1] the item's most specific MeSH term;
  C4 must_acknowledge [1] the study design (first design MeSH term ending in 'Studies' /
     'Trial' / 'Study'; else the token 'study');
  C5 must_ground [3] grounds the conclusion in PMID x or another supporting paper;
  C6 must_avoid [2] claims the searches found no relevant evidence.

The support instrument's error rates are measured on a disjoint calibration set (the items not
drawn as answers: each scored against its own and its neighbour's abstract), which lets the
audit report a Rogan-Gladen-corrected wrong-paper rate next to the raw no-rate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kit.core.errors import check_param
from kit.grade.checklist import Checklist, Criterion
from kit.grade.citation_audit import (
    FlakyResolver,
    SupportRule,
    audit_citations,
    citation_rows,
    rogan_gladen,
)
from kit.grade.pubmedqa_corpus import PubMedQACorpus, claim_text
from kit.grade.pubmedqa_corpus import build_corpus as _build_corpus
from kit.grade.text import content_tokens
from kit.guard.verifiers.support import SupportScorer
from kit.runs.model import AgentRun, Citation, ToolCall
from kit.stats.wilson import wilson_ci

AVOID_PHRASES = (
    "no relevant evidence",
    "no relevant information",
    "no relevant results",
    "could not find",
    "unable to find",
    "no studies were found",
)
PLANTED_MODEL = "planted-answers"
CONFUSION_COLUMNS = ["yes", "partial", "no", "l1:notfound", "l1:transient", "l1:unchecked"]


@dataclass(frozen=True)
class PlantedDesign:
    """Declared rates and sizes of the planted audit."""

    n_answers: int = 400
    p_wrong: float = 0.15
    p_fabricated: float = 0.05
    p_transient: float = 0.02
    min_shared_mesh: int = 1
    specific_mesh_max_share: float = 0.05

    def __post_init__(self) -> None:
        for name in ("p_wrong", "p_fabricated", "p_transient"):
            v = getattr(self, name)
            check_param(name, v, 0.0 <= v < 1.0, "in [0, 1)", "PlantedDesign")
        ok = self.p_wrong + self.p_fabricated < 1.0
        check_param(
            "p_wrong", self.p_wrong, ok, "with p_fabricated summing below 1", "PlantedDesign"
        )
        check_param("n_answers", self.n_answers, self.n_answers >= 10, ">= 10", "PlantedDesign")

    @property
    def wrong_given_found(self) -> float:
        return self.p_wrong / (1.0 - self.p_fabricated)


PlantedCorpus = PubMedQACorpus  # the planted set draws from the PubMedQA corpus as it is


def build_corpus(
    items: pd.DataFrame,
    contexts: pd.DataFrame,
    meshes: pd.DataFrame,
    design: PlantedDesign = PlantedDesign(),
) -> PubMedQACorpus:
    """The PubMedQA corpus with the design's neighbour rule (min shared / specific MeSH)."""
    return _build_corpus(
        items,
        contexts,
        meshes,
        min_shared_mesh=design.min_shared_mesh,
        specific_mesh_max_share=design.specific_mesh_max_share,
    )


def _top_tokens(text: str, df: Mapping[str, int], k: int) -> tuple[str, ...]:
    toks = sorted(set(content_tokens(text)), key=lambda t: (df.get(t, 0), t))
    return tuple(toks[:k])


def derive_checklist(corpus: PlantedCorpus, pmid: str) -> Checklist:
    """The 6-criterion checklist of one item (rules in the module docstring)."""
    mesh = sorted(corpus.meshes.get(pmid, ()), key=lambda m: (corpus.mesh_df.get(m, 0), m))
    design = [m for m in mesh if m.endswith(("Studies", "Study", "Trial"))]
    crits = (
        Criterion(
            "c1",
            "must_mention",
            "States the study's conclusion",
            3,
            _top_tokens(corpus.conclusion[pmid], corpus.token_df, 4),
        ),
        Criterion(
            "c2",
            "must_mention",
            "Addresses the question's specific topic",
            2,
            _top_tokens(corpus.question[pmid], corpus.token_df, 3),
        ),
        Criterion(
            "c3",
            "must_mention",
            "Names the specific subject",
            1,
            (mesh[0],) if mesh else ("study",),
        ),
        Criterion(
            "c4",
            "must_acknowledge",
            "Acknowledges the study design behind the evidence",
            1,
            (design[0],) if design else ("study",),
        ),
        Criterion(
            "c5",
            "must_ground",
            f"Grounds the conclusion in PMID {pmid} or another paper that supports it",
            3,
        ),
        Criterion(
            "c6", "must_avoid", "Claims the searches found no relevant evidence", 2, AVOID_PHRASES
        ),
    )
    return Checklist(f"pubmedqa-{pmid}", corpus.question[pmid], crits)


@dataclass(frozen=True)
class PlantedSet:
    design: PlantedDesign
    seed: int
    runs: tuple[AgentRun, ...]
    truth: pd.DataFrame = field(hash=False)  # run_id, pmid, citation, planted, transient
    calibration: tuple[str, ...]  # items not drawn (for the instrument's error rates)
    failed_lookups: frozenset[str]  # identifiers whose lookup fails transiently


def _fake_pmid(rng: np.random.Generator, known: set[str]) -> str:
    while True:
        v = str(int(rng.integers(10_000_000, 99_999_999)))
        if v not in known:
            return v


def plant(
    corpus: PlantedCorpus, design: PlantedDesign, rng: np.random.Generator, seed: int = 0
) -> PlantedSet:
    """Draw one planted audit set (see module docstring); ``seed`` is recorded, rng is used."""
    pool = corpus.pool
    check_param(
        "n_answers", design.n_answers, design.n_answers <= len(pool), f"<= {len(pool)}", "plant"
    )
    drawn = sorted(rng.choice(len(pool), size=design.n_answers, replace=False))
    chosen = [pool[i] for i in drawn]
    kinds = rng.choice(
        ["right", "wrong", "fabricated"],
        size=len(chosen),
        p=[1 - design.p_wrong - design.p_fabricated, design.p_wrong, design.p_fabricated],
    )
    known = set(corpus.pmids)
    cited_values = [
        p if k == "right" else corpus.neighbour[p] if k == "wrong" else _fake_pmid(rng, known)
        for p, k in zip(chosen, kinds, strict=True)
    ]
    distinct = sorted(set(cited_values))
    fails = rng.random(len(distinct)) < design.p_transient
    failed = frozenset(v for v, f in zip(distinct, fails, strict=True) if f)
    runs, truth = [], []
    width = len(str(design.n_answers))
    for j, (p, kind, cited) in enumerate(zip(chosen, kinds, cited_values, strict=True)):
        tr = cited in failed
        answer = f"{claim_text(corpus, p)} (PMID:{cited})."
        run_id = f"planted-{seed}-{j:0{width}d}"
        runs.append(
            AgentRun(
                run_id=run_id,
                task_id=f"pubmedqa-{p}",
                model=PLANTED_MODEL,
                answer=answer,
                cited=(Citation("PMID", cited),),
                tool_calls=(ToolCall("pubmed_fetch", {"pmid": cited}, None, "ok"),),
                tools_enabled=True,
                difficulty="planted",
            )
        )
        truth.append(
            {
                "run_id": run_id,
                "pmid": p,
                "citation": f"PMID:{cited}",
                "planted": str(kind),
                "transient": bool(tr),
            }
        )
    chosen_set = set(chosen)
    calibration = tuple(p for p in pool if p not in chosen_set)
    return PlantedSet(design, seed, tuple(runs), pd.DataFrame(truth), calibration, failed)


# Declared L2 thresholds per instrument, set once from each instrument's score distributions on
# PubMedQA right / on-topic-wrong pairs (about 6% of right pairs fall below partial_at and 5% of
# wrong pairs reach it), never tuned per seed.
LEXICAL_RULE = SupportRule(yes_at=0.35, partial_at=0.25)
MINILM_RULE = SupportRule(yes_at=0.84, partial_at=0.80)


def calibrate_instrument(
    corpus: PlantedCorpus, items: Sequence[str], scorer: SupportScorer, rule: SupportRule
) -> dict[str, int]:
    """Counts of L2 'no' on known pairs: each item's conclusion against its own abstract (right)
    and its on-topic neighbour's abstract (wrong)."""
    claims = [claim_text(corpus, p) for p in items]
    right = np.asarray(scorer.score(claims, [corpus.abstract.get(p, "") for p in items]))
    wrong = np.asarray(
        scorer.score(claims, [corpus.abstract.get(corpus.neighbour[p], "") for p in items])
    )
    no_r = sum(rule.label(float(x)) == "no" for x in right)
    no_w = sum(rule.label(float(x)) == "no" for x in wrong)
    return {"sens_k": int(no_w), "sens_n": len(items), "fpr_k": int(no_r), "fpr_n": len(items)}


def audit_planted(
    corpus: PlantedCorpus,
    pset: PlantedSet,
    scorer: SupportScorer,
    rule: SupportRule,
    level: float = 0.95,
) -> dict[str, pd.DataFrame]:
    """Run the two-level audit on a planted set and compare every rate with its planted truth.

    Returns ``citations`` (audited rows with the planted type), ``recovery`` (metric, planted,
    k, n, estimate, lo, hi, covered) and ``confusion`` (planted type x L1 / L2 label counts).
    """
    cites = citation_rows(pset.runs)
    resolver = FlakyResolver(frozenset(corpus.pmids), pset.failed_lookups)
    audited = audit_citations(
        cites,
        {"PMID": resolver},
        scorer,
        lambda _t, v: corpus.abstract.get(v),
        rule,
    )
    audited = audited.merge(pset.truth[["run_id", "planted", "pmid"]], on="run_id", how="left")
    l1 = audited["l1"].value_counts()
    found, notfound = int(l1.get("found", 0)), int(l1.get("notfound", 0))
    scored = audited[audited["l2"] != ""]
    no = int((scored["l2"] == "no").sum())
    partial = int((scored["l2"] == "partial").sum())
    cal = calibrate_instrument(corpus, pset.calibration, scorer, rule)
    d = pset.design
    rows = []

    def add(metric: str, planted: float, k: int, n: int, note: str) -> None:
        ci = wilson_ci(k, n, level)
        rows.append(
            {
                "metric": metric,
                "planted": planted,
                "k": k,
                "n": n,
                "estimate": ci.estimate,
                "lo": ci.lo,
                "hi": ci.hi,
                "covered": bool(ci.lo <= planted <= ci.hi),
                "note": note,
            }
        )

    add(
        "fabrication_rate",
        d.p_fabricated,
        notfound,
        found + notfound,
        "notfound / (found + notfound); Wilson",
    )
    n_transient = int(l1.get("transient", 0))
    add(
        "transient_excluded",
        float("nan"),
        n_transient,
        len(audited),
        "lookups failed; excluded, never fabrication; covered = all outages seen",
    )
    rows[-1]["covered"] = bool(n_transient == int(pset.truth["transient"].sum()))
    add(
        "wrong_paper_raw",
        d.wrong_given_found,
        no,
        len(scored),
        "L2 no / found; Wilson; biased by instrument error",
    )
    add(
        "wrong_paper_upper",
        d.wrong_given_found,
        no + partial,
        len(scored),
        "(no + partial) / found; Wilson; an upper bound: covered = planted <= hi",
    )
    rows[-1]["covered"] = bool(d.wrong_given_found <= rows[-1]["hi"])
    rg = rogan_gladen(no, len(scored), **cal, level=level)
    rows.append(
        {
            "metric": "wrong_paper_corrected",
            "planted": d.wrong_given_found,
            "k": no,
            "n": len(scored),
            "estimate": rg.estimate,
            "lo": rg.lo,
            "hi": rg.hi,
            "covered": bool(rg.lo <= d.wrong_given_found <= rg.hi),
            "note": (
                f"Rogan-Gladen; instrument P(no|wrong)={cal['sens_k']}/{cal['sens_n']}, "
                f"P(no|right)={cal['fpr_k']}/{cal['fpr_n']} on {cal['sens_n']} held-out items"
            ),
        }
    )
    recovery = pd.DataFrame(rows)
    lab = audited["l2"].where(audited["l2"] != "", "l1:" + audited["l1"])
    confusion = (
        pd.crosstab(audited["planted"], lab)
        .reindex(index=["right", "wrong", "fabricated"], columns=CONFUSION_COLUMNS, fill_value=0)
        .reset_index()
        .rename_axis(None, axis=1)
    )
    return {"citations": audited, "recovery": recovery, "confusion": confusion}


def coverage_over_seeds(
    corpus: PlantedCorpus,
    design: PlantedDesign,
    seeds: Sequence[int],
    scorer: SupportScorer,
    rule: SupportRule,
    level: float = 0.95,
) -> pd.DataFrame:
    """Share of seeds whose interval covers the planted rate, per metric (with mean estimate)."""
    recs = []
    for seed in seeds:
        pset = plant(corpus, design, np.random.default_rng(seed), seed)
        rec = audit_planted(corpus, pset, scorer, rule, level)["recovery"]
        recs.append(rec.assign(seed=seed))
    allr = pd.concat(recs, ignore_index=True)
    allr = allr[allr["metric"] != "transient_excluded"]
    out = (
        allr.groupby("metric", sort=True)
        .agg(
            planted=("planted", "first"),
            n_seeds=("seed", "size"),
            mean_estimate=("estimate", "mean"),
            coverage=("covered", "mean"),
        )
        .reset_index()
    )
    return out
