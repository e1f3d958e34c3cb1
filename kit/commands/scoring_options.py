"""Options of the commands that score with a verifier or ask a model endpoint, declared once.

The verifier (``--verifier``, ``--variant``, ``--device``, ``--batch-size``), the shared score
store (``--cache-dir``, ``--no-cache``), where the costly work runs (``--engine`` and its Ray
options) and how an LLM card asks its endpoint (``--api-key-env``, ``--concurrency``, ...).
Names from :mod:`kit.commands.vocabulary`; the rules they follow: :mod:`kit.commands.options`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from kit.commands.options import PathDefault

variant_option = click.option(
    "--variant",
    type=click.Choice(["fp32", "int8"]),
    default="fp32",
    show_default=True,
    help="Verifier weights: fp32, or int8 (dynamically quantised: faster on CPU; scores differ "
    "slightly, so the score store keeps them apart).",
)
device_option = click.option(
    "--device",
    type=click.Choice(["cpu", "cuda"]),
    default="cpu",
    show_default=True,
    help="Where the verifier runs (cuda needs a CUDA-enabled onnxruntime).",
)
batch_size_option = click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=32,
    show_default=True,
    help="(claim, passage) pairs per forward pass of the verifier (memory vs speed; fp32 scores "
    "stay the same to ~1e-8, int8 scores can move by ~0.01: dynamic quantisation scales each "
    "batch as a whole).",
)


def verifier_options(f: Callable[..., None]) -> Callable[..., None]:
    """--verifier (a built-in name or a card folder), --variant, --device, --batch-size."""
    from kit.guard.verifiers.load import DEFAULT_VERIFIER, VERIFIER_HELP

    for opt in reversed(
        [
            click.option(
                "--verifier", default=DEFAULT_VERIFIER, show_default=True, help=VERIFIER_HELP
            ),
            variant_option,
            device_option,
            batch_size_option,
        ]
    ):
        f = opt(f)
    return f


def score_store_options(f: Callable[..., None]) -> Callable[..., None]:
    """--cache-dir DIR (the shared score store; env KIT_CACHE_DIR) and --no-cache."""
    from kit.guard.scoring.score_store import DEFAULT_STORE, ENV_VAR

    f = click.option(
        "--no-cache",
        is_flag=True,
        help="Keep scores in memory only: neither read nor write the score store.",
    )(f)
    return click.option(
        "--cache-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=DEFAULT_STORE,
        show_default=True,
        cls=PathDefault,
        envvar=ENV_VAR,
        show_envvar=True,
        help="The score store shared by every command and output folder: verifier scores keyed "
        "by sha256 of (verifier ONNX, scoring mode, claim, passage); safe for concurrent runs.",
    )(f)


def endpoint_request_options(f: Callable[..., None]) -> Callable[..., None]:
    """How an LLM card asks its endpoint (kit guard import-verifier --base-url, kit grade
    import-judge): --api-key-env, --concurrency, --timeout, --retries, --backoff. Written on the
    card, so every later command asks the same way."""
    for decl, kwargs in reversed(
        [
            (
                "--api-key-env",
                dict(
                    default="OPENAI_API_KEY",
                    show_default=True,
                    help="LLM endpoint: the environment variable holding the API key (never "
                    "stored).",
                ),
            ),
            (
                "--concurrency",
                dict(
                    type=click.IntRange(min=1),
                    default=4,
                    show_default=True,
                    help="LLM endpoint: requests in flight at once.",
                ),
            ),
            (
                "--timeout",
                dict(
                    type=click.FloatRange(min=0, min_open=True),
                    default=60.0,
                    show_default=True,
                    help="LLM endpoint: seconds per request.",
                ),
            ),
            (
                "--retries",
                dict(
                    type=click.IntRange(min=0),
                    default=3,
                    show_default=True,
                    help="LLM endpoint: retries of a request that failed in transport or with "
                    "HTTP 429/5xx.",
                ),
            ),
            (
                "--backoff",
                dict(
                    type=click.FloatRange(min=0),
                    default=1.0,
                    show_default=True,
                    help="LLM endpoint: seconds before the first retry, doubled before each next.",
                ),
            ),
        ]
    ):
        f = click.option(decl, **kwargs)(f)
    return f


def score_store_root(cache_dir: Path, no_cache: bool) -> Path | None:
    """The store folder the command uses (None with --no-cache)."""
    return None if no_cache else cache_dir


def engine_options(f: Callable[..., None]) -> Callable[..., None]:
    """--engine local|ray, --ray-address ADDR, --ray-workers N, --ray-connect-timeout S
    (docs/scale.md; kit.core.parallel)."""
    from kit.core.parallel import CONNECT_TIMEOUT, ENGINES

    f = click.option(
        "--ray-connect-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        help="With --engine ray: seconds to wait for the cluster to answer, at connection "
        "(one TCP probe, then one Ray attempt) and mid-run (silence this long, at most 45 s, "
        f"ends the run with exit 2; finished scores stay in the store) [default: "
        f"{CONNECT_TIMEOUT:g}].",
    )(f)
    f = click.option(
        "--ray-workers",
        type=click.IntRange(min=1),
        default=None,
        help="Ray workers in parallel (scoring: actors of one CPU and one model load each; "
        "certify: 4 groups of draws each); default: the cluster's CPUs.",
    )(f)
    f = click.option(
        "--ray-address",
        default=None,
        help="With --engine ray: the cluster to use (HOST:6379 as `ray start --head` prints, "
        "'auto', ray://HOST:10001, or 'local' for a private Ray); default: RAY_ADDRESS if "
        "set, else a cluster `ray start` runs on this machine, else a private Ray.",
    )(f)
    return click.option(
        "--engine",
        type=click.Choice(ENGINES),
        default="local",
        show_default=True,
        help="Where the costly work runs (the verifier's model; certify's simulation draws): "
        "this process, or a Ray cluster (the 'ray' extra); outputs are the same bytes either way.",
    )(f)
