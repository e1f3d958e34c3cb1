"""The built-in deterministic checklist judge (pure; the support scorer is injected).

Seed 002 (OpenBioRQ) grades answers with an LLM judge against frozen checklists (Section
"Checklist-based grading"). The kit cannot ship that judge, so it defines an honest,
reproducible one and states exactly what it checks (any other judge's verdicts can be imported
as a table instead, ``schemas/grade_verdicts.yaml``):

* must_mention / must_acknowledge: coverage = fraction of the criterion's key ``terms`` present
  in the answer (a term is present when all its content tokens occur, kit.grade.text);
  met iff coverage >= ``met_coverage``, partial iff coverage >= ``partial_coverage``, else not_met.
* must_avoid: the verdict records whether the prohibited content is present (polarity is
  inverted at scoring time): met iff any of the ``terms`` occurs as a whole-token phrase.
* must_ground: not_met when the answer cites nothing. With a support scorer and a passage
  lookup, s = max over the cited identifiers that resolve of scorer(answer without its citation
  markers, passage): met iff
  s >= ``ground_yes``, partial iff s >= ``ground_partial``; no resolving citation -> not_met.
  Without a scorer, term coverage as for must_mention, but only when something is cited.
* A criterion without terms is judged by the scorer on (criterion text, answer) with the
  ground thresholds; without a scorer that is a ConfigError (the judge refuses to guess).

The scorer is any :class:`kit.guard.verifiers.support.SupportScorer` -- the lexical baseline or a
citation guard verifier.

Judges are instruments selected by card (docs/architecture.md, "Instruments and gold"):
:func:`judge_runs` hands every (question, criterion, answer) of the runs to a
:class:`ChecklistJudge` in one batch and never branches on its kind -- :class:`LexicalJudge` (these
rules; the default and the baseline; no reason) or :class:`kit.grade.llm_judge.LlmJudge` (a chat
model; its short reason kept in the verdict table's ``reason`` column).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from kit.core.errors import ConfigError, InputError, Location, check_param
from kit.grade.checklist import Checklist, Criterion
from kit.grade.citation_audit import CITATION_MARKER
from kit.grade.judge_protocol import ChecklistJudge, JudgeItem, Verdict
from kit.grade.text import content_set, phrase_present, term_present
from kit.guard.verifiers.support import SupportScorer
from kit.runs.model import AgentRun, Citation

NO_TOOLS_SUFFIX = "[no tools]"
PassageOf = Callable[[Citation], str | None]
VERDICT_COLUMNS = [
    "judge",
    "model",
    "task_id",
    "run_id",
    "criterion_id",
    "verdict",
    "evidence",
    "reason",
]


@dataclass(frozen=True)
class JudgeRule:
    """Declared thresholds of the lexical judge (see module docstring)."""

    met_coverage: float = 1.0
    partial_coverage: float = 0.5
    ground_yes: float = 0.5
    ground_partial: float = 0.3

    def __post_init__(self) -> None:
        ok = 0.0 <= self.partial_coverage <= self.met_coverage <= 1.0
        check_param(
            "met_coverage", self.met_coverage, ok, ">= partial_coverage, in [0, 1]", "JudgeRule"
        )
        ok2 = 0.0 <= self.ground_partial <= self.ground_yes <= 1.0
        check_param("ground_yes", self.ground_yes, ok2, ">= ground_partial, in [0, 1]", "JudgeRule")


def _band(x: float, hi: float, lo: float) -> str:
    return "met" if x >= hi else "partial" if x >= lo else "not_met"


def judge_criterion(
    criterion: Criterion,
    answer: str,
    cited: Sequence[Citation],
    rule: JudgeRule = JudgeRule(),
    scorer: SupportScorer | None = None,
    passage_of: PassageOf | None = None,
) -> tuple[str, float]:
    """(verdict, evidence) for one criterion; evidence is the coverage or support score."""
    toks = content_set(answer)
    if criterion.kind == "must_avoid":
        if criterion.terms:
            hit = any(phrase_present(t, answer) for t in criterion.terms)
            return ("met" if hit else "not_met"), float(hit)
    elif criterion.kind == "must_ground":
        if not cited:
            return "not_met", 0.0
        if scorer is not None and passage_of is not None:
            texts = [t for t in (passage_of(c) for c in cited) if t]
            if not texts:
                return "not_met", 0.0
            claim = CITATION_MARKER.sub(" ", answer)
            s = float(max(scorer.score([claim] * len(texts), texts)))
            return _band(s, rule.ground_yes, rule.ground_partial), s
    if criterion.terms:
        cov = sum(term_present(t, toks) for t in criterion.terms) / len(criterion.terms)
        return _band(cov, rule.met_coverage, rule.partial_coverage), cov
    if scorer is None:
        raise ConfigError(
            "cannot_judge",
            f"criterion {criterion.id!r} ({criterion.kind}) has no key terms and no support "
            "scorer was given; add 'terms' to the checklist or pass a scorer",
        )
    s = float(scorer.score([criterion.text], [answer])[0])
    return _band(s, rule.ground_yes, rule.ground_partial), s


@dataclass(frozen=True)
class LexicalJudge:
    """The built-in deterministic judge (:func:`judge_criterion`) as a :class:`ChecklistJudge`."""

    rule: JudgeRule = JudgeRule()
    scorer: SupportScorer | None = None
    passage_of: PassageOf | None = None

    def judge(self, items: Sequence[JudgeItem]) -> list[Verdict]:
        out = []
        for it in items:
            v, ev = judge_criterion(
                it.criterion, it.answer, it.cited, self.rule, self.scorer, self.passage_of
            )
            out.append(Verdict(v, ev, None))
        return out


def open_judge(
    spec: str,
    store_root: Path | None,
    rule: JudgeRule = JudgeRule(),
    scorer: SupportScorer | None = None,
    passage_of: PassageOf | None = None,
) -> tuple[ChecklistJudge, str]:
    """The judge ``spec`` names and its name: ``lexical`` (:class:`LexicalJudge` with ``rule``,
    ``scorer`` and ``passage_of``), else a card folder of kind ``llm-judge``
    (:class:`kit.grade.llm_judge.LlmJudge`, its verdicts in the score store under
    ``store_root``; it reads the answer only, so ``scorer`` and ``passage_of`` are unused)."""
    if spec == "lexical":
        return LexicalJudge(rule, scorer, passage_of), "lexical"
    from kit.grade.llm_judge import LlmJudge, load_judge_card

    card = load_judge_card(Path(spec))
    return LlmJudge(card, store_root), str(card["name"])


def judge_runs(
    checklists: Mapping[str, Checklist],
    runs: Sequence[AgentRun],
    judge: str = "lexical",
    rule: JudgeRule = JudgeRule(),
    scorer: SupportScorer | None = None,
    passage_of: PassageOf | None = None,
    instrument: ChecklistJudge | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Verdict rows for every run whose task has a checklist; also the run_ids without one.

    ``instrument`` grades every criterion (default: :class:`LexicalJudge` with ``rule``,
    ``scorer`` and ``passage_of``); ``judge`` is its name in the table.

    A tool-disabled run (the no-tool ablation) is graded as its own entry, model
    ``"<model> [no tools]"``, so it never mixes with the same model's tool-enabled runs. Two
    runs of one entry on one task are an InputError naming both run ids.
    """
    inst = instrument if instrument is not None else LexicalJudge(rule, scorer, passage_of)
    keys: list[dict[str, str]] = []
    items: list[JudgeItem] = []
    unmatched = []
    seen: dict[tuple[str, str], str] = {}
    for run in sorted(runs, key=lambda r: r.run_id):
        cl = checklists.get(run.task_id)
        if cl is None:
            unmatched.append(run.run_id)
            continue
        entry = run.model if run.tools_enabled else f"{run.model} {NO_TOOLS_SUFFIX}"
        if (entry, run.task_id) in seen:
            raise InputError(
                "duplicate_attempt",
                f"runs {seen[(entry, run.task_id)]!r} and {run.run_id!r} both grade model "
                f"{entry!r} on task {run.task_id!r}; keep one attempt per (model, task)",
                where=Location(column="run_id"),
            )
        seen[(entry, run.task_id)] = run.run_id
        for c in cl.criteria:
            items.append(JudgeItem(cl.question, c, run.answer, tuple(run.cited)))
            keys.append(
                {"model": entry, "task_id": run.task_id, "run_id": run.run_id, "criterion_id": c.id}
            )
    verdicts = inst.judge(items)
    rows = [
        {
            "judge": judge,
            **k,
            "verdict": v.verdict,
            "evidence": float("nan") if v.evidence is None else float(v.evidence),
            "reason": v.reason,
        }
        for k, v in zip(keys, verdicts, strict=True)
    ]
    frame = pd.DataFrame(rows, columns=VERDICT_COLUMNS)
    frame["evidence"] = frame["evidence"].astype("float64")
    frame["reason"] = frame["reason"].astype(object)
    return frame, unmatched
