"""Importers: runs logged by other harnesses -> run format v2 records (docs/runs.md).

* :mod:`kit.runs.importers.inspect_log` -- inspect_ai EvalLogs (``.eval`` and ``.json``).
* :mod:`kit.runs.importers.lm_eval` -- lm-evaluation-harness ``samples_*.jsonl`` files.
* :mod:`kit.runs.importers.jsonl` -- any JSON Lines file of runs, through a ``--map`` of field paths.
* :mod:`kit.runs.importers.common` -- the summary and the (validated, atomic) writer they share.

Each importer returns v2 records as plain dicts; nothing is dropped: a sample the harness
failed on becomes a run with ``status: error``, one a limit cancelled a run with ``status:
limit``, both counted in the summary and never audited as answers.
"""
