"""Reproductions of published tables and figures: one function per entry.

A reproduction is ``f(raw: Path, **resources) -> dict[str, pandas.DataFrame]``: it reads
registry files from ``raw`` (a fetched ``data/raw``), calls the kit's pure core, and returns named
tables. Its declaration lives in ``reproduce/<name>.yaml`` (see :mod:`kit.release.reproduce`),
its frozen outputs in ``reproduce/expected/``.
"""
