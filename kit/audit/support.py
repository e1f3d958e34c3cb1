"""Stage L2: does the cited text support the claim? (pure apart from the injected scorer).

Checked first against what the agent read (:mod:`kit.audit.evidence`: the tool responses of the
run that name the cited identifier), then against the corpus passage; both through the same
scorer (the verifier behind the one score store, so s = max over the passage's windows with the
verifier's own window rule) and the same thresholds. The final label follows
:data:`kit.grade.citation_audit.EVIDENCE_RULE`, applied by
:func:`kit.grade.citation_audit.score_support` (the kit's one L2 path).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from kit.audit.evidence import agent_read_rows
from kit.grade.citation_audit import SupportRule, score_support
from kit.guard.verifiers.support import SupportScorer
from kit.runs.model import AgentRun, Citation


def support(
    rows: pd.DataFrame,
    runs: Sequence[AgentRun],
    scorer: SupportScorer | None,
    passage_of: Callable[[str, str], str | None] | None,
    rule: SupportRule,
) -> pd.DataFrame:
    """``rows`` (with ``l1``) plus evidence, evidence_calls, tool_score, corpus_score,
    support_score and l2."""
    by_label = {(r.run_id, c.label): c for r in runs for c in r.cited}
    cites: list[Citation] = [
        by_label[(rid, lab)] for rid, lab in zip(rows["run_id"], rows["citation"], strict=True)
    ]
    read = agent_read_rows(runs, list(rows["run_id"]), cites)
    return score_support(rows, scorer, passage_of, rule, read)
