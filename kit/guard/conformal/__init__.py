"""The split-conformal flag rule, its calibration and the shift check.

See docs/architecture.md, "The renovation plan", step 4.
"""
