"""The support-scorer interface: anything that scores (claim, passage) support in [0, 1].

Every verifier (:class:`kit.guard.verifiers.card.Verifier`: the same ``score`` and a card) is
one, and so is the lexical baseline of the checklist judge and of L2
(:class:`kit.grade.support.LexicalSupport`); the citation audit, the checklist judge, the planted
audit and the audit's stages take any of them. docs/architecture.md, "Instruments and gold".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class SupportScorer(Protocol):
    """One score in [0, 1] per (claim, passage) pair, in order."""

    def score(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray: ...
