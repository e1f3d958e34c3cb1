"""Grading agent runs (docs/architecture.md, "Grading"; seed 002, OpenBioRQ).

Functional core, one rule per home:

* the agent-run record it grades is :mod:`kit.runs` (the run model and every run format);
  :mod:`kit.grade.reader` reads checklists and caches (the I/O edge).
* :mod:`kit.grade.checklist` -- frozen checklists, scoring, solve rates, inter-judge agreement.
* :mod:`kit.grade.judge` -- the built-in deterministic (lexical / verifier-backed) judge and
  the judge interface every checklist judge serves.
* :mod:`kit.grade.llm_judge`, :mod:`kit.grade.judge_prompt` -- an LLM checklist judge selected by
  card (kind ``llm-judge``): card, store, and how its reply becomes a verdict.
* :mod:`kit.grade.judge_swap` -- two judges on the same runs: agreement, solve-rate and rank moves.
* :mod:`kit.grade.citation_audit` -- L1 existence, L2 support, wrong-paper rates.
* :mod:`kit.grade.corpus` -- registry corpora for L1 through the DuckDB catalog (I/O edge).
* :mod:`kit.grade.support` -- support scorers (lexical baseline; the guard verifier plugs in).
* :mod:`kit.grade.behaviour` -- zero-tool, non-attempt, cite rates, tool calls.
* :mod:`kit.grade.replay` -- the tool-response replay cache.
* :mod:`kit.grade.frozen_core` -- all-roster-fail core and churn between decodes.
* :mod:`kit.grade.pubmedqa_corpus` -- the PubMedQA abstracts as a corpus (texts, MeSH neighbours).

The planted-truth generator (``planted.py``, behind the ``planted`` subcommand and the reproductions)
builds test data; production paths never import it.
"""
