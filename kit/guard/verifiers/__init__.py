"""Verifiers: the instruments that score claim-passage support, selected by card.

Step 1 of the renovation (docs/architecture.md) starts this sub-package with
:mod:`~kit.guard.verifiers.layout`, what a card folder holds; the verifier, its card, sessions and
exporters move here at step 4.
"""
