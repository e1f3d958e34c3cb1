"""The pure pieces of `kit audit`, by stage (kept importable from here for older callers).

Each lives in its stage module: flags (:mod:`kit.audit.flags`), re-attribution
(:mod:`kit.audit.reattribution`), headline numbers, per-run table and planted comparison
(:mod:`kit.audit.summary`), board placement (:mod:`kit.audit.board`).
"""

from __future__ import annotations

from kit.audit.board import board_placement
from kit.audit.flags import FLAG_REASONS, InstrumentCounts, flag_citations, instrument_items
from kit.audit.reattribution import CorpusIndex, suggest_reattribution
from kit.audit.summary import (
    CITATION_COLUMNS,
    RUN_COLUMNS,
    behaviour_headline,
    checklist_headline,
    citation_headline,
    json_clean,
    planted_comparison,
    run_table,
)

__all__ = [
    "CITATION_COLUMNS",
    "FLAG_REASONS",
    "RUN_COLUMNS",
    "CorpusIndex",
    "InstrumentCounts",
    "behaviour_headline",
    "board_placement",
    "checklist_headline",
    "citation_headline",
    "flag_citations",
    "instrument_items",
    "json_clean",
    "planted_comparison",
    "run_table",
    "suggest_reattribution",
]
