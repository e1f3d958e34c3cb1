"""Write examples/anchor/judged.csv and gold.csv: a SYNTHETIC judge and a SYNTHETIC gold sample.

600 citations (ids ``syn-cite-NNNN``), each unsupported with probability 0.20 (the hidden truth,
drawn here and never measured on a real agent). A synthetic judge scores each citation with a
probability that it is unsupported: 0.75 + noise for an unsupported one, 0.25 + noise for a
supported one, so a reading at 0.5 would call 15-20% of supported citations unsupported -- a
judge biased upwards, as judges are. 80 citations, drawn uniformly at random, carry the gold
label (1 = unsupported). Run from the repository root:

    .venv/bin/python examples/anchor/make_example.py

The output is deterministic (numpy ``default_rng(40)``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
N_ITEMS, N_GOLD, RATE = 600, 80, 0.20


def main() -> None:
    rng = np.random.default_rng(40)
    truth = rng.random(N_ITEMS) < RATE
    score = np.clip(np.where(truth, 0.75, 0.25) + rng.normal(0.0, 0.2, N_ITEMS), 0.0, 1.0)
    ids = [f"syn-cite-{i:04d}" for i in range(1, N_ITEMS + 1)]
    gold = np.sort(rng.choice(N_ITEMS, size=N_GOLD, replace=False))
    judged = ["item_id,judge", *(f"{i},{s:.3f}" for i, s in zip(ids, score, strict=True))]
    (HERE / "judged.csv").write_text("\n".join(judged) + "\n")
    rows = ["item_id,gold", *(f"{ids[i]},{int(truth[i])}" for i in gold)]
    (HERE / "gold.csv").write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
