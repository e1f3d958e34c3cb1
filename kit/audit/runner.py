"""The I/O shell of `kit audit`: run the pipeline (:mod:`kit.audit.pipeline`), write outputs.

Outputs are written into a staged folder and swapped into place (:func:`kit.core.atomic.staged_dir`),
so a failed audit leaves the previous report (or none) untouched. Scores live outside the report,
in the shared content-addressed store (:mod:`kit.guard.scoring.score_store`, ``--cache-dir``, default
``data/scores/``): a shard is appended after every chunk of runs, so an interrupted audit resumes
from what it had scored, and a re-audit of the same runs into any folder scores nothing again.
"""

from __future__ import annotations

import json
from typing import Any

from kit.audit.inputs import DEFAULT_CALIBRATION, AuditOptions, Inputs, read_inputs
from kit.audit.pipeline import AuditResult, audit_l1_l2, run_audit
from kit.core import atomic
from kit.core.hashing import file_sha256

__all__ = [
    "DEFAULT_CALIBRATION",
    "OUTPUT_FILES",
    "AuditOptions",
    "AuditResult",
    "Inputs",
    "audit",
    "audit_l1_l2",
    "read_inputs",
    "run_audit",
    "write_outputs",
]


# ----------------------------------------------------------------------------- outputs

OUTPUT_FILES = ("report.html", "summary.json", "citations.csv", "runs.csv")


def write_outputs(result: AuditResult, opts: AuditOptions) -> list[str]:
    """Validate and write every output into a staged folder, then swap it into ``opts.out``."""
    from kit.core.receipts import seal, write_receipt
    from kit.core.schema import validate_frame, validate_json
    from kit.core.tables import to_csv
    from kit.guard.verifiers.card import identity_entry
    from kit.report.audit_page import render_audit_page

    cites = validate_frame(result.citations, "audit_citations", str(opts.out / "citations.csv"))
    runs = validate_frame(result.runs, "audit_runs", str(opts.out / "runs.csv"))
    summary = result.summary
    validate_json(summary, "audit_summary", str(opts.out / "summary.json"))
    files: dict[str, str] = {
        "summary.json": json.dumps(summary, indent=2, sort_keys=True, allow_nan=False) + "\n",
        "citations.csv": to_csv(cites, "%.10g"),
        "runs.csv": to_csv(runs, "%.10g"),
        "report.html": render_audit_page(
            summary, cites, result.board_ranks, result.passages, windows=result.windows
        ),
    }
    if result.board_pairs is not None and result.board_ranks is not None:
        files["board_pairs.csv"] = to_csv(result.board_pairs, "%.10g")
        files["board_ranks.csv"] = to_csv(result.board_ranks, "%.10g")
    with atomic.staged_dir(opts.out) as tmp:
        tmp.chmod(0o755)
        for name, text in sorted(files.items()):
            (tmp / name).write_text(text, encoding="utf-8")
        root_body = {
            "inputs": summary["inputs"],
            **{f"verifier_{k}": v for k, v in identity_entry(summary["verifier"]).items()},
            "calibration_sha256": summary["conformal"]["calibration"]["sha256"],
            "kit_version": summary["kit_version"],
        }
        if opts.cache_dir is None:
            root_body["untracked"] = ["cache/"]  # the scorer's cache: reusable, not an output
        root = seal("audit-inputs", "inputs", root_body, None)
        write_receipt(tmp / "receipts" / "inputs.receipt.json", root)
        for name in sorted(files):
            sha = file_sha256(tmp / name)
            body: dict[str, Any] = {
                "file": name,
                "sha256": sha,
                "bytes": len(files[name].encode("utf-8")),
                "outputs": {name: sha},  # sealed: `kit verify receipts OUT` re-hashes it
            }
            if name.endswith(".csv"):  # checked by `kit verify receipts OUT`
                body["tables"] = {name.removesuffix(".csv"): sha}
            art = seal("audit-output", name, body, root["content_hash"])
            write_receipt(tmp / "receipts" / f"{name}.receipt.json", art)
        for path in sorted((tmp / "receipts").iterdir()):
            path.chmod(0o644)
    return sorted(files)


def audit(opts: AuditOptions) -> AuditResult:
    """Run the audit and write its outputs (the whole `kit audit`)."""
    result = run_audit(opts)
    write_outputs(result, opts)
    return result
