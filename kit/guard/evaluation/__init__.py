"""Evaluating verifiers: AUC, agreement, comparison, validation, the card report.

See docs/architecture.md, "The renovation plan", step 4.
"""
