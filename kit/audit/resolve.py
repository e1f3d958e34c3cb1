"""Stage L1: does each cited identifier exist? (pure; resolvers injected).

Every L1 decision goes through :func:`kit.grade.citation_audit.resolve_l1` with the resolvers of
a :class:`kit.corpus.store.CorpusChain`: the corpora in the order given, the first that holds an
identifier resolves it (found); notfound only inside a corpus's declared complete coverage; else
unchecked, never fabrication. L1 is corpus-based only: a tool response the agent read does not
prove that an identifier exists inside declared coverage.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from kit.grade.citation_audit import Resolver, resolve_l1

RESOLUTION_RULE = (
    "corpora in the order given (--corpus): the first that holds a cited identifier resolves it "
    "(found); else notfound (possible fabrication) only when a corpus declares complete coverage "
    "containing it; else unchecked (never counted as fabrication); tool responses the agent "
    "read never decide L1"
)


def resolve(rows: pd.DataFrame, resolvers: Mapping[str, Resolver]) -> pd.DataFrame:
    """``rows`` with ``l1`` (found / notfound / transient / unchecked) and ``corpus`` (the corpus
    that decided it, '' when none)."""
    out = rows.copy()
    resolved = resolve_l1(rows, resolvers)
    out["l1"] = [r.status for r in resolved]
    out["corpus"] = [r.corpus for r in resolved]
    return out
