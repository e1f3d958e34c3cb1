"""`kit audit`: one pipeline that audits an agent's runs end to end (issues 8, 16).

runs -> claims and citations -> L1 -> L2 -> conformal flags -> re-attribution -> grading ->
behaviour -> summary -> report, one small stage module each, with typed inputs and outputs:

* :mod:`kit.audit.inputs` -- :class:`~kit.audit.inputs.AuditOptions` and every input read and
  validated before anything is scored (``--limit``: the first N runs in the file's order).
* :mod:`kit.audit.claims` -- citation rows: one per (run, claim, cited identifier) for runs with
  claims (run format v2), one per (run, identifier) for v1 runs.
* :mod:`kit.audit.resolve` -- L1 over the corpus chain (declared coverage; corpus-based only).
* :mod:`kit.audit.evidence` + :mod:`kit.audit.support` -- L2, checked first against the tool
  responses the agent read, then against the corpus passage (one scorer, one score store).
* :mod:`kit.audit.flags` -- calibration, tau, the conformal flag rule and its guarantee.
* :mod:`kit.audit.reattribution` -- BM25 + verifier suggestions for flagged citations.
* :mod:`kit.audit.grading`, :mod:`kit.audit.board` -- checklists, behaviour, board placement.
* :mod:`kit.audit.summary` -- headline numbers, per-run table, planted comparison, summary.json.
* :mod:`kit.audit.pipeline` -- opens corpora / verifier / store and calls the stages;
  :func:`~kit.audit.pipeline.audit_l1_l2` is `kit grade audit-citations` (the same stages).
* :mod:`kit.audit.runner` -- the I/O shell: staged, sealed outputs.
"""
