"""Verifiers: the instruments that score claim-passage support, selected by card.

The card and the verifier interface (:mod:`~kit.guard.verifiers.card`; the support-scorer
interface every verifier meets, :mod:`~kit.guard.verifiers.support`), the scoring rules
(:mod:`~kit.guard.verifiers.rules`, :mod:`~kit.guard.verifiers.fitted_rule`,
:mod:`~kit.guard.verifiers.two_stage`), the ONNX sessions and their batches
(:mod:`~kit.guard.verifiers.session`, :mod:`~kit.guard.verifiers.batching`), loading by card
(:mod:`~kit.guard.verifiers.load`), what a card folder holds (:mod:`~kit.guard.verifiers.layout`),
the builders and importers (``export``, ``cross_export``, ``import_card``, ``build_record``),
the LLM instrument (``llm``: client, card identity, verifier, prompt) and the validation
(``validate_card``). docs/architecture.md, "Citation guard"; step 4 of its renovation plan.
"""
