"""The LLM instrument: a chat model behind an OpenAI-compatible endpoint, as verifier or judge.

What every LLM instrument shares -- the card's identity (``instrument_sha256``), the card folder,
the first answer token of a reply (:mod:`~kit.guard.verifiers.llm.instrument`) and the network
client with its retries, refusals and usage counts (:mod:`~kit.guard.verifiers.llm.client`) --
is used by both the LLM verifier here (:mod:`~kit.guard.verifiers.llm.verifier`, its yes / no
prompt :mod:`~kit.guard.verifiers.llm.prompt`) and the LLM checklist judge
(:mod:`kit.grade.llm_judge`). docs/architecture.md, "Instruments and gold".
"""
