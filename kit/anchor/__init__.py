"""Gold-anchored rates (issue 40, part 4): a judge's rate anchored on a small gold sample.

* :mod:`kit.anchor.rates` -- pure: the PPI++, judge-only and gold-only estimates of one rate,
  what counts as a gold sample too small, the warnings (on :mod:`kit.stats.ppi`).
* :mod:`kit.anchor.files` -- the shell of `kit anchor`: tables read and checked, the artifact,
  the printed table.
"""
