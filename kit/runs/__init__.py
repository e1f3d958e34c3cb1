"""Agent runs: the run model and every run format (docs/runs.md).

* :mod:`kit.runs.model` -- :class:`~kit.runs.model.AgentRun` and its parts (citations, claims,
  tool calls): what every reader returns and every audit stage reads.
* :mod:`kit.runs.v1` -- validate one v1 record (``schemas/json/agent_run.schema.json``); write one.
* :mod:`kit.runs.v2` -- validate one v2 record (``schemas/json/agent_run.v2.schema.json``).
* :mod:`kit.runs.reader` -- read a runs JSONL file of v1 and/or v2 records (the I/O edge).
* :mod:`kit.runs.extract` -- claims and citations from an answer and its reference list.
* :mod:`kit.runs.citations` -- the citation-marker tokenizer (numeric, identifier, author-year).
* :mod:`kit.runs.sentences` -- the sentence splitter the markers and the verifier's windows share.
* :mod:`kit.runs.importers` -- harness logs (inspect_ai, lm-evaluation-harness, any JSONL) -> v2
  records.

The layering (docs/architecture.md) puts this package below the domains that read runs (guard,
grade, audit): it imports the ground floor and :mod:`kit.corpus` only.
"""
