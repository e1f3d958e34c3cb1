"""Agent runs in the kit's run formats (docs/runs.md).

* :mod:`kit.runs.reader` -- read a runs JSONL file of v1 and/or v2 records (the I/O edge).
* :mod:`kit.runs.v2` -- validate one v2 record (``schemas/json/agent_run.v2.schema.json``) into
  the audit's :class:`kit.grade.runs.AgentRun`.
* :mod:`kit.runs.extract` -- claims and citations from an answer and its reference list.
"""
