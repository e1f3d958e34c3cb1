"""One gold sample, two uses (issue 56): the cross-fitted anchored rate against gold alone and
PPI++ on the default verifier, on human-labelled held-out registry pairs.

Run: .venv/bin/python bench/bench_gold.py [--verifier data/verifier-nli] [--raw data/raw]
     [--sources climate_fever,check_covid,covidfact] [--n-gold 200] [--seeds 20]
     [--fine-tune-seeds 0] [--folds 5] [--out DIR]

Each source's held-out pairs (never in the default verifier's training: Climate-FEVER's
held-out claims, Check-COVID / SciFact / COVID-Fact dev and test; the labels are the
sources' own, human for all but COVID-Fact's machine-made refutations) are one audit: a pair
is a citation, "unsupported" (gold 1) is neutral or contradiction, the cluster is the claim
(one claim's evidence pairs are one "answer"). The truth is the population's unsupported
rate. Per seed, ``--n-gold`` pairs are drawn uniformly as gold and the rest are unlabelled;
rows, each over the same draws:

* ``gold_only`` -- the gold labels' mean (cluster-robust t interval by claim);
* ``ppi++ parent`` -- PPI++ on the parent verifier's P(unsupported) = 1 - s (kit audit --gold);
* ``cross-ppi recombine`` / ``cross-ppi fine-tune`` -- kit audit --gold --adapt: the verifier
  adapted fold by fold on the gold (the library's fold judges,
  :mod:`kit.guard.training.fold_judges`) and the rate by cross-PPI
  (:func:`kit.anchor.cross_fit.cross_fitted_mean`). Fine-tuning takes about 20 minutes per seed
  on 2 CPU cores (five fine-tunings, each fold judge scoring every unlabelled pair), so it runs
  on the first ``--fine-tune-seeds`` seeds only (0 by default; its widths are compared with
  gold-only on those seeds). A source with fewer than 2 x ``--n-gold`` held-out pairs is
  skipped (the unlabelled part would be smaller than the gold).

Printed: mean width, coverage of the truth, width over gold-only's on the same seeds (the
ratio against the baseline a lab would pick without a judge), the adapted judges' within-fold
AUC, seconds. The truth is the finite population's rate and the gold is a large share of it, so
the intervals (made for a rate of the population the items are drawn from) over-cover it here. Honest limits: a held-out *split* of a source the
default verifier trained on is not a left-out *source* (that needs the leave-one-source-out
cards of `make reproduce-loso`); and PPI cannot narrow an interval much when the unlabelled
part is not much larger than the gold (the variance of the judge's mean over N unlabelled items
is added to the rectifier's over n gold items).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kit.anchor.cross_fit import cross_fitted_mean
from kit.guard.training.adapt import ADAPT_LR, FitSettings, rule_scores
from kit.guard.training.adapt_folds import independent_units
from kit.guard.training.fold_judges import (
    GoldPairs,
    fine_tune_judge,
    nli_labels,
    recombine_judge,
)
from kit.guard.training.train_data import read_nli
from kit.guard.verifiers.load import load_verifier
from kit.stats.crossval_auc import within_fold_auc
from kit.stats.ppi import cluster_classical_mean, cluster_ppi_mean

KIND = {"entailment": "supported", "contradiction": "contradicted", "neutral": "not_enough_info"}


def held_out(raw: Path, source: str) -> pd.DataFrame:
    """A source's pairs outside the default verifier's training split, with the cluster (claim)."""
    frame = read_nli(raw, source)
    frame = frame[frame["split"] != "train"].reset_index(drop=True)
    if source == "climate_fever":
        cluster = frame["pair_id"].str.rsplit("-", n=1).str[0]
    else:
        cluster = frame["claim"]
    return frame.assign(cluster=cluster.astype(str))


def one_source(args: argparse.Namespace, source: str, verifier, parent_dir: Path) -> list[dict]:
    frame = held_out(args.raw, source)
    if len(frame) < 2 * args.n_gold:
        print(
            f"== {source}: SKIP, {len(frame)} held-out pairs < 2 x --n-gold {args.n_gold} (the "
            "unlabelled part would be smaller than the gold)",
            flush=True,
        )
        return []
    claims, passages = frame["claim"].tolist(), frame["passage"].tolist()
    y_all = (frame["label"] != "entailment").to_numpy(dtype=float)
    clusters = frame["cluster"].to_numpy(dtype=object)
    truth = float(y_all.mean())
    t0 = time.perf_counter()
    rule = verifier.card.to_dict()["extra"]["scoring"]
    parent_p = 1.0 - np.asarray(rule_scores(verifier, claims, passages)[rule], dtype=float)
    print(
        f"== {source}: {len(frame)} held-out pairs, {len(set(clusters))} claims, truth "
        f"(unsupported) {truth:.4f}; parent scored in {time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    results: list[dict] = []
    rng = np.random.default_rng(args.seed)
    settings = FitSettings(3, ADAPT_LR, 16, args.seed, "cpu")
    for s in range(args.seeds):
        gold = np.sort(rng.choice(len(frame), args.n_gold, replace=False))
        rest = np.setdiff1d(np.arange(len(frame)), gold)
        y = y_all[gold]
        units = independent_units(
            [claims[i] for i in gold], [passages[i] for i in gold], list(clusters[gold])
        )
        cg, cu = clusters[gold], clusters[rest]
        kinds = [KIND[lab] for lab in frame["label"].iloc[gold]]
        pairs = GoldPairs(claims, passages, gold, y, nli_labels(y, kinds))
        row = {"source": source, "seed": s, "truth": truth}
        est = {
            "gold_only": cluster_classical_mean(y, cg, args.alpha),
            "ppi++ parent": cluster_ppi_mean(y, parent_p[gold], parent_p[rest], cg, cu, args.alpha),
        }
        methods = ["recombine"] + (["fine-tune"] if s < args.fine_tune_seeds else [])
        for method in methods:
            fit = (
                recombine_judge(verifier, pairs)
                if method == "recombine"
                else fine_tune_judge(parent_dir, pairs, settings)
            )
            t1 = time.perf_counter()
            e, fitted = cross_fitted_mean(
                y, gold, rest, units, cg, cu, fit, args.folds, args.seed + s, args.alpha
            )
            est[f"cross-ppi {method}"] = e
            row[f"auc {method}"] = within_fold_auc(fitted.judge_gold, y.astype(bool), fitted.fold)
            row[f"seconds {method}"] = time.perf_counter() - t1
        for name, e in est.items():
            row[f"{name} estimate"] = e.estimate
            row[f"{name} width"] = e.ci_high - e.ci_low
            row[f"{name} covers"] = bool(e.ci_low <= truth <= e.ci_high)
        results.append(row)
        print(
            f"  seed {s}: "
            + "; ".join(
                f"{k} {e.estimate:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}]" for k, e in est.items()
            ),
            flush=True,
        )
    return results


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Per source and method: seeds, mean width, coverage, width over gold-only's (same seeds)."""
    out = []
    for source, part in rows.groupby("source", sort=False):
        for method in ("gold_only", "ppi++ parent", "cross-ppi recombine", "cross-ppi fine-tune"):
            col = f"{method} width"
            if col not in part or part[col].isna().all():
                continue
            have = part[part[col].notna()]
            out.append(
                {
                    "source": source,
                    "method": method,
                    "seeds": len(have),
                    "mean_width": have[col].mean(),
                    "coverage": have[f"{method} covers"].astype(float).mean(),
                    "width_vs_gold_only": (have[col] / have["gold_only width"]).mean(),
                    "auc_within_folds": have.get(f"auc {method.split()[-1]}", pd.Series()).mean()
                    if method.startswith("cross")
                    else np.nan,
                    "seconds_per_seed": have.get(
                        f"seconds {method.split()[-1]}", pd.Series()
                    ).mean()
                    if method.startswith("cross")
                    else np.nan,
                }
            )
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verifier", type=Path, default=Path("data/verifier-nli"))
    ap.add_argument("--raw", type=Path, default=Path("data/raw"))
    ap.add_argument("--sources", default="climate_fever,check_covid,covidfact")
    ap.add_argument("--n-gold", type=int, default=200)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--fine-tune-seeds", type=int, default=0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    if not (args.verifier / "card.json").is_file():
        print(f"SKIP: no verifier card at {args.verifier} (make reproduce builds it)")
        return
    verifier = load_verifier(args.verifier)
    rows = []
    for source in args.sources.split(","):
        rows += one_source(args, source, verifier, args.verifier)
    frame = pd.DataFrame(rows)
    if frame.empty:
        print("no source large enough for --n-gold")
        return
    table = summarise(frame)
    print()
    print(
        "cross-fitted anchoring on human-labelled held-out registry pairs "
        f"({args.n_gold} gold per draw, {args.folds} folds, alpha {args.alpha}):"
    )
    print(table.to_markdown(index=False, floatfmt=".3f"))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        frame.to_csv(args.out / "gold_draws.csv", index=False)
        table.to_csv(args.out / "gold_summary.csv", index=False)
        (args.out / "gold_summary.md").write_text(table.to_markdown(index=False, floatfmt=".3f"))
        (args.out / "gold_args.json").write_text(
            json.dumps({k: str(v) for k, v in vars(args).items()}, indent=1)
        )


if __name__ == "__main__":
    main()
