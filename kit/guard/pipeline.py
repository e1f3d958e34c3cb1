"""The guard run: verify every claim-citation pair, flag by tau, re-attribute, rewrite markers.

docs/architecture.md, "Citation guard"; seed 001 Figure 1 (verify -> re-attribute -> flag). For
each citation of each cited sentence:

1. resolve the id to a provided passage (an out-of-range index is ``missing_passage``);
2. score s(claim, full passage) with the verifier (max over windows);
3. s > tau: ``supported``. Otherwise rank the answer's *other* passages with BM25, re-verify
   the top one; if it scores > tau the pointer moves (``moved``, ``moved_to``), else the
   citation stays and is marked ``[N UNVERIFIED]`` (``unverified``; never deleted).

tau comes from :func:`kit.guard.conformal.rule.conformal_tau` on unsupported-class calibration
scores *of the same verifier and scoring rule*; the guarantee (catch >= 1 - alpha) holds for
unsupported citations exchangeable with the calibration ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core import boundary
from kit.core.errors import InputError, Location
from kit.guard.reattribute import bm25_rank
from kit.guard.verifiers.card import Verifier, identity_entry
from kit.runs.citations import Citation, parse_answer, resolve

CITATION_COLUMNS = [
    "answer_id",
    "sentence",
    "marker",
    "claim",
    "cited",
    "passage_id",
    "score",
    "flagged",
    "reason",
    "status",
    "moved_to",
    "moved_score",
]


@dataclass(frozen=True)
class AnswerRecord:
    answer_id: str
    answer: str
    passages: dict[str, str]


def read_answers(path: Path) -> list[AnswerRecord]:
    """Read the guard's input JSONL (schemas/json/guard_answers.schema.json), one answer a line.

    Errors name the file, the line (as ``row``) and the field.
    """
    import jsonschema

    from kit.core.schema import load_json_schema

    p = Path(path)
    validator = jsonschema.Draft202012Validator(load_json_schema("guard_answers"))
    out: list[AnswerRecord] = []
    seen: dict[str, int] = {}
    for i, obj in boundary.read_jsonl(p):
        errors = sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
        if errors:
            e = errors[0]
            field = "/".join(map(str, e.absolute_path)) or None
            raise InputError(
                "schema_violation",
                e.message,
                where=Location(str(p), i, field),
                details=[f"{len(errors)} problem(s) on this line"],
            )
        aid = obj["answer_id"]
        if aid in seen:
            raise InputError(
                "duplicate_key",
                f"answer_id {aid!r} already on line {seen[aid]}",
                where=Location(str(p), i, "answer_id"),
            )
        seen[aid] = i
        out.append(AnswerRecord(aid, obj["answer"], dict(obj["passages"])))
    if not out:
        raise InputError("empty_input", "no answers in file", where=Location(str(p)))
    return out


def _render_marker(c: Citation, rows: list[dict[str, Any]]) -> str:
    """The marker as the guarded answer writes it: as it was when every ref is supported, else
    one bracket per ref; the words of a markdown link (``c.keep``) stay (nothing is deleted)."""
    if all(r["status"] == "supported" for r in rows):
        return c.text
    parts = [f"{c.keep} "] if c.keep else []
    for r in rows:
        if r["status"] == "supported":
            parts.append(f"[{r['cited']}]")
        elif r["status"] == "moved":
            parts.append(f"[{r['moved_to']}]")
        else:
            parts.append(f"[{r['cited']} UNVERIFIED]")
    return "".join(parts)


def guard_answers(
    records: list[AnswerRecord], verifier: Verifier, tau: float, reattribute: bool = True
) -> tuple[list[dict[str, str]], pd.DataFrame]:
    """Run the guard; returns guarded answers and the per-citation table (sorted rows)."""
    rows: list[dict[str, Any]] = []
    markers: dict[tuple[int, int], tuple[Citation, list[int]]] = {}
    for ai, rec in enumerate(records):
        # the passages are the answer's reference list; none given: numeric markers declared
        for claim in parse_answer(rec.answer, references=rec.passages or None):
            for mi, c in enumerate(claim.citations):
                idxs = []
                for ref in c.refs:
                    pid = resolve(ref, rec.passages)
                    idxs.append(len(rows))
                    rows.append(
                        {
                            "_a": ai,
                            "answer_id": rec.answer_id,
                            "sentence": claim.index,
                            "marker": mi,
                            "claim": claim.text,
                            "cited": ref,
                            "passage_id": pid if pid is not None else "",
                            "score": np.nan,
                            "flagged": True,
                            "reason": "",
                            "status": "unverified",
                            "moved_to": "",
                            "moved_score": np.nan,
                        }
                    )
                markers[(ai, c.start)] = (c, idxs)
    todo = [
        i
        for i, r in enumerate(rows)
        if r["passage_id"] and r["claim"] and records[r["_a"]].passages[r["passage_id"]].strip()
    ]
    if todo:
        s = verifier.score(
            [rows[i]["claim"] for i in todo],
            [records[rows[i]["_a"]].passages[rows[i]["passage_id"]] for i in todo],
        )
        for i, v in zip(todo, s, strict=True):
            rows[i]["score"] = float(v)
    for r in rows:
        if not r["claim"]:
            r["reason"] = "empty_claim"
        elif not r["passage_id"]:
            r["reason"] = "missing_passage"
        elif not records[r["_a"]].passages[r["passage_id"]].strip():
            r["reason"] = "empty_passage"
        elif np.isnan(r["score"]):  # the verifier's endpoint refused: no score, to review
            r["reason"] = "refused"
        elif r["score"] > tau:
            r["flagged"], r["status"] = False, "supported"
        else:
            r["reason"] = "score_at_or_below_tau"
    cand: list[tuple[int, str]] = []
    if reattribute:
        for i, r in enumerate(rows):
            if r["flagged"] and r["claim"]:
                pool = records[r["_a"]].passages
                ranked = bm25_rank(
                    r["claim"], pool, exclude={r["passage_id"]} if r["passage_id"] else set()
                )
                if ranked:
                    cand.append((i, ranked[0][0]))
    if cand:
        s = verifier.score(
            [rows[i]["claim"] for i, _ in cand],
            [records[rows[i]["_a"]].passages[pid] for i, pid in cand],
        )
        for (i, pid), v in zip(cand, s, strict=True):
            rows[i]["moved_score"] = float(v)
            if v > tau:
                rows[i]["status"], rows[i]["moved_to"] = "moved", pid
    guarded = []
    for ai, rec in enumerate(records):
        text = rec.answer
        for (a, _start), (c, idxs) in sorted(markers.items(), key=lambda kv: -kv[0][1]):
            if a != ai:
                continue
            new = _render_marker(c, [rows[i] for i in idxs])
            text = text[: c.start] + new + text[c.end :]
        guarded.append({"answer_id": rec.answer_id, "answer": rec.answer, "guarded_answer": text})
    frame = pd.DataFrame(rows, columns=["_a", *CITATION_COLUMNS]).drop(columns="_a")
    frame = frame.sort_values(
        ["answer_id", "sentence", "marker", "cited"], kind="stable"
    ).reset_index(drop=True)
    return guarded, frame


def summarise(
    frame: pd.DataFrame,
    n_answers: int,
    card: dict[str, Any],
    alpha: float,
    tau: float,
    k: int,
    n_cal: int,
    calibration: dict[str, str],
    seed: int = 0,
    guarantee: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Summary JSON: the unsupported (flag) rate always with its verifier and operating point,
    Wilson CI (citations as independent) and per-answer cluster-bootstrap CI.

    ``guarantee`` (:func:`kit.guard.conformal.calibration.guarantee`) is written beside tau: the catch
    guarantee with its condition, the calibration source, the false-flag rate on supported
    calibration citations, the review budget and the shift check (issue 13)."""
    from kit.stats.bootstrap import cluster_bootstrap_mean
    from kit.stats.wilson import wilson_ci

    n = len(frame)
    counts = {s: int((frame["status"] == s).sum()) for s in ("supported", "moved", "unverified")}
    out: dict[str, Any] = {
        "verifier": {
            "name": card["name"],
            **identity_entry(card),  # onnx_sha256, or an LLM card's instrument_sha256
            "scoring_rule": card["scoring_rule"],
            "window_rule": card["window_rule"],
        },
        "alpha": alpha,
        "tau": tau,
        "k": k,
        "n_cal": n_cal,
        "calibration": calibration,
        "n_answers": n_answers,
        "n_citations": n,
        "status_counts": counts,
        "flag_rate": None,
        "refused": int((frame["reason"] == "refused").sum()),
        "note": "tau is meaningful only when the calibration scores come from this verifier and "
        "scoring rule; the catch guarantee assumes deployment unsupported citations are "
        "exchangeable with the calibration negatives; a citation the verifier's endpoint "
        "refused (reason refused) has no score and is flagged for review",
    }
    if guarantee is not None:
        out["guarantee"] = guarantee
    if n:
        flagged = frame["flagged"].to_numpy(dtype=float)
        w = wilson_ci(int(flagged.sum()), n)
        cb = cluster_bootstrap_mean(
            flagged, frame["answer_id"].to_numpy(), np.random.default_rng(seed), 2000
        )
        out["flag_rate"] = {
            "estimate": w.estimate,
            "wilson_95": [w.lo, w.hi],
            "cluster_bootstrap_95": [cb.lo, cb.hi],
            "bootstrap_seed": seed,
        }
    return out


