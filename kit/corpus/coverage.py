"""Declared coverage and the L1 decision over several corpora (pure).

A corpus *declares* what it covers, per identifier scheme; nothing is assumed:

* ``complete`` -- every identifier of the scheme in ``[lo, hi]`` that exists is in the corpus
  (e.g. "PMID: every record of the 2026 MEDLINE baseline, ids <= 40,000,000"). Only numbered
  schemes (PMID, PMCID, NCT) can be declared complete, over a stated range.
* ``sample`` -- the corpus holds some identifiers of the scheme; absence proves nothing.

The L1 decision for one cited identifier over corpora in a stated order (:func:`decide`):

1. the first corpus (in order) that holds it resolves it: ``found``;
2. else, when a lookup failed in any corpus: ``transient`` (the failed corpus might hold it);
3. else, when a corpus lists it as deleted (a MEDLINE DeleteCitation): ``unchecked`` -- the
   record existed, so citing it is no fabrication;
4. else, when a corpus declares complete coverage that contains it: ``notfound`` (possible
   fabrication), naming that corpus;
5. else ``unchecked``: outside every declared complete coverage, never counted as fabrication.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kit.core.errors import ConfigError
from kit.corpus.identifiers import NUMERIC_SCHEMES, SCHEMES, Identifier, numeric

COVERAGE_KINDS = ("complete", "sample")
LOOKUP_OUTCOMES = ("found", "absent", "deleted", "transient")


@dataclass(frozen=True)
class Coverage:
    """One scheme's declared coverage in one corpus."""

    scheme: str
    kind: str
    statement: str
    lo: int | None = None
    hi: int | None = None

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise ConfigError("bad_coverage", f"unknown identifier scheme {self.scheme!r}")
        if self.kind not in COVERAGE_KINDS:
            raise ConfigError(
                "bad_coverage", f"coverage kind must be complete or sample, got {self.kind!r}"
            )
        if self.kind == "complete":
            if self.scheme not in NUMERIC_SCHEMES:
                raise ConfigError(
                    "bad_coverage",
                    f"{self.scheme} cannot be declared complete: only numbered schemes "
                    f"({', '.join(NUMERIC_SCHEMES)}) over a stated range",
                )
            if self.lo is None or self.hi is None or not 0 <= self.lo <= self.hi:
                raise ConfigError(
                    "bad_coverage",
                    f"complete {self.scheme} coverage needs a range lo <= hi, got {self.lo}..{self.hi}",
                )

    def covers(self, ident: Identifier) -> bool:
        """True when this declaration says ``ident`` would be in the corpus if it existed."""
        if self.kind != "complete" or ident.scheme != self.scheme:
            return False
        n = numeric(ident)
        return (
            n is not None
            and self.lo is not None
            and self.hi is not None
            and self.lo <= n <= self.hi
        )

    def describe(self) -> str:
        rng = f" {self.lo}..{self.hi}" if self.kind == "complete" else ""
        return f"{self.scheme} {self.kind}{rng}: {self.statement}"

    def to_dict(self) -> dict[str, object]:
        return {
            "scheme": self.scheme,
            "kind": self.kind,
            "statement": self.statement,
            "lo": self.lo,
            "hi": self.hi,
        }


def parse_coverage(spec: str, statement: str = "") -> Coverage:
    """``PMID=complete:1-40000000`` or ``DOI=sample`` -> :class:`Coverage` (ConfigError else)."""
    scheme, sep, rest = spec.partition("=")
    scheme = scheme.strip().upper()
    if not sep:
        raise ConfigError(
            "bad_coverage", f"expected SCHEME=complete:LO-HI or SCHEME=sample, got {spec!r}"
        )
    kind, _, rng = rest.partition(":")
    kind = kind.strip().lower()
    lo = hi = None
    if kind == "complete":
        a, dash, b = rng.partition("-")
        if not dash or not a.strip().isdigit() or not b.strip().isdigit():
            raise ConfigError("bad_coverage", f"complete coverage needs LO-HI, got {spec!r}")
        lo, hi = int(a), int(b)
    elif rng:
        raise ConfigError("bad_coverage", f"a sample has no range, got {spec!r}")
    return Coverage(scheme, kind, statement or spec, lo, hi)


@dataclass(frozen=True)
class Resolution:
    """One identifier's L1 outcome: status, the corpus that decided it ('' when none), the
    document it resolved to (found only) and a note (why unchecked / notfound)."""

    status: str
    corpus: str = ""
    doc_id: str = ""
    note: str = ""


def decide(
    ident: Identifier,
    order: Sequence[str],
    lookups: Mapping[str, tuple[str, str]],
    coverage: Mapping[str, Sequence[Coverage]],
) -> Resolution:
    """The L1 decision (module doc, rules 1-5). ``lookups[corpus] = (outcome, doc_id)`` with
    outcome in :data:`LOOKUP_OUTCOMES`; ``coverage[corpus]`` that corpus's declarations."""
    for name in order:
        outcome, doc = lookups.get(name, ("absent", ""))
        if outcome == "found":
            return Resolution("found", name, doc)
    failed = [n for n in order if lookups.get(n, ("absent", ""))[0] == "transient"]
    if failed:
        return Resolution("transient", failed[0], note=f"lookup failed in {', '.join(failed)}")
    for name in order:
        if lookups.get(name, ("absent", ""))[0] == "deleted":
            return Resolution("unchecked", name, note="deleted record (DeleteCitation)")
    for name in order:
        for cov in coverage.get(name, ()):
            if cov.covers(ident):
                return Resolution("notfound", name, note=f"absent inside {cov.describe()}")
    return Resolution(
        "unchecked",
        "",
        note=f"{ident.scheme} outside every declared complete coverage ({', '.join(order) or 'no corpus'})",
    )
