"""`kit grade import-judge / judge-swap / validate-judge`: an LLM checklist judge by card, a swap.

Seed 002 grades with an LLM judge against frozen checklists and re-grades with an independent
judge (Appendix C.4). `import-judge` writes a judge card (kit.grade.llm_judge) that `kit grade
judge --judge CARD` selects; `judge-swap` compares two verdict tables of the same runs
(kit.grade.judge_swap); `validate-judge` measures a judge card against people's verdicts and
writes it on the card (kit.grade.validate_judge). Exit status: 0 ok; 2 bad input, an unreachable endpoint, or questions
that gave no verdict (nothing written).
"""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.evaluation_options import bootstrap_options
from kit.commands.grading_options import checklists_option, solve_threshold_option
from kit.commands.scoring_options import endpoint_request_options
from kit.commands.sealed import sealed_output

SWAP_FORMATS = ("csv", "markdown", "latex")


@click.command("import-judge")
@click.option(
    "--base-url",
    required=True,
    help="An OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1) whose chat model "
    "--model becomes a checklist judge (a card of kind llm-judge).",
)
@click.option("--model", "llm_model", required=True, help="The chat model's name.")
@click.option(
    "--answer-rule",
    type=click.Choice(["auto", "logprobs", "first_word"]),
    default="auto",
    show_default=True,
    help="The verdict is the reply's first word (met / partial / not_met); logprobs adds "
    "P(verdict) from top log-probabilities as evidence; auto asks once and takes logprobs when "
    "returned.",
)
@click.option(
    "--prompt",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A prompt template file holding {question}, {criterion} and {answer} once each "
    "[the kit's frozen met / partial / not_met template].",
)
@endpoint_request_options
@click.option("--name", default=None, help="Name on the card [the model's name].")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Card folder to write (card.json; sealed).",
)
@sealed_output("out", kind="grade-import-judge")
def import_judge_cmd(
    base_url: str,
    llm_model: str,
    api_key_env: str,
    answer_rule: str,
    prompt: Path | None,
    concurrency: int,
    timeout: float,
    retries: int,
    backoff: float,
    name: str | None,
    out: Path,
) -> None:
    """A chat model behind an OpenAI-compatible endpoint as a checklist judge.

    The card pins the model and endpoint, the frozen prompt and its sha256, the decoding
    (temperature 0) and the answer rule: the verdict is the first word of the reply (met /
    partial / not_met), the rest of it the judge's reason; with log-probabilities, evidence =
    P(verdict) over the three labels. The endpoint is asked one test question; an unreachable
    one, or a reply that is no verdict, exits 2 and nothing is written. The API key is read
    from --api-key-env at run time. `kit grade judge --judge OUT` then grades with it.

    \b
    Example:
      kit grade import-judge --base-url http://127.0.0.1:8000/v1 \\
          --model Qwen2.5-7B-Instruct --out data/judge-qwen
    """
    from kit.grade.llm_judge import import_llm_judge
    from kit.guard.verifiers.llm.client import ClientSettings

    settings = ClientSettings(concurrency, timeout, retries, backoff)
    card = import_llm_judge(
        llm_model,
        base_url,
        out,
        answer_rule=answer_rule,
        prompt=prompt,
        name=name,
        api_key_env=api_key_env,
        settings=settings,
    )
    click.echo(f"judge: {card['name']}")
    click.echo(f"  kind llm-judge; model {card['model']} at {card['base_url']}")
    click.echo(f"  prompt sha256 {card['prompt_sha256']}; decoding {card['decoding']}")
    click.echo(f"  answer rule: {card['answer_rule']['rule']}")
    click.echo(f"  instrument sha256 {card['instrument_sha256']} (the score store's key)")
    click.echo(f"  API key read from ${card['api_key_env']} when set (never stored)")


