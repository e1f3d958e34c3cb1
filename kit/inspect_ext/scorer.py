"""``kit/citation_support``: the kit's citation audit as an inspect_ai scorer.

Per sample: the kit's run from the ``TaskState`` by the importer's own conversion
(:func:`kit.runs.importers.inspect_log.run_record`, the fate read from the transcript's events
by :func:`~kit.runs.importers.inspect_log.fate_from_events`), then the audit's citation stages
(:func:`kit.audit.pipeline.guard_runs`: claims -> L1 -> L2 -> conformal flags) under a guard
opened once per scorer instance (:func:`kit.audit.pipeline.open_guard`: verifier, corpora, score
store and the calibration tau), lazily at the first sample and under a lock (the kit's work runs
in a worker thread, one sample at a time, so the event loop is never blocked).

The parameters are ``kit audit``'s options of the same names (``--verifier`` is ``verifier``,
``--n-cal`` is ``n_cal``; :class:`kit.audit.inputs.AuditOptions` is built from them), with the
command line's defaults (``raw`` the fetched registry, ``cache_dir`` ``$KIT_CACHE_DIR`` or the
shared score store).

Outcomes:

* a finished sample: ``Score(value=`` :func:`kit.inspect_ext.values.sample_value` ``)``,
  ``answer`` a summary line, ``metadata`` the per-citation list and the operating point;
* a sample that errored or hit a limit (``kit audit`` counts such runs apart and never audits
  their text): ``Score.unscored(reason="sample_error" | "sample_limit")``;
* the verifier failing on a sample: ``Score.unscored(reason="grader_failed")`` with the error
  as explanation -- excluded from every metric, never a zero;
* options or resources that cannot be opened (a bad card, no registry): the kit's
  ConfigError / InputError is raised, so inspect_ai records a scorer error.
"""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from kit.audit.inputs import DEFAULT_CALIBRATION, AuditOptions
from kit.audit.pipeline import CitationGuard, guard_runs, open_guard
from kit.core.errors import ConfigError, InputError
from kit.corpus.build import DEFAULT_ROOT as DEFAULT_CORPUS_ROOT
from kit.guard.scoring.score_store import DEFAULT_STORE, ENV_VAR
from kit.guard.verifiers.load import DEFAULT_VERIFIER
from kit.inspect_ext.values import VALUE_KEYS, citation_list, sample_value, summary_line
from kit.registry.fetch import DEFAULT_DEST
from kit.runs.importers.inspect_log import fate_from_events, run_record
from kit.runs.model import AgentRun
from kit.runs.reader import run_from_record

NAME = "citation_support"
METRICS = {key: [mean(), stderr()] for key in VALUE_KEYS}
"""Per key: the mean over samples and its standard error. inspect_ai reduces a sample's epochs
to one value first (its default reducer, the mean), so the stderr is over samples -- clustered by
sample; a per-key NaN (``unsupported_rate`` with nothing scored) is left out of that key."""


def _registry_name() -> str:
    """``kit/citation_support``: inspect_ai namespaces a component by its package only when it
    sees the package installed (site-packages, or editable under the package's own name); a
    checkout on ``PYTHONPATH`` or an editable install of ``litaudit-kit`` it does not, so the
    namespace is then given here."""
    from inspect_ai._util.registry import registry_name

    return NAME if registry_name(_registry_name, NAME).startswith("kit/") else f"kit/{NAME}"


class _Guard:
    """The guard of one scorer instance, opened at first use; one lock for opening and scoring
    (the score store and the verifier session are used by one thread at a time)."""

    def __init__(self, opts: AuditOptions) -> None:
        self.opts = opts
        self._lock = threading.Lock()
        self._guard: CitationGuard | None = None

    def opened(self) -> CitationGuard:
        """The guard, opened on the first call (ConfigError / InputError raised, never kept)."""
        with self._lock:
            if self._guard is None:
                self._guard = open_guard(self.opts)
            return self._guard

    def score(self, run: AgentRun) -> Score:
        """The run's score under the opened guard (module doc)."""
        guard = self.opened()
        with self._lock:
            try:
                flags = guard_runs(guard, [run])
            except (ConfigError, InputError):
                raise
            except Exception as exc:  # the verifier (ONNX session, LLM endpoint) failed
                return Score.unscored(
                    reason="grader_failed",
                    explanation=f"the verifier failed: {type(exc).__name__}: {exc}"[:2000],
                )
        rows = flags.frame
        value = sample_value(rows)
        card = guard.context.card
        return Score(
            value=value,
            answer=summary_line(value, float(flags.t.tau)),
            explanation=(
                f"kit audit's citation stages: verifier {card.get('name')}, conformal rule "
                f"s <= tau = {float(flags.t.tau):.6g} at alpha {guard.alpha:g} "
                f"(calibration {guard.calibration.meta['source']})"
            ),
            metadata={
                "citations": citation_list(rows),
                "verifier": card.get("name"),
                "tau": float(flags.t.tau),
                "alpha": guard.alpha,
                "calibration": guard.calibration.meta["source"],
                "run_id": run.run_id,
            },
        )


