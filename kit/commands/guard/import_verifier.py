"""`kit guard import-verifier`: bring your own verifier (an ONNX cross-encoder or an LLM).

Thin shell over :mod:`kit.guard.verifiers.import_card` and :mod:`kit.guard.verifiers.llm.verifier`;
the card folder is staged, sealed and swapped in as a set
(:func:`kit.commands.sealed.sealed_output`).
"""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.scoring_options import endpoint_request_options
from kit.commands.sealed import sealed_output
from kit.core.errors import ConfigError
from kit.guard.evaluation.card_report import card_lines


def print_card(card: dict, build: dict | None = None) -> None:
    """The card's summary; the folder itself is named by @sealed_output's last line."""
    for line in card_lines(card, build):
        click.echo(line)


@click.command("import-verifier")
@click.argument(
    "model", metavar="[MODEL]", required=False, type=click.Path(dir_okay=False, path_type=Path)
)
@click.option(
    "--tokenizer",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The ONNX model's tokenizers JSON (tokenizer.json); required with MODEL.",
)
@click.option(
    "--labels",
    default=None,
    help="Output columns in order, e.g. entailment,neutral,contradiction (must name "
    "entailment); required with MODEL.",
)
@click.option(
    "--scoring",
    type=click.Choice(["entailment", "entailment_minus_contradiction", "two_signal"]),
    default="entailment",
    show_default=True,
    help="Support score of a pair: P(entailment); P(entailment) - P(contradiction); or "
    "two_signal, (P(entailment) + relatedness) / 2 (needs --relatedness).",
)
@click.option(
    "--relatedness",
    default=None,
    help="A bi-encoder verifier (minilm-bi, or a bi-encoder card folder) carried in the card "
    "as its relatedness signal: two_signal reads it, and `kit guard adapt --method "
    "recombine` may weigh it [none].",
)
@click.option(
    "--max-length",
    type=click.IntRange(min=8),
    default=256,
    show_default=True,
    help="Token limit of a (claim, window) pair.",
)
@click.option(
    "--base-url",
    default=None,
    help="Instead of MODEL: an OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1) whose "
    "chat model --model becomes an LLM verifier (a card of kind llm).",
)
@click.option("--model", "llm_model", default=None, help="With --base-url: the chat model's name.")
@click.option(
    "--answer-rule",
    type=click.Choice(["auto", "logprobs", "samples"]),
    default="auto",
    show_default=True,
    help="With --base-url: s = P(yes) / (P(yes) + P(no)) from top log-probabilities, or the "
    "yes-share of --samples answers; auto asks once and takes logprobs when returned.",
)
@click.option(
    "--samples",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="With the samples rule: answers per question (temperature 1, seeds 0..k-1).",
)
@click.option(
    "--prompt",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --base-url: a prompt template file holding {claim} and {passage} once each "
    "[the kit's frozen yes / no template].",
)
@endpoint_request_options
@click.option("--name", default=None, help="Name on the card [the file's stem, or the model].")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Card folder to write (the model, tokenizer and card.json; for --base-url card.json).",
)
@sealed_output("out", kind="guard-import-verifier", legacy="card.json")
def import_cmd(
    model: Path | None,
    tokenizer: Path | None,
    labels: str | None,
    scoring: str,
    relatedness: str | None,
    max_length: int,
    base_url: str | None,
    llm_model: str | None,
    api_key_env: str,
    answer_rule: str,
    samples: int,
    prompt: Path | None,
    concurrency: int,
    timeout: float,
    retries: int,
    backoff: float,
    name: str | None,
    out: Path,
) -> None:
    """Bring your own verifier: an ONNX cross-encoder, or a chat model behind an endpoint.

    MODEL is the ONNX file of the cross-encoder: one forward pass checks that the model takes
    (input_ids, attention_mask[, token_type_ids]) and returns one logit column per label.

    With --base-url and --model instead, the card pins a chat model at an OpenAI-compatible
    endpoint (vLLM, the llama.cpp server, Ollama, a hosted API): the model name and endpoint,
    the frozen prompt and its sha256, the decoding (temperature 0, top log-probabilities) and
    the answer rule (P(yes) normalised over yes / no, or the yes-share of k samples where the
    endpoint returns no log-probabilities). The endpoint is asked once; an unreachable one
    exits 2 and nothing is written. The API key is read from --api-key-env at run time.

    Every command then selects it with `--verifier OUT`.

    \b
    Example:
      kit guard import-verifier nli.onnx --tokenizer tokenizer.json \\
          --labels entailment,neutral,contradiction --out data/verifier-mine
      kit guard import-verifier nli.onnx --tokenizer tokenizer.json \\
          --labels entailment,neutral,contradiction --relatedness minilm-bi \\
          --scoring two_signal --out data/verifier-mine
      kit guard import-verifier --base-url http://127.0.0.1:8000/v1 \\
          --model Qwen2.5-7B-Instruct --out data/verifier-qwen
    """
    from kit.guard.verifiers.import_card import import_verifier
    from kit.guard.verifiers.llm.client import ClientSettings
    from kit.guard.verifiers.llm.verifier import import_llm_verifier
    from kit.guard.verifiers.load import resolve_verifier

    if base_url is not None:
        if model is not None or llm_model is None:
            raise ConfigError(
                "bad_parameter", "--base-url takes --model NAME and no MODEL file argument"
            )
        settings = ClientSettings(concurrency, timeout, retries, backoff)
        card = import_llm_verifier(
            llm_model,
            base_url,
            out,
            answer_rule=answer_rule,
            prompt=prompt,
            name=name,
            api_key_env=api_key_env,
            settings=settings,
            samples=samples,
        )
        print_card(card)
        return
    if model is None or tokenizer is None or labels is None:
        raise ConfigError(
            "bad_parameter",
            "give MODEL (an ONNX file) with --tokenizer and --labels, or --base-url with --model",
        )
    names = [x.strip() for x in labels.split(",") if x.strip()]
    card = import_verifier(
        model,
        tokenizer,
        names,
        out,
        scoring=scoring,
        name=name,
        max_length=max_length,
        relatedness=resolve_verifier(relatedness) if relatedness else None,
    )
    print_card(card)
