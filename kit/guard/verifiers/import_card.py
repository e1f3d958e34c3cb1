"""``kit guard import-verifier``: any ONNX cross-encoder a lab trusts, as a sha256-pinned card."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kit.core import atomic
from kit.core.errors import ConfigError, InputError, Location
from kit.guard.scoring.windows import WindowSpec
from kit.guard.verifiers.card_file import write_card
from kit.guard.verifiers.cross_export import attach_relatedness, scoring_text
from kit.guard.verifiers.export import sha256_bytes
from kit.guard.verifiers.layout import CARD_NAME
from kit.guard.verifiers.rules import CLASS_RULES
from kit.guard.verifiers.session import pair_feed


def import_verifier(
    model: Path,
    tokenizer: Path,
    labels: list[str],
    out: Path,
    scoring: str = "entailment",
    name: str | None = None,
    max_length: int = 256,
    relatedness: Path | None = None,
) -> dict[str, Any]:
    """Card folder for any ONNX cross-encoder: the model and tokenizer copied, sha256-pinned,
    checked by one forward pass (inputs accepted, one output column per label).

    ``relatedness``: a bi-encoder card folder (e.g. the kit's minilm-bi) copied in beside it and
    pinned, so the ``two_signal`` rule and ``kit guard adapt --method recombine`` can read the
    relatedness signal with the imported model's class probabilities."""
    from tokenizers import Tokenizer

    from kit.guard.verifiers.card import ModelCard
    from kit.guard.verifiers.load import load_card
    from kit.guard.verifiers.session import make_session

    if "entailment" not in labels:
        raise ConfigError(
            "bad_parameter", f"--labels must name 'entailment'; got {','.join(labels)}"
        )
    rules = (*CLASS_RULES, "two_signal") if relatedness is not None else CLASS_RULES
    if scoring not in rules:
        raise ConfigError(
            "bad_parameter",
            f"--scoring must be one of {', '.join(rules)}"
            + ("" if relatedness is not None else " (two_signal needs --relatedness)"),
        )
    if relatedness is not None and load_card(relatedness)["kind"] != "bi-encoder":
        raise ConfigError(
            "bad_parameter", f"--relatedness must be a bi-encoder card; {relatedness} is not"
        )
    for p in (model, tokenizer):
        if not Path(p).is_file():
            raise InputError("missing_file", "file not found", where=Location(str(p)))
    try:
        tok = Tokenizer.from_file(str(tokenizer))
    except Exception as exc:  # tokenizers raises a bare Exception on a bad file
        raise InputError(
            "bad_tokenizer", f"not a tokenizers JSON file ({exc})", where=Location(str(tokenizer))
        ) from None
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")
    tok_text = tok.to_str(pretty=True)
    try:
        sess = make_session(Path(model))
    except InputError:
        raise
    except Exception as exc:
        raise InputError(
            "bad_model", f"onnxruntime cannot load it ({exc})", where=Location(str(model))
        ) from None
    names = {i.name for i in sess.get_inputs()}
    if not {"input_ids", "attention_mask"} <= names:
        raise InputError(
            "bad_model",
            f"inputs must include input_ids and attention_mask; got {sorted(names)}",
            where=Location(str(model)),
        )
    enc = tok.encode_batch([("a claim", "a passage")])
    feed = pair_feed(enc)
    logits = np.asarray(sess.run(None, {k: v for k, v in feed.items() if k in names})[0])
    if logits.ndim != 2 or logits.shape[1] not in (1, len(labels)):
        raise InputError(
            "bad_model",
            f"output must be [batch, {len(labels)}] (one column per --labels entry); got {list(logits.shape)}",
            where=Location(str(model)),
        )
    data = Path(model).read_bytes()
    card = ModelCard(
        name=name or Path(model).stem,
        kind="cross-encoder",
        onnx_file="model.onnx",
        onnx_sha256=sha256_bytes(data),
        tokenizer="tokenizer.json (imported; pair encoding, truncation "
        f"{max_length}, pad to longest)",
        tokenizer_sha256=sha256_bytes(tok_text.encode("utf-8")),
        max_length=max_length,
        scoring_rule=f"{scoring_text(scoring)} (imported verifier)",
        window_rule=WindowSpec().describe(),
        validated_on="not validated by the kit: run `kit guard evaluate` on labelled pairs "
        "before trusting it",
        source=f"imported by `kit guard import-verifier` from {Path(model).name}",
        extra={"labels": labels, "scoring": scoring, "imported_sha256": sha256_bytes(data)},
    ).to_dict()
    with atomic.staged_dir(out) as final:
        final.chmod(0o755)
        if relatedness is not None:
            card["extra"]["relatedness"] = attach_relatedness(final, relatedness)
        (final / "model.onnx").write_bytes(data)
        (final / "tokenizer.json").write_text(tok_text, encoding="utf-8")
        write_card(final, card, Path(out) / CARD_NAME)
    return card