def sample_run(state: TaskState, events: list[Any], max_answer_chars: int) -> AgentRun:
    """The kit's run of a scored sample: :func:`run_record` of its messages, output and events
    (``run_id`` ``<sample id>:<epoch>``; a scorer is told no eval id), read by the runs reader."""
    rec = run_record(
        run_id=f"{state.sample_id}:{state.epoch}",
        task_id=str(state.sample_id),
        model=str(state.model),
        messages=state.messages,
        output=state.output,
        events=events,
        fate=fate_from_events(events),
    )
    return run_from_record(rec, f"inspect sample {state.sample_id!r}", 1, max_answer_chars)


def _unfinished(run: AgentRun) -> Score:
    what = "errored" if run.status == "error" else "hit a limit"
    return Score.unscored(
        reason=f"sample_{run.status}",
        explanation=(
            f"the sample {what} ({run.status_detail}); kit audit counts such runs apart "
            "and never audits their text"
        )[:2000],
    )


@scorer(metrics=METRICS, name=_registry_name())
def citation_support(
    verifier: str = DEFAULT_VERIFIER,
    variant: str = "fp32",
    device: str = "cpu",
    batch_size: int = 32,
    corpus: str = "pubmedqa",
    corpus_root: str | None = None,
    raw: str | None = None,
    calibration: str = DEFAULT_CALIBRATION,
    alpha: float | None = None,
    n_cal: int = 200,
    seed: int = 0,
    yes_at: float = 0.84,
    partial_at: float = 0.80,
    cache_dir: str | None = None,
    no_cache: bool = False,
    max_answer_chars: int = 100_000,
) -> Scorer:
    """Do the answer's citations support its claims? ``kit audit``'s citation stages per sample.

    Args:
        verifier: A built-in verifier name or a card folder (``kit audit --verifier``).
        variant: Verifier weights, fp32 or int8 (``--variant``).
        device: cpu or cuda (``--device``).
        batch_size: Pairs per forward pass (``--batch-size``).
        corpus: Corpora for L1/L2, NAME[,NAME] in resolution order (``--corpus``).
        corpus_root: Built corpora (``--corpus-root``; default data/corpus).
        raw: The fetched registry (``--raw``; default data/raw).
        calibration: Calibration of the conformal rule (``--calibration``; default the
            held-out PubMedQA wrong-paper pairs scored by this verifier).
        alpha: Miss tolerance (``--alpha``; default the calibration artifact's, else 0.1).
        n_cal: Held-out construction-labelled items (``--n-cal``).
        seed: Seed of the held-out draw (``--seed``).
        yes_at: L2 yes iff the support score is at least this (``--yes-at``).
        partial_at: L2 partial iff at least this and below yes_at (``--partial-at``).
        cache_dir: The score store (``--cache-dir``; default $KIT_CACHE_DIR, else data/scores).
        no_cache: Keep scores in memory only (``--no-cache``).
        max_answer_chars: Longer answers are an error (``--max-answer-chars``).
    """
    store = cache_dir or os.environ.get(ENV_VAR) or str(DEFAULT_STORE)
    opts = AuditOptions(
        runs=Path("<inspect_ai>"),
        out=Path("."),
        corpus=corpus,
        corpus_root=Path(corpus_root) if corpus_root else DEFAULT_CORPUS_ROOT,
        raw=Path(raw) if raw else DEFAULT_DEST,
        calibration=calibration,
        alpha=alpha,
        verifier=verifier,
        variant=variant,
        device=device,
        batch_size=batch_size,
        yes_at=yes_at,
        partial_at=partial_at,
        n_cal=n_cal,
        seed=seed,
        cache_dir=None if no_cache else Path(store),
        max_answer_chars=max_answer_chars,
        progress=False,
    )
    guard = _Guard(opts)

    async def score(state: TaskState, target: Target) -> Score:
        import anyio
        from inspect_ai.log import transcript

        run = sample_run(state, list(transcript().events), max_answer_chars)
        if run.status != "ok":
            return _unfinished(run)
        return await anyio.to_thread.run_sync(functools.partial(guard.score, run))

    return score
