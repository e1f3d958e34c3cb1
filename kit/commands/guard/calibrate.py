"""`kit guard calibrate`: calibrate the guard on a lab's own labelled sample (issue 13).

Registered on the ``guard`` group in :mod:`kit.commands.guard` (the package's ``__init__``).
"""

from __future__ import annotations

from pathlib import Path

import click

from kit import __version__
from kit.commands.scoring_options import batch_size_option, device_option, variant_option
from kit.commands.sealed import sealed_file
from kit.guard.verifiers.load import DEFAULT_VERIFIER, VERIFIER_HELP


@click.command("calibrate")
@click.argument("labelled", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--verifier", default=DEFAULT_VERIFIER, show_default=True, help=VERIFIER_HELP)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Calibration artifact (JSON) for --calibration of `kit guard run` and `kit audit`.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.1,
    show_default=True,
    help="Miss tolerance: catch >= 1 - alpha of exchangeable unsupported citations.",
)
@click.option(
    "--label-map",
    default=None,
    help="Extra label mapping SRC=DST,... onto entailment/neutral/contradiction "
    "(SUPPORT/CONTRADICT/NEI and the three NLI labels are known).",
)
@click.option("--name", default=None, help="Name of the sample in reports [file name].")
@click.option(
    "--pooled",
    is_flag=True,
    help="One tau over all negative types (default: Mondrian, one tau per type, when the "
    "negatives have two or more types).",
)
@variant_option
@device_option
@batch_size_option
@sealed_file("out", kind="guard-calibrate")
def calibrate_cmd(
    labelled: Path,
    verifier: str,
    out: Path,
    alpha: float,
    label_map: str | None,
    name: str | None,
    pooled: bool,
    variant: str,
    device: str,
    batch_size: int,
) -> None:
    """Calibrate the guard's tau on a lab's own labelled sample; write a sealed artifact.

    LABELLED is a pair table in csv, parquet or jsonl (claim, passage, label; optional pair_id,
    group, type; kit.guard.pairtable) of citations
    the lab labelled itself: label SUPPORT/CONTRADICT/NEI or entailment/neutral/contradiction
    (others via --label-map). Supported = entailment; unsupported = the rest. The negative type
    is the `type` column when present, else the label (contradiction vs neutral/NEI); with two
    or more types tau is Mondrian: one tau per type (tau_t = s_(k_t), k_t = ceil((n_t+1)(1-alpha)))
    and the flag threshold is the largest, so the catch of every type is >= 1 - alpha.

    Refuses (exit 2) before scoring when the sample has too few unsupported pairs for alpha and
    says how many are needed. The artifact holds the verifier's name and sha256 (ONNX, or an LLM card's instrument), the
    sample's sha256, n, the scores, negative types, alpha, tau, k, per-type taus, the false-flag
    rate on the supported pairs (Wilson CI) and a seal (sha256 over the rest).

    \b
    Example:
      kit guard calibrate labelled.csv --verifier data/verifier-nli --alpha 0.1 --out cal.json
      kit guard run answers.jsonl --calibration cal.json --verifier data/verifier-nli --out g/
    """
    from kit.guard.conformal import lab_calibration as lab

    options = lab.CalibrateOptions(
        labelled=labelled,
        verifier=verifier,
        alpha=alpha,
        label_map=label_map,
        name=name,
        pooled=pooled,
        variant=variant,
        device=device,
        batch_size=batch_size,
        kit_version=__version__,
    )
    result = lab.calibrate(options, say=lambda line: click.echo(line, err=True))
    lab.write(result, out)
    for line in lab.calibration_lines(result, out):
        click.echo(line)
