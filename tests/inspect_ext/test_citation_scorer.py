"""The citation scorer ``kit/citation_support`` (kit/inspect_ext, issue 55) on logs inspect_ai
writes inside the test: the scripted spellings harness of tests/runs/importers (eight samples:
six finished answers citing in every spelling, one uncited, one errored by its tool, one cut by
the message limit), inspect_ai's offline ``mockllm/model``, and the tiny random-weight
cross-encoder (so the tests assert plumbing and agreement, never accuracy).

The calibration is a file (``--calibration FILE`` / ``calibration=FILE``) whose tau is the
median support score of the audited citations, so some are flagged and some are not, and tau
does not depend on which runs are audited (docs/inspect.md: the default calibration's held-out
draw excludes the items of every audited run, which a scorer seeing one sample cannot know).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

inspect_ai = pytest.importorskip("inspect_ai")

from harness_spellings import write_spellings_log  # noqa: E402
from scenario import (  # noqa: E402
    FINISHED,
    SCORER,
    Setup,
    audit_tables,
    audit_values,
    rescore,
    same_value,
    sample_of,
)

from kit.inspect_ext.values import VALUE_KEYS  # noqa: E402


def test_the_scorer_is_registered_under_the_kit_namespace() -> None:
    from inspect_ai._util.registry import registry_info, registry_lookup

    import kit.inspect_ext._registry  # noqa: F401  (what the entry point loads)

    found = registry_lookup("scorer", "kit/citation_support")
    assert found is not None
    assert registry_info(found).name == "kit/citation_support"


def test_the_scorer_speaks_kit_audits_vocabulary() -> None:
    """Every scorer parameter is an AuditOptions field and a `kit audit` option of the same
    name (underscores for dashes)."""
    import dataclasses
    import inspect as pyinspect

    from kit.audit.inputs import AuditOptions
    from kit.commands.audit import audit as audit_command
    from kit.inspect_ext.scorer import citation_support

    params = set(pyinspect.signature(citation_support).parameters)
    fields = {f.name for f in dataclasses.fields(AuditOptions)} | {"no_cache"}
    options = {p.name for p in audit_command.params}
    assert params <= fields, params - fields
    assert params <= options, params - options
    assert {"verifier", "corpus", "alpha", "seed", "n_cal", "calibration"} <= params


def test_fate_from_events_agrees_with_the_samples_own_fate(scenario: Setup) -> None:
    """The scorer reads a sample's fate from its events (a TaskState carries none); on every
    sample of the log it is the importer's, read from EvalSample.error / .limit."""
    from inspect_ai.log import read_eval_log

    from kit.runs.importers.inspect_log import fate_from_events, sample_status

    log = read_eval_log(str(scenario.log))
    fates = {s.id: (fate_from_events(s.events), sample_status(s)) for s in log.samples}
    assert {k: a["status"] for k, (a, _) in fates.items()} == {
        **dict.fromkeys(FINISHED, "ok"),
        "s_outage": "error",
        "s_loop": "limit",
    }
    for ours, theirs in fates.values():
        assert ours["status"] == theirs["status"]
        assert ours.get("limit", {}).get("type") == theirs.get("limit", {}).get("type")
    assert fates["s_outage"][0]["error"] == fates["s_outage"][1]["error"]


def test_inspect_score_gives_kit_audits_values_per_sample(scenario: Setup, rescored: Any) -> None:
    """`inspect_ai.score` of the finished log with the kit's scorer == `kit import inspect-ai`
    + `kit audit`, citations.csv aggregated per run; and citation by citation."""
    scored = rescored
    expected = audit_values(scenario)
    cites, _ = audit_tables(scenario)
    got = {s.id: s.scores[SCORER] for s in scored.samples}
    assert set(expected) == set(FINISHED)
    for sid in FINISHED:
        assert same_value(got[sid].value, expected[sid]), (sid, got[sid].value, expected[sid])
    # citation by citation: the same rows, scores and flags as citations.csv
    for sid in FINISHED:
        rows = cites[cites["run_id"].map(sample_of) == sid]
        mine = got[sid].metadata["citations"]
        assert [c["citation"] for c in mine] == rows["citation"].tolist()
        assert [c["flagged"] for c in mine] == rows["flagged"].tolist()
        assert [c["l1"] for c in mine] == rows["l1"].tolist()
        for c, s in zip(mine, rows["support_score"], strict=True):
            assert (c["support_score"] is None) == bool(pd.isna(s))
            if c["support_score"] is not None:
                assert abs(c["support_score"] - s) <= 1e-8 * max(1.0, abs(s))
        assert all(c["evidence"] in ("tool_response", "corpus", "no_passage", "none") for c in mine)
        assert got[sid].metadata["tau"] == pytest.approx(scenario.tau)
    # the comparison is not vacuous: the tau flags some scored citations and passes others
    total = {k: sum(v[k] for v in expected.values()) for k in ("cited", "scored", "flagged")}
    at_tau = int((cites["flag_reason"] == "score_at_or_below_tau").sum())
    assert total["cited"] == len(cites) and 0 < at_tau < total["scored"]
    # by hand (tests/runs/importers/harness_spellings.py): s_bracket cites 2 PMIDs of the
    # tool's response, s_uncited nothing
    assert expected["s_bracket"]["cited"] == 2 and expected["s_bracket"]["found"] == 2
    assert got["s_uncited"].value["cited"] == 0


