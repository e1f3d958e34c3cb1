"""`kit audit`: one command that audits an agent's runs end to end (issue 8).

The pieces already live elsewhere (kit.grade: runs, L1/L2 citation audit, checklists, behaviour;
kit.guard: verifier, conformal tau, BM25; kit.certify: the board engine; kit.release.receipts).
This package only joins them:

* :mod:`kit.audit.core` -- pure orchestration: conformal flags, re-attribution suggestions,
  headline numbers with their intervals, planted-vs-recovered comparison, board placement.
  No file I/O, no printing; RNG passed in.
* :mod:`kit.audit.runner` -- the I/O shell: read and hash inputs, load the verifier, score through
  the shared score store (:mod:`kit.guard.score_store`), write every output into a staged
  folder swapped in atomically.
"""
