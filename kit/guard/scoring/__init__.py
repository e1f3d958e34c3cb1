"""Scoring pairs: windows, the one score store, pair tables, the Ray engine.

See docs/architecture.md, "The renovation plan", step 4.
"""
