"""Synthetic score boards with known truth (for tests, examples and calibration checks).

Score model, per (system s, task t in cluster g, readout n):

    score = clip(base + effect_s + task_t,n + u_s,g + e_s,t,n, 0, 1)

task_t,n is shared by all systems (it cancels in paired differences), u_s,g ~ N(0, cluster_sd^2)
is a system-by-cluster effect that makes the differences of one cluster correlated (the reason
for the cluster-robust radius), and e ~ N(0, noise_sd^2). A run fails with probability
``fail_rate`` (score null, failed true). The true difference of s over s' on every readout is
effect_s - effect_s' (up to clipping, made rare by ``base`` = 0.5 and small spreads).

Cluster sizes are equal (up to one task) by default; ``cluster_sizes`` gives them explicitly and
:func:`unequal_sizes` makes a geometric spread (BioLitBench-like: a handful of topical clusters
of very different sizes). A large ``cluster_sd`` with unequal sizes is the regime where CR1
with t(K-1) is anti-conservative (docs/certify.md).

Every synthetic row says so: task and cluster ids start with ``syn-`` and the entry hash is
``synthetic:<label>``. Pure: the randomness comes only from the ``Generator`` passed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kit.core.errors import ConfigError, check_param

SYNTHETIC_PREFIX = "syn-"


def unequal_sizes(n_tasks: int, n_clusters: int, ratio: float = 8.0) -> tuple[int, ...]:
    """Cluster sizes summing to ``n_tasks``, geometric from smallest to largest = ``ratio`` x.

    Rounded by largest remainders; every cluster keeps at least one task.
    """
    check_param(
        "n_clusters", n_clusters, 1 <= n_clusters <= n_tasks, "in [1, n_tasks]", "unequal_sizes"
    )
    check_param("ratio", ratio, ratio >= 1, "a number >= 1", "unequal_sizes")
    w = ratio ** np.linspace(0.0, 1.0, n_clusters)
    spare = n_tasks - n_clusters
    raw = w / w.sum() * spare
    base = np.floor(raw).astype(int)
    rest = spare - int(base.sum())
    base[np.argsort(-(raw - base), kind="stable")[:rest]] += 1
    return tuple(int(x) for x in base + 1)


def simulate_scores(
    rng: np.random.Generator,
    effects: np.ndarray,
    codes: np.ndarray,
    n_clusters: int,
    n_readouts: int,
    base: float | np.ndarray,
    task_sd: float | np.ndarray,
    cluster_sd: float | np.ndarray,
    noise_sd: float | np.ndarray,
) -> np.ndarray:
    """Scores (S, T, R) of the module's model: effects (S, R) (or (S, 1)); ``codes`` (T,) the
    cluster of each task; ``base`` and the three sds scalars or one per readout (R,).

    The system-by-cluster effect u is shared by the readouts of a (system, cluster), scaled by
    each readout's ``cluster_sd``. Draw order: task (1, T, R), u (S, K, 1), e (S, T, R).
    """
    eff = np.asarray(effects, dtype=float)
    n_s, n_t = eff.shape[0], len(codes)
    task = rng.normal(0.0, 1.0, size=(1, n_t, n_readouts)) * np.asarray(task_sd, dtype=float)
    u = rng.normal(0.0, 1.0, size=(n_s, n_clusters, 1))[:, codes, :] * np.asarray(
        cluster_sd, dtype=float
    )
    e = rng.normal(0.0, 1.0, size=(n_s, n_t, n_readouts)) * np.asarray(noise_sd, dtype=float)
    return np.clip(np.asarray(base, dtype=float) + eff[:, None, :] + task + u + e, 0.0, 1.0)


def simulate_board(
    rng: np.random.Generator,
    effects: Mapping[str, float],
    *,
    n_tasks: int = 50,
    n_clusters: int = 23,
    cluster_sizes: Sequence[int] | None = None,
    readouts: Sequence[str] = ("quality",),
    base: float = 0.5,
    task_sd: float = 0.05,
    cluster_sd: float = 0.03,
    noise_sd: float = 0.08,
    fail_rate: float = 0.0,
    label: str = "board",
) -> pd.DataFrame:
    """A long score table (``schemas/scores.yaml``) with known true system effects.

    ``cluster_sizes`` (one positive size per cluster, summing to ``n_tasks``) overrides the
    equal split.
    """
    check_param("n_tasks", n_tasks, n_tasks >= 1, "an integer >= 1", "simulate_board")
    check_param(
        "n_clusters", n_clusters, 1 <= n_clusters <= n_tasks, "in [1, n_tasks]", "simulate_board"
    )
    if cluster_sizes is not None:
        sizes = np.asarray(cluster_sizes, dtype=np.int64)
        check_param(
            "cluster_sizes",
            cluster_sizes,
            len(sizes) == n_clusters and bool(np.all(sizes >= 1)) and sizes.sum() == n_tasks,
            "n_clusters positive sizes summing to n_tasks",
            "simulate_board",
        )
    check_param("fail_rate", fail_rate, 0 <= fail_rate < 1, "in [0, 1)", "simulate_board")
    check_param("effects", effects, len(effects) >= 1, "a non-empty mapping", "simulate_board")
    systems = sorted(effects)
    n_s, n_r = len(systems), len(readouts)
    if cluster_sizes is None:
        codes = np.sort(np.arange(n_tasks) % n_clusters)
    else:
        codes = np.repeat(np.arange(n_clusters), sizes)
    eff = np.array([effects[s] for s in systems], dtype=float)
    score = simulate_scores(
        rng, eff[:, None], codes, n_clusters, n_r, base, task_sd, cluster_sd, noise_sd
    )
    fail = rng.random(size=score.shape) < fail_rate
    s_idx, t_idx, r_idx = np.meshgrid(
        np.arange(n_s), np.arange(n_tasks), np.arange(n_r), indexing="ij"
    )
    width = len(str(n_tasks))
    task_ids = np.array([f"{SYNTHETIC_PREFIX}t{i:0{width}d}" for i in range(n_tasks)])
    cluster_ids = np.array([f"{SYNTHETIC_PREFIX}c{c:02d}" for c in codes])
    frame = pd.DataFrame(
        {
            "task_id": task_ids[t_idx.ravel()],
            "cluster": cluster_ids[t_idx.ravel()],
            "system": np.array(systems)[s_idx.ravel()],
            "readout": np.array(list(readouts))[r_idx.ravel()],
            "score": np.where(fail, np.nan, score).ravel(),
            "failed": fail.ravel(),
            "entry_hash": f"{SYNTHETIC_ENTRY}{label}",
            "backbone": "synthetic-backbone",
            "entry_condition": "fixed_input",
            "length_view": "matched_length",
        }
    )
    return frame.sort_values(["task_id", "system", "readout"], kind="stable").reset_index(drop=True)


SYNTHETIC_ENTRY = "synthetic:"


def synthetic_evidence(frame: pd.DataFrame) -> dict[str, object] | None:
    """How a score table shows it was generated here: its rows whose ``entry_hash`` is
    ``synthetic:<label>`` (every row :func:`simulate_board` writes), or None when none is."""
    if "entry_hash" not in frame.columns or frame.empty:
        return None
    n = int(frame["entry_hash"].astype(str).str.startswith(SYNTHETIC_ENTRY).sum())
    if n == 0:
        return None
    return {
        "synthetic": True,
        "evidence": f"{n} of {len(frame)} rows have entry_hash {SYNTHETIC_ENTRY}* "
        "(kit.certify.simulate.simulate_board)",
    }


def true_differences(effects: Mapping[str, float]) -> pd.DataFrame:
    """The known true gap of every pair (system_a < system_b): effect_a - effect_b."""
    systems = sorted(effects)
    rows = [
        {"system_a": a, "system_b": b, "true_gap": effects[a] - effects[b]}
        for i, a in enumerate(systems)
        for b in systems[i + 1 :]
    ]
    return pd.DataFrame(rows)


def parse_effects(text: str) -> dict[str, float]:
    """``--systems NAME=EFFECT[,NAME=EFFECT...]`` as a mapping (at least two systems)."""
    out: dict[str, float] = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise ConfigError(
                "bad_parameter", f"--systems expects NAME=EFFECT[,NAME=EFFECT...]; got {item!r}"
            ) from None
    if len(out) < 2:
        raise ConfigError("bad_parameter", "--systems needs at least two systems")
    return out


def seeded_board(
    seed: int,
    effects: Mapping[str, float],
    *,
    n_tasks: int,
    n_clusters: int,
    readouts: Sequence[str],
    fail_rate: float,
    cluster_sd: float,
    noise_sd: float,
) -> tuple[pd.DataFrame, dict[str, object]]:
    """`kit simulate board`: the seeded synthetic score table and its ``.synthetic.json``
    record (the generator, every parameter and the true differences)."""
    frame = simulate_board(
        np.random.default_rng(seed),
        effects,
        n_tasks=n_tasks,
        n_clusters=n_clusters,
        readouts=readouts,
        fail_rate=fail_rate,
        cluster_sd=cluster_sd,
        noise_sd=noise_sd,
        label=f"seed{seed}",
    )
    meta = {
        "synthetic": True,
        "generator": "kit.certify.simulate.simulate_board",
        "seed": seed,
        "effects": dict(effects),
        "n_tasks": n_tasks,
        "n_clusters": n_clusters,
        "readouts": list(readouts),
        "fail_rate": fail_rate,
        "cluster_sd": cluster_sd,
        "noise_sd": noise_sd,
        "true_differences": true_differences(effects).to_dict("records"),
    }
    return frame, meta
