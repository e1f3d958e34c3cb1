"""Stage: runs -> claims and their citations (pure).

One row per (run, claim, cited identifier) for runs that carry claims (run format v2: given
explicitly, or extracted from the answer by :mod:`kit.runs.extract`), one row per (run,
distinct identifier) with the claim cut from the answer for v1 runs -- the rule of
:func:`kit.grade.citation_audit.citation_rows`, the audit's one citation table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from kit.grade.citation_audit import citation_rows
from kit.runs.model import AgentRun


@dataclass(frozen=True)
class Claims:
    """The citation rows (:data:`kit.grade.citation_audit.CITATION_ROW_COLUMNS`) and counts of
    the claims they come from."""

    rows: pd.DataFrame
    n_claims: int  # claims of runs that carry claims
    n_citing: int  # of which cite at least one identifier
    n_unresolved: int  # markers naming no reference-list entry (a fabricated reference)
    n_ambiguous: int = 0  # markers naming several entries (RunClaim.ambiguous): none attached


def claim_rows(runs: Sequence[AgentRun]) -> Claims:
    """Citation rows of ``runs`` and their claim counts."""
    claims = [c for r in runs for c in r.claims]
    return Claims(
        citation_rows(runs),
        len(claims),
        sum(1 for c in claims if c.cites),
        sum(len(c.unresolved) for c in claims),
        sum(len(c.ambiguous) for c in claims),
    )
