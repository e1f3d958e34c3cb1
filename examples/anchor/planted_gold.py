"""Write a CONSTRUCTION-LABELLED gold sample for `kit audit --gold` from an audit of the planted
set: a uniform random subset of its scored citations, labelled by the planted truth (a wrong
paper is unsupported, gold 1; the right paper supported, gold 0). Not human gold: it shows the
mechanics of `--gold` and `--adapt` on data every newcomer has.

    .venv/bin/python examples/anchor/planted_gold.py /tmp/audit /tmp/planted --n 150 --seed 0 \
        --out /tmp/planted-gold.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kit.core.schema import read_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("audit", type=Path, help="A `kit audit` folder of the planted runs.")
    ap.add_argument("planted", type=Path, help="The `kit grade planted` folder (its truth.csv).")
    ap.add_argument("--n", type=int, default=150, help="Gold citations to draw.")
    ap.add_argument("--seed", type=int, default=0, help="Seed of the draw.")
    ap.add_argument("--metric", default="unsupported_rate", help="The rate the gold anchors.")
    ap.add_argument("--out", type=Path, required=True, help="The gold csv.")
    args = ap.parse_args()
    cites = read_table(args.audit / "citations.csv", "audit_citations")
    scored = cites[cites["support_score"].notna() & cites["l1"].isin(["found", "unchecked"])]
    truth = read_table(args.planted / "truth.csv", "grade_planted_truth").set_index("run_id")
    rng = np.random.default_rng(args.seed)
    pick = scored.iloc[np.sort(rng.choice(len(scored), size=args.n, replace=False))]
    wrong = [truth.loc[r, "planted"] == "wrong" for r in pick["run_id"]]
    gold = pd.DataFrame(
        {
            "metric": args.metric,
            "item_id": [
                f"{r.run_id}/{r.claim_no}/{r.citation}" for r in pick.itertuples(index=False)
            ],
            "gold": np.asarray(wrong, dtype=int),
        }
    )
    gold.to_csv(args.out, index=False)
    print(
        f"wrote {args.out}: {len(gold)} construction-labelled gold citations, {sum(wrong)} unsupported"
    )


if __name__ == "__main__":
    main()