@click.command("judge-swap")
@click.argument("a", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("b", type=click.Path(dir_okay=False, path_type=Path))
@checklists_option
@solve_threshold_option
@bootstrap_options()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for agreement.* and systems.* (csv, md, tex; sealed, replaced as a set).",
)
@sealed_output("out", kind="grade-judge-swap")
def judge_swap_cmd(
    a: Path,
    b: Path,
    checklists: Path,
    threshold: float,
    n_boot: int,
    seed: int,
    out: Path,
) -> None:
    """Swap the checklist judge: A and B, two verdict tables of the same runs (one judge each).

    Agreement on per-criterion verdicts (met vs not; met or partial vs not_met) and on solve
    labels: the base rates under each judge, observed agreement, Cohen's kappa, Gwet's AC1,
    positive- and negative-specific agreement, each with a percentile-bootstrap 95% CI (over
    answers for criteria, over (model, task) pairs for solve labels). Per system: solve rate
    under each judge, the difference (B - A) with a paired bootstrap CI, rank under each and
    the rank move (seed 002 C.4). Only (model, task) pairs both judges graded count. Writes
    OUT/agreement.{csv,md,tex} and OUT/systems.{csv,md,tex}.

    \b
    Example:
      kit grade judge-swap lexical.csv llm.csv --checklists checklists.jsonl --out swap/
    """
    from kit.core.schema import read_table, validate_frame
    from kit.core.tables import write_table
    from kit.grade.judge_swap import judge_swap
    from kit.grade.reader import read_checklists

    cls = read_checklists(checklists)
    swap = judge_swap(
        cls,
        read_table(a, "grade_verdicts"),
        read_table(b, "grade_verdicts"),
        seed,
        threshold,
        n_boot,
        names=(str(a), str(b)),
    )
    agreement = validate_frame(
        swap.agreement, "grade_judge_swap_agreement", str(out / "agreement.csv")
    )
    systems = validate_frame(swap.systems, "grade_judge_swap_systems", str(out / "systems.csv"))
    pair = f"{swap.judge_a} vs {swap.judge_b}"
    write_table(agreement, out / "agreement", SWAP_FORMATS, caption=f"Judge swap: {pair}")
    write_table(systems, out / "systems", SWAP_FORMATS, caption=f"Solve rates and ranks: {pair}")
    if swap.only_a or swap.only_b:
        click.echo(
            f"left out: {swap.only_a} (model, task) pair(s) graded by A only, {swap.only_b} by "
            "B only",
            err=True,
        )
    click.echo(f"judge swap {pair} (CIs: percentile bootstrap, {n_boot} resamples, seed {seed}):")
    for r in agreement.itertuples():
        click.echo(
            f"  {r.level}: n {r.n}, base rates {r.rate_a:.3f} / {r.rate_b:.3f}, kappa "
            f"{r.kappa:.3f} [{r.kappa_lo:.3f}, {r.kappa_hi:.3f}], AC1 {r.ac1:.3f}, PSA "
            f"{r.positive_specific:.3f}, NSA {r.negative_specific:.3f}"
        )
    click.echo(
        f"  systems: {len(systems)}; largest solve-rate shift {100 * swap.largest_shift:.1f} "
        f"points; {swap.n_rank_moved} changed rank"
    )


@click.command("validate-judge")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@checklists_option
@click.option(
    "--judge",
    "judge_card",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="The card folder of the LLM checklist judge to validate (kind llm-judge, written by "
    "kit grade import-judge).",
)
@click.option(
    "--gold",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="People's verdicts of some of RUNS: a verdict table (schemas/grade_verdicts.yaml) of "
    "one judge, every criterion of each (model, task) it grades.",
)
@solve_threshold_option
@bootstrap_options()
@click.option(
    "--max-answer-chars",
    type=click.IntRange(min=1),
    default=100_000,
    show_default=True,
    help="Answers longer than this are an error.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="New card folder: the judge's card with its validation (sealed).",
)
@sealed_output("out", kind="grade-validate-judge")
def validate_judge_cmd(
    runs: Path,
    checklists: Path,
    judge_card: Path,
    gold: Path,
    threshold: float,
    n_boot: int,
    seed: int,
    max_answer_chars: int,
    out: Path,
) -> None:
    """Validate an LLM checklist judge on people's verdicts of RUNS; write it on its card.

    The runs people graded (--gold) are graded by the judge twice, each time with the score
    store bypassed. Its first pass is compared with the people's verdicts as a judge swap would
    compare two judges: per criterion (met vs not; met or partial vs not_met) and per (model,
    task) solve label, the base rates beside Cohen's kappa, Gwet's AC1 and positive- /
    negative-specific agreement, each with a bootstrap CI (over answers for criteria).
    Self-consistency: the share of verdicts that differ between the two passes. Cost: seconds
    per verdict, requests, retries and tokens from the API's usage field. OUT is a copy of the
    card folder with its `validation` block (schemas/json/instrument_validation.schema.json);
    its instrument sha256 (and so its score-store entries) is the card's own. A question that
    fails or is no verdict exits 2 with nothing written.

    \b
    Example:
      kit grade validate-judge runs.jsonl --checklists checklists.jsonl --judge data/judge-qwen \\
          --gold people.csv --out data/judge-qwen-validated
    """
    from kit.core.schema import validate_json
    from kit.grade.llm_judge import check_judge_card
    from kit.grade.reader import read_checklists
    from kit.grade.validate_judge import validate_judge
    from kit.guard.evaluation.validation import VALIDATION_SCHEMA
    from kit.guard.verifiers.validate_card import validation_lines, write_validated_card
    from kit.runs.reader import read_runs

    read = read_runs(runs, max_answer_chars, "raise")
    card, entry, left_out = validate_judge(
        judge_card, read.runs, read_checklists(checklists), gold, threshold, n_boot, seed
    )
    validate_json(entry, VALIDATION_SCHEMA, str(out / "card.json"))
    check_judge_card(card, str(out / "card.json"))
    folder = judge_card if judge_card.is_dir() else judge_card.parent
    write_validated_card(folder, out, card)
    if left_out:
        click.echo(f"left out {left_out} (model, task) pair(s) of --gold without a run", err=True)
    for line in validation_lines(entry):
        click.echo(line)
