"""`kit grade audit-citations`: the claims, L1 and L2 stages of `kit audit` as a rates table.

docs/architecture.md, "Grading"; the group is assembled in kit/commands/grade/__init__.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kit.commands.grade.runs import emit
from kit.commands.grading_options import audit_options, citation_check_options
from kit.commands.options import table_file_option, table_out_format_option
from kit.commands.sealed import sealed_file
from kit.core.tables import emit as emit_table


@click.command("audit-citations")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--catalog",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Deprecated and ignored (one release): L1/L2 run over --corpus / --raw exactly as in "
    "`kit audit`.",
)
@click.option(
    "--citations-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write one row per audited (run, claim, citation) (l1, evidence, scores, l2) as csv.",
)
@citation_check_options
@table_out_format_option
@table_file_option
@sealed_file("out", kind="grade-audit-citations", also=("citations_out",))
def audit_cmd(
    runs: Path,
    catalog: Path | None,
    citations_out: Path | None,
    fmt: str | None,
    out: Path | None,
    **check: Any,
) -> None:
    """Two-level citation audit of RUNS (a runs JSONL file): the claims, L1 and L2 stages of
    `kit audit`, as a rates table.

    A view of the `kit audit` pipeline (kit.audit.pipeline.audit_l1_l2): the same functions,
    options and defaults, so both give the same L1/L2 figures on the same input. L1: found /
    notfound / transient (lookup failure; never fabrication) / unchecked (outside every
    corpus's declared complete coverage). L2: yes / partial / no at --yes-at / --partial-at,
    checked first against the tool response the agent read, else the corpus passage. Rates
    pooled, by identifier type, by model, with Wilson 95% CIs. No conformal flags, no report:
    use `kit audit` for those.

    Example: kit grade audit-citations runs.jsonl --verifier minilm-bi --format markdown
    """
    from kit.audit.pipeline import audit_l1_l2
    from kit.grade.citation_audit import CLUSTER_NOTE, audit_rates

    if catalog is not None:
        click.echo(
            "--catalog is deprecated and ignored: L1/L2 run over --corpus / --raw as in `kit audit`",
            err=True,
        )
    result = audit_l1_l2(audit_options(runs, **check))
    audited, rule = result.check.frame, result.check.rule
    if citations_out is not None:
        emit_table(audited, "grade_audited_citations", "csv", citations_out, "", str(citations_out))
    n = len(result.inputs.runs.runs)
    if check["limit"] is not None:
        click.echo(
            f"--limit {check['limit']}: the first {n} of {result.inputs.n_in_file} runs", err=True
        )
    click.echo(
        f"instrument: {result.context.scorer.name}; L2 yes >= {rule.yes_at}, partial >= "
        f"{rule.partial_at}; {CLUSTER_NOTE}; score store {result.context.scorer.hits} hit(s), "
        f"{result.context.scorer.misses} scored",
        err=True,
    )
    emit(audit_rates(audited), "grade_citation_rates", fmt, out, "citation audit")
