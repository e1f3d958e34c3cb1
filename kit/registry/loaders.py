"""Readers for registered files: parse, normalise to tables, validate against their schemas.

Each reader takes the ``data/raw`` folder (see :mod:`kit.registry.fetch`) and returns validated
pandas frames; malformed input is an :class:`~kit.core.errors.InputError` naming file and field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from kit.core import boundary
from kit.core.errors import InputError, Location
from kit.core.schema import read_table, validate_frame
from kit.registry.fetch import raw_path

PUBMEDQA = "pubmedqa/ori_pqal.json"
PUBMEDQA_TEST = "pubmedqa/test_ground_truth.json"
QASA = "citation-guard/qasa_calibration_scores.json"
BIOASQ = "citation-guard/bioasq_summary.json"
BOARD = "published/biolitbench_board.csv"
PIPELINES = "published/biolitbench_pipelines.csv"
OPENBIORQ = "published/openbiorq_board.csv"
CONSTANTS = "published/published_constants.yaml"

_PUBMEDQA_KEYS = ("QUESTION", "CONTEXTS", "LABELS", "MESHES", "LONG_ANSWER", "final_decision")


def read_json(path: Path) -> Any:
    return boundary.read_json(path)


def pubmedqa_tables(raw: Path) -> dict[str, pd.DataFrame]:
    """PubMedQA PQA-L normalised: items, contexts (one row per abstract section), meshes."""
    path = raw_path(PUBMEDQA, raw)
    data = read_json(path)
    test = read_json(raw_path(PUBMEDQA_TEST, raw))
    if not isinstance(data, dict):
        raise InputError(
            "bad_structure", "expected an object keyed by PMID", where=Location(str(path))
        )
    items, contexts, meshes = [], [], []
    for pmid, rec in data.items():
        if not isinstance(rec, dict):
            raise InputError(
                "bad_structure", f"item {pmid}: expected an object", where=Location(str(path))
            )
        missing = [k for k in _PUBMEDQA_KEYS if k not in rec]
        if missing:
            raise InputError(
                "missing_field",
                f"item {pmid}: missing field(s) {', '.join(missing)}",
                where=Location(str(path), column=missing[0]),
            )
        ctx, labels = rec["CONTEXTS"], rec["LABELS"]
        if len(ctx) != len(labels):
            raise InputError(
                "length_mismatch",
                f"item {pmid}: {len(ctx)} CONTEXTS but {len(labels)} LABELS",
                where=Location(str(path), column="LABELS"),
            )
        year = rec.get("YEAR")
        items.append(
            {
                "pmid": str(pmid),
                "question": rec["QUESTION"],
                "long_answer": rec["LONG_ANSWER"],
                "final_decision": rec["final_decision"],
                "reasoning_required_pred": rec.get("reasoning_required_pred"),
                "reasoning_free_pred": rec.get("reasoning_free_pred"),
                "year": None if year in (None, "") else int(year),
                "n_contexts": len(ctx),
                "n_meshes": len(rec["MESHES"]),
                "split": "test" if str(pmid) in test else "train",
            }
        )
        for i, (text, label) in enumerate(zip(ctx, labels, strict=True)):
            contexts.append({"pmid": str(pmid), "section_index": i, "label": label, "text": text})
        for term in dict.fromkeys(rec["MESHES"]):
            meshes.append({"pmid": str(pmid), "mesh": term})
    items_df = pd.DataFrame(items)
    items_df["year"] = items_df["year"].astype("Int64")
    src = str(path)
    return {
        "pubmedqa_items": validate_frame(items_df, "pubmedqa_items", src, row_base=1),
        "pubmedqa_contexts": validate_frame(pd.DataFrame(contexts), "pubmedqa_contexts", src, 1),
        "pubmedqa_meshes": validate_frame(pd.DataFrame(meshes), "pubmedqa_meshes", src, 1),
    }


def qasa_tables(raw: Path) -> dict[str, pd.DataFrame]:
    """The citation-guard QASA calibration scores (long) and the published tau curve."""
    path = raw_path(QASA, raw)
    d = read_json(path)
    for key in ("supported_p_attr_scores", "unsupported_p_attr_scores", "tau_curve"):
        if key not in d:
            raise InputError(
                "missing_field", f"missing '{key}'", where=Location(str(path), column=key)
            )
    rows = [
        {"label": label, "item_index": i, "score": float(s)}
        for label, key in (
            ("supported", "supported_p_attr_scores"),
            ("unsupported", "unsupported_p_attr_scores"),
        )
        for i, s in enumerate(d[key])
    ]
    curve = d["tau_curve"]
    tau = pd.DataFrame(
        {
            "alpha": curve["alphas"],
            "guaranteed_recall": curve["guaranteed_recall"],
            "tau": curve["tau"],
            "cal_recall": curve["cal_recall"],
        }
    )
    flags = [
        {"cell": cell, "alpha": a, "flag_rate": r}
        for cell, rates in sorted(curve.get("flag_rate", {}).items())
        for a, r in zip(curve["alphas"], rates, strict=True)
    ]
    return {
        "qasa_scores": pd.DataFrame(rows),
        "qasa_tau_curve": tau,
        "qasa_flag_rates": pd.DataFrame(flags),
    }


def bioasq_table(raw: Path) -> pd.DataFrame:
    d = read_json(raw_path(BIOASQ, raw))
    rows = []
    for cell, v in sorted(d.get("cells", {}).items()):
        lo, hi = v.get("unsupported_ci95", [None, None])
        rows.append(
            {
                "model": d.get("model"),
                "cell": cell,
                "citation_f1_mean": v.get("citation_f1_mean"),
                "unsupported_pct": v.get("unsupported_pct"),
                "unsupported_ci95_lo": lo,
                "unsupported_ci95_hi": hi,
                "n_items": v.get("n_items"),
                "n_cited": v.get("n_cited"),
            }
        )
    return pd.DataFrame(rows)


def published_constants(raw: Path) -> dict[str, Any]:
    path = raw_path(CONSTANTS, raw)
    return boundary.read_yaml(path)


def constants_table(raw: Path) -> pd.DataFrame:
    """published_constants.yaml flattened to (key, value) with dotted keys and JSON values."""
    rows: list[dict[str, str]] = []

    def walk(prefix: str, node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        else:
            rows.append({"key": prefix, "value": json.dumps(node)})

    walk("", published_constants(raw))
    return pd.DataFrame(rows)


def published_board(raw: Path) -> pd.DataFrame:
    return read_table(raw_path(BOARD, raw), "biolitbench_board")


def published_pipelines(raw: Path) -> pd.DataFrame:
    return read_table(raw_path(PIPELINES, raw), "biolitbench_pipelines")


def openbiorq_board(raw: Path) -> pd.DataFrame:
    return read_table(raw_path(OPENBIORQ, raw), "openbiorq_board")