@dataclass(frozen=True)
class GuardRun:
    """What :func:`guard_run` produced: the three files' contents and what the command prints."""

    guarded: list[dict[str, Any]]  # one record a line of guarded.jsonl
    citations: pd.DataFrame  # citations.csv (validated: guard_citations)
    summary: dict[str, Any]  # summary.json (validated: guard_summary)
    guarantee: dict[str, Any]
    n_answers: int
    tau: float
    n_cal: int


def guard_run(
    answers: Path,
    calibration: str,
    alpha: float,
    load: Callable[[], Verifier],
    *,
    raw: Path,
    reattribute: bool = True,
    where: Path = Path("."),
) -> GuardRun:
    """``kit guard run`` as one verb: read the answers and the calibration set, load the
    verifier (``load()``), verify, flag by tau, re-attribute, and measure the guarantee.

    ``where`` names the output folder in validation errors (citations.csv, summary.json).
    """
    from kit.core.schema import validate_frame, validate_json
    from kit.guard.conformal.calibration import (
        check_verifier,
        guarantee,
        guard_rule,
        load_calibration,
    )

    records = read_answers(answers)
    cal = load_calibration(calibration, raw)
    t = guard_rule(cal, alpha)
    v = load()
    card = v.card.to_dict()
    same = check_verifier(cal, card)
    guarded, frame = guard_answers(records, v, t.tau, reattribute=reattribute)
    frame = validate_frame(frame, "guard_citations", str(where / "citations.csv"))
    g = guarantee(cal, t, frame["score"].to_numpy(dtype=float), same)
    summary = summarise(
        frame,
        len(records),
        card,
        alpha,
        t.tau,
        t.k,
        t.n_cal,
        {"source": cal.source, "sha256": cal.sha256},
        guarantee=g,
    )
    validate_json(summary, "guard_summary", str(where / "summary.json"))
    return GuardRun(guarded, frame, summary, g, len(records), t.tau, t.n_cal)
