"""The audit in words (kit.report.audit_text): verdict sentences and the stdout of `kit audit`."""

from __future__ import annotations

import copy
import re
from typing import Any

from kit.report.audit_text import (
    audit_lines,
    headline_wrong_paper,
    interval_caveat,
    verdict_sentences,
)
from kit.stats.wilson import wilson_ci


def _m(metric: str, k: int, n: int) -> dict[str, Any]:
    ci = wilson_ci(k, n, 0.95)
    return {"metric": metric, "k": k, "n": n, "estimate": ci.estimate, "lo": ci.lo, "hi": ci.hi}


def _summary() -> dict[str, Any]:
    return {
        "counts": {
            "runs": 19,
            "citations": 9938,
            "flagged": {"no_passage": 0, "notfound": 3, "score_at_or_below_tau": 9},
        },
        "conformal": {
            "tau": 0.78960405383261,
            "alpha": 0.1,
            "guarantee": {
                "tau": 0.78960405383261,
                "target_catch": 0.9,
                "calibration": {"name": "lab-gold"},
                "review_budget": {"estimate": 3 / 19, "lo": 0.055, "hi": 0.376},
                "shift": {"warning": False, "message": "no shift detected"},
                "per_type": [],
            },
        },
        "headline": [
            _m("fabrication_rate", 3, 19),
            _m("wrong_paper_rate", 2, 16),
            _m("wrong_paper_upper", 4, 16),
            {**_m("wrong_paper_corrected", 2, 16), "lo": 0.0, "hi": 0.31},
            _m("flag_rate", 3, 16),
        ],
        "planted": {
            "rows": [
                {
                    "metric": "fabrication_rate",
                    "planted": 0.15789473684210525,
                    "realised": 0.15789473684210525,
                    "estimate": 3 / 19,
                    "lo": 0.055,
                    "hi": 0.376,
                    "covered": True,
                    "rule": "lo <= planted <= hi",
                },
                {
                    "metric": "reattribution_to_true_paper",
                    "planted": None,
                    "estimate": 1.0,
                    "lo": 0.61,
                    "hi": 1.0,
                    "covered": None,
                    "rule": "informational",
                },
            ]
        },
        "board": {
            "agent": "planted-answers",
            "rank_lo": 1,
            "rank_hi": 2,
            "n_systems": 4,
            "composite": 0.77285670744680851,
            "m": 24,
            "pairs": [
                {"other": "A", "readout": "composite", "verdict": "certified", "admissible": True,
                 "agent_better": "yes"},
                {"other": "B", "readout": "composite", "verdict": "undecided_sampling",
                 "admissible": True, "agent_better": ""},
                {"other": "C", "readout": "composite", "verdict": "refused", "admissible": False,
                 "agent_better": ""},
                {"other": "C", "readout": "writing", "verdict": "certified", "admissible": True,
                 "agent_better": "no"},
            ],
        },
    }  # fmt: skip


RAW = re.compile(r"\b(True|False|None)\b|\d\.\d{6,}")  # Python reprs: bools, None, long floats


def test_stdout_has_no_python_reprs_and_prints_the_placement() -> None:
    lines = audit_lines(_summary(), "/tmp/out", 5, 7, "catch >= 90% of ...")
    text = "\n".join(lines)
    assert not RAW.search(text), RAW.search(text)
    assert lines[0].startswith("audited 19 runs, 9938 citations (tau = 0.7896 at alpha = 0.1)")
    assert "score store 5 hit(s), 7 scored -> /tmp/out" in lines[0]
    assert lines[2].startswith("Of 9,938 citations in 19 runs: 15.8% [")  # the verdict first
    assert (
        "cite papers that do not exist planted" not in text
        and "citations of papers that do not exist: planted 0.158 (this draw 0.158), recovered "
        "0.158 [0.055, 0.376]: check holds (lo <= planted <= hi)"
        in text
    )
    assert "no planted value, recovered 1.000 [0.610, 1.000]: not checked (informational)" in text
    i = lines.index("board placement:")
    assert lines[i + 1] == (
        "  planted-answers places somewhere from rank 1 to 2 of 4 systems (certified rank "
        "interval [1, 2], composite 0.773): certified better than 1 and worse than 0 of 3 "
        "systems on the composite, 1 comparison(s) refused (Bonferroni m = 24)"
    )
    headline = [ln for ln in lines if ln.endswith("<- headline")]
    assert len(headline) == 1 and "(corrected)" in headline[0]


def test_no_board_no_placement_and_synthetic_is_labelled() -> None:
    s = _summary()
    assert "SYNTHETIC board: planted-answers" in verdict_sentences(s, synthetic_board=True)[-1]
    s["board"] = None
    s["planted"] = None
    text = "\n".join(audit_lines(s, "o", 0, 0, "g"))
    assert "board placement" not in text and "planted" not in text


def test_verdict_names_the_headline_wrong_paper_number() -> None:
    s = _summary()
    v = verdict_sentences(s)
    assert v[0] == (
        "Of 9,938 citations in 19 runs: 15.8% [5.5, 37.6] cite papers that do not exist (3 of "
        "19 checked identifiers); 12.5% [0.0, 31.0] cite a real paper that does not support "
        "the claim (corrected for the verifier's errors; 16 scored; at most 25.0% [10.2, 49.5] "
        "counting 'partial')."
    )
    assert v[1].startswith(
        "The flag rule (s <= tau = 0.7896) catches >= 90% of unsupported citations if they "
        "resemble lab-gold, flagging 15.8% [5.5, 37.6]"
    )
    assert headline_wrong_paper(s["headline"]) == "wrong_paper_corrected"
    s["headline"] = [m for m in s["headline"] if m["metric"] != "wrong_paper_corrected"]
    assert headline_wrong_paper(s["headline"]) == "wrong_paper_rate"
    assert "(verifier 'no', uncorrected;" in verdict_sentences(s)[0]


def test_degenerate_intervals_say_so() -> None:
    one = {"metric": "flag_rate", "k": 0, "n": 1, "estimate": 0.0, "lo": 0.0, "hi": 0.0}
    assert interval_caveat(one).startswith("zero-width interval from n = 1")
    assert interval_caveat(_m("flag_rate", 0, 1)) == (
        "only n = 1: the interval is wide by necessity"
    )
    assert interval_caveat(_m("flag_rate", 3, 40)) == ""
    none = {"metric": "flag_rate", "k": 0, "n": 0, "estimate": None, "lo": None, "hi": None}
    assert interval_caveat(none) == "undefined: n = 0, nothing to estimate"
    s = copy.deepcopy(_summary())
    s["headline"].append(one)
    text = "\n".join(audit_lines(s, "o", 0, 0, "g"))
    assert "0.000 [0.000, 0.000]" in text and "(zero-width interval from n = 1" in text
