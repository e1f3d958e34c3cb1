"""Training and adapting the kit's cross-encoder verifier.

See docs/architecture.md, "The renovation plan", step 4.
"""