def test_an_answer_without_citations_is_a_valid_score_with_no_rate(
    scenario: Setup, rescored: Any
) -> None:
    scored = rescored
    s = next(x for x in scored.samples if x.id == "s_uncited").scores[SCORER]
    assert {k: s.value[k] for k in VALUE_KEYS if k != "unsupported_rate"} == dict.fromkeys(
        (k for k in VALUE_KEYS if k != "unsupported_rate"), 0
    )
    assert math.isnan(s.value["unsupported_rate"])  # no rate, never a 0
    assert s.answer == "no citations" and s.metadata["citations"] == []
    # the key's metrics leave it out (inspect_ai's per-key NaN = unscored), the counts keep it
    by_name = {e.name: e for e in scored.results.scores if e.scorer == SCORER}
    assert by_name["cited"].scored_samples == len(FINISHED)
    assert by_name["unsupported_rate"].scored_samples == len(FINISHED) - 1
    assert by_name["unsupported_rate"].unscored_samples >= 1


def test_unfinished_samples_are_unscored_as_kit_audit_never_audits_them(
    scenario: Setup, rescored: Any
) -> None:
    scored = rescored
    by_id = {s.id: s.scores[SCORER] for s in scored.samples}
    assert by_id["s_outage"].reason == "sample_error"
    assert by_id["s_loop"].reason == "sample_limit"
    for sid in ("s_outage", "s_loop"):
        assert isinstance(by_id[sid].value, float) and math.isnan(by_id[sid].value)
    _, runs = audit_tables(scenario)
    assert sorted(runs.loc[runs["status"] != "ok", "run_id"].map(sample_of)) == [
        "s_loop",
        "s_outage",
    ]


def test_metrics_are_per_key_means_with_their_stderr(scenario: Setup, rescored: Any) -> None:
    import numpy as np

    scored = rescored
    expected = audit_values(scenario)
    by_name = {e.name: e for e in scored.results.scores if e.scorer == SCORER}
    assert set(by_name) == set(VALUE_KEYS)
    for key in ("cited", "flagged", "scored"):
        xs = np.array([expected[s][key] for s in FINISHED], dtype=float)
        assert by_name[key].metrics["mean"].value == pytest.approx(xs.mean())
        assert by_name[key].metrics["stderr"].value == pytest.approx(
            xs.std(ddof=1) / np.sqrt(len(xs))
        )
        assert by_name[key].unscored_samples == 2  # the errored and the cut-off sample


def test_eval_with_the_kit_scorer_writes_its_scores_into_the_log(
    scenario: Setup, tmp_path: Path
) -> None:
    """The scorer in a task's ``scorer=``: inspect_ai's own eval() writes the kit's values
    into the EvalLog, the same as `kit audit` of the includes()-scored eval."""
    from inspect_ai.log import read_eval_log

    from kit.inspect_ext import citation_support

    log_path, _ = write_spellings_log(
        tmp_path / "logs", scenario.raw, citation_support(**scenario.args())
    )
    log = read_eval_log(str(log_path))  # read back from disk: NaN values survive the file
    assert log.status == "success"
    expected = audit_values(scenario)
    by_id = {s.id: s for s in log.samples}
    for sid in FINISHED:
        assert same_value(by_id[sid].scores[SCORER].value, expected[sid]), sid
    # eval() never scores the errored sample; the cut-off one is scored as unscored
    assert by_id["s_outage"].error is not None
    assert by_id["s_loop"].scores[SCORER].reason == "sample_limit"
    [spec] = log.eval.scorers
    assert spec.name == SCORER  # inspect_ai records a scorer's name without its namespace
    assert spec.options["n_cal"] == 10 and spec.options["verifier"] == str(scenario.verifier)
    names = {e.name for e in log.results.scores}
    assert names == set(VALUE_KEYS)


def test_a_failing_verifier_gives_unscored_samples_never_zeros(
    scenario: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kit.audit.pipeline as pipeline

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("onnxruntime session failed")

    monkeypatch.setattr(pipeline, "check_citations", broken)
    scored = rescore(scenario)
    for s in scored.samples:
        sc = s.scores[SCORER]
        assert isinstance(sc.value, float) and math.isnan(sc.value)
        if s.id in FINISHED:
            assert sc.reason == "grader_failed"
            assert "onnxruntime session failed" in (sc.explanation or "")
    for e in scored.results.scores:
        if e.scorer == SCORER:
            assert e.scored_samples == 0 and e.unscored_samples == len(scored.samples)


def test_a_verifier_that_cannot_be_opened_is_a_scorer_error(
    scenario: Setup, tmp_path: Path
) -> None:
    from kit.core.errors import KitError

    with pytest.raises(BaseException) as caught:
        rescore(scenario, verifier=str(tmp_path / "no-such-card"))
    exc: BaseException = caught.value
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    assert isinstance(exc, KitError), repr(exc)
