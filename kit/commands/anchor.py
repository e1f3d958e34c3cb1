"""`kit anchor`: a judge's rate anchored on a gold sample (PPI++; issue 40 part 4; kit.anchor)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kit.commands.sealed import sealed_file

_file = click.Path(dir_okay=False, path_type=Path)


@click.command("anchor")
@click.argument("judged", type=_file)
@click.option(
    "--gold",
    type=_file,
    required=True,
    help="Gold labels (csv or parquet: item_id, gold 0/1; schemas/anchor_gold.yaml) of a uniform "
    "random subset of JUDGED's items.",
)
@click.option(
    "--out",
    type=_file,
    required=True,
    help="The artifact (JSON; schemas/json/anchor.schema.json), sealed in the sidecar "
    "OUT.receipt.json beside it (e.g. anchor.json.receipt.json).",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Error level: every interval is a two-sided 1 - alpha confidence interval (CLT, "
    "approximate).",
)
@click.option(
    "--name",
    default=None,
    help="The judge's name, recorded and shown: the judge-only rate is relative to it "
    "[JUDGED's file name].",
)
@click.option(
    "--half-width",
    type=click.FloatRange(0, 1, min_open=True),
    default=None,
    help="Also plan: how many gold items a PPI++ interval of +- this needs, with GOLD as the "
    "pilot.",
)
@sealed_file("out", kind="anchor")
def anchor(
    judged: Path,
    gold: Path,
    out: Path,
    alpha: float,
    name: str | None,
    half_width: float | None,
) -> None:
    """A judge's rate anchored on a gold sample: PPI++ beside judge-only and gold-only.

    JUDGED is a table (csv or parquet; schemas/anchor_judged.yaml) of every judged item:
    item_id, judge (a score in [0, 1], or 0/1). GOLD holds human labels (item_id, gold 0/1)
    of a uniform random subset of those items; the judged items without gold are the
    unlabelled part. OUT.json holds `rows`, each with `method` (ppi, judge_only, gold_only),
    `estimate`, `ci_low`, `ci_high` at --alpha, `se`, `n` and `lambda`:

    \b
      ppi         PPI++ (Angelopoulos, Duchi & Zrnic 2023): lambda x the judge's mean on
                  the unlabelled items + mean(gold - lambda x judge) on the gold items, lambda
                  tuned for the narrowest interval in [0, 1] (1 = PPI, Angelopoulos et al.,
                  Science 2023; 0 = gold-only). The rate of gold labels, whatever the judge's
                  bias, under the assumption that gold is a uniform random subset.
      judge_only  the judge's mean over every judged item: relative to the named judge.
      gold_only   the gold labels' mean.

    With a `stratum` column in JUDGED the design is stratified: gold drawn uniformly within
    each stratum, the strata sizes counted in JUDGED; PPI++ and gold-only then carry the
    design weights (gold M_h/n_h, unlabelled M_h/(M_h - n_h)), and a stratum without gold is
    refused.

    With a `cluster` column (e.g. the run id of a citation: several citations of one answer
    are not independent) every interval is cluster-robust: PPI++ and gold-only by the CR1
    variance of their linearisation, the judge-only Wilson interval at the effective n (Kish
    design effect). Not together with `stratum`.

    Intervals (each row names its own, `interval`): PPI++ and gold-only the CLT normal
    interval (as ppi-python's); judge-only Wilson's for a 0/1 judge (a proportion, as every
    rate of the kit), the CLT interval of its mean for scores in [0, 1]. Refused (exit 2, naming
    file, row, column): a duplicate item_id, a judge score outside [0, 1], a gold label other
    than 0/1, a gold item that was not judged, fewer than 10 gold items, no unlabelled item.
    Fewer than 30 gold items, or fewer than 10 of either class, is said in a warning: the
    coverage may fall short of 1 - alpha. --half-width H plans the gold sample size for an
    interval of +-H from GOLD as a pilot.

    \b
    Example:
      kit anchor examples/anchor/judged.csv --gold examples/anchor/gold.csv --out /tmp/anchor.json
    """
    from kit.anchor.files import ARTIFACT, anchor_files, lines
    from kit.core import atomic
    from kit.core.schema import validate_json

    result, art = anchor_files(judged, gold, alpha, name, half_width)
    validate_json(art, ARTIFACT, str(out))
    atomic.write_text(out, json.dumps(art, indent=2, sort_keys=True) + "\n")
    click.echo("\n".join(lines(result, out)))
