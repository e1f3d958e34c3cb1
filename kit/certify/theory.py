"""The theory toolkit's protocols as library verbs (`kit theory`; Appendices A.4-A.6, F).

Each verb takes the tables `kit theory` read (validated against their schemas) and returns the
table it shows: :func:`lm_table` (module sensitivity L_M), :func:`compose_table` (Theorem 2 and
its corollaries), :func:`distance_tables` (the Theorem 4 protocol on logged branch kernels),
:func:`radius_table` (the contextwise window radius C_M) and :func:`fgw_table` (fused
Gromov-Wasserstein discrepancy between claim graphs). An input error names the file, row and
column that hold the offending value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kit.certify import composition, distance, graph, sensitivity
from kit.certify.distance import BranchKernels, SystemDistance
from kit.core.errors import ConfigError, InputError, Location


def _file_row(bad: pd.DataFrame) -> int:
    """The 1-based file row (header = row 1) of the first offending row of a read table."""
    return int(bad.index[0]) + 2


def lm_table(frame: pd.DataFrame, designs: Sequence[str], q: float, source: str) -> pd.DataFrame:
    """Pooled, per-system and leave-one-system-out fits of L_M from paired runs (system,
    task_id, x, y); ``designs`` empty means every estimator."""
    if frame.empty:
        raise InputError("no_runs", "no paired runs", where=Location(source))
    rows = sensitivity.sensitivity_report(
        frame["system"].tolist(),
        frame["x"].to_numpy(float),
        frame["y"].to_numpy(float),
        designs or sensitivity.DESIGNS,
        q,
    )
    return pd.DataFrame([r.__dict__ for r in rows])


def check_compose_constants(eps0: float, L_U: float) -> None:
    """``--eps0`` and ``--L-U`` are numbers >= 0 or inf."""
    for name, v in (("--eps0", eps0), ("--L-U", L_U)):
        if not v >= 0:
            raise ConfigError("bad_parameter", f"{name} must be a number >= 0 or inf, got {v}")


def compose_table(
    stages: pd.DataFrame, eps0: float, L_U: float, source: str
) -> tuple[pd.DataFrame, list[str]]:
    """Theorem 2's bound per stage (stage, name, ...) and the stages where it is inf."""
    frame = stages.sort_values("stage").reset_index(drop=True)
    if frame.empty or frame["stage"].tolist() != list(range(1, len(frame) + 1)):
        raise InputError(
            "bad_stages", "stages must be numbered 1..K without gaps", where=Location(source)
        )
    names = ["entry"] + (
        frame["name"].fillna("").tolist() if "name" in frame else [""] * len(frame)
    )
    xi = frame["xi"].fillna(0.0).to_numpy(float) if "xi" in frame else None
    rows = composition.stage_bounds(
        eps0, frame["L"].to_numpy(float), frame["eps"].to_numpy(float), xi, L_U
    )
    table = pd.DataFrame([r.__dict__ for r in rows])
    table.insert(1, "name", names)
    vacuous = [str(r.stage) for r in rows if np.isinf(r.bound)]
    return table, vacuous


def _kernels(
    transitions: pd.DataFrame,
    states: pd.DataFrame,
    system: str,
    transitions_file: str,
    states_file: str,
) -> BranchKernels:
    """One system's logged kernels; an error names the file that holds the offending column."""
    st = states[states["system"] == system]
    tr = transitions[transitions["system"] == system]
    if st.empty:
        raise InputError(
            "unknown_system",
            f"no states for system {system!r}",
            where=Location(states_file, column="system"),
        )
    known = set(st["state"])
    for col in ("state", "next_state"):
        bad = tr[~tr[col].isin(known)]
        if not bad.empty:
            raise InputError(
                "unknown_state",
                f"system {system!r}: {col} {bad[col].iloc[0]!r} has no row in the states "
                f"file {states_file}",
                where=Location(transitions_file, row=_file_row(bad), column=col),
            )
    labels = sorted(set(transitions["label"]))
    return distance.empirical_kernels(
        st["state"].tolist(),
        st["z"].to_numpy(float),
        list(tr[["state", "label", "next_state", "count"]].itertuples(index=False, name=None)),
        labels=labels,
    )


def _whole_system(
    entries: pd.DataFrame,
    ka: BranchKernels,
    kb: BranchKernels,
    system_a: str,
    system_b: str,
    d_ab: np.ndarray,
    source: str,
) -> SystemDistance:
    """Definition 10 over the contexts where both systems have an entry law."""
    laws = []
    for system, k in ((system_a, ka), (system_b, kb)):
        sub = entries[entries["system"] == system]
        index = {s: i for i, s in enumerate(k.states)}
        bad = sub[~sub["state"].isin(set(index))]
        if not bad.empty:
            raise InputError(
                "unknown_state",
                f"system {system!r}: entry state {bad['state'].iloc[0]!r} is not a logged state",
                where=Location(source, row=_file_row(bad), column="state"),
            )
        laws.append(
            {
                c: (np.array([index[s] for s in g["state"]]), g["weight"].to_numpy(float))
                for c, g in sub.groupby("context", sort=True)
            }
        )
    common = sorted(set(laws[0]) & set(laws[1]))
    if not common:
        raise InputError(
            "no_common_context", "no context has entries for both systems", where=Location(source)
        )
    return distance.whole_system_distance(
        d_ab, [laws[0][c] for c in common], [laws[1][c] for c in common]
    )


@dataclass(frozen=True)
class DistanceInputs:
    """The logged tables of `kit theory distance` and the files they came from."""

    transitions: pd.DataFrame
    states: pd.DataFrame
    transitions_file: str
    states_file: str
    entries: Callable[[], pd.DataFrame] | None = None  # reads the entry laws (Definition 10),
    # once the fixed point is known (optional)
    entries_file: str = ""


@dataclass(frozen=True)
class DistanceResult:
    """The Theorem 4 checks and the fixed point d_AB, one row per state pair."""

    checks: pd.DataFrame
    pairs: pd.DataFrame


def distance_tables(
    inputs: DistanceInputs,
    system_a: str,
    system_b: str,
    gamma: float,
    beta: float,
    tol: float,
    seed: int,
) -> DistanceResult:
    """The controllability distance (Definitions 8-9) between two systems' logged kernels and
    the checks of Theorem 4 / Proposition 2: contraction modulus, uniqueness from two starts,
    the fixed point on the disjoint union and its pseudometric properties."""
    if system_a == system_b:
        raise ConfigError("bad_parameter", "--system-a and --system-b must differ")
    files = (inputs.transitions_file, inputs.states_file)
    ka = _kernels(inputs.transitions, inputs.states, system_a, *files)
    kb = _kernels(inputs.transitions, inputs.states, system_b, *files)
    rng = np.random.default_rng(seed)
    cc = distance.contraction_check(ka, kb, gamma, beta, rng, tol=tol)
    fp = distance.fixed_point(ka, kb, gamma, beta, tol=tol)
    union = distance.disjoint_union([ka, kb], [system_a, system_b])
    fu = distance.fixed_point(union, union, gamma, beta, tol=tol, symmetric=True)
    pm = distance.pseudometric_check(fu.d, rng)
    restrict = float(np.max(np.abs(fu.d[: ka.n, ka.n :] - fp.d)))
    slack = 10 * tol
    checks = [
        ("modulus_theory", cc.modulus_theory, None),
        ("modulus_observed", cc.modulus_observed, cc.modulus_theory + 1e-9),
        ("modulus_random_pairs", cc.modulus_random, cc.modulus_theory + 1e-9),
        ("uniqueness_gap_two_starts", cc.start_gap, slack),
        ("iterations", float(fp.iterations), None),
        ("fixed_point_error_bound", fp.error_bound, None),
        ("union_restriction_gap", restrict, slack),
        ("max_diagonal", pm.max_diagonal, slack),
        ("max_asymmetry", pm.max_asymmetry, slack),
        ("max_triangle_violation", pm.max_triangle_violation, slack),
        ("triples_checked", float(pm.n_triples), None),
        ("min_distance_ab", float(fp.d.min()), None),
        ("mean_distance_ab", float(fp.d.mean()), None),
        ("max_distance_ab", float(fp.d.max()), None),
    ]
    if inputs.entries is not None:
        laws = inputs.entries()
        sd = _whole_system(laws, ka, kb, system_a, system_b, fp.d, inputs.entries_file)
        checks += [
            ("whole_system_mean", sd.mean, None),
            ("whole_system_sup", sd.sup, None),
            ("whole_system_contexts", float(sd.n_contexts), None),
        ]
    frame = pd.DataFrame(
        [
            {"check": c, "value": v, "limit": np.nan if lim is None else lim,
             "holds": None if lim is None else ("true" if v <= lim else "false")}
            for c, v, lim in checks
        ]
    )  # fmt: skip
    ia, ib = np.meshgrid(np.arange(ka.n), np.arange(kb.n), indexing="ij")
    pairs = pd.DataFrame(
        {
            "system_a": system_a,
            "state_a": [ka.states[i] for i in ia.ravel()],
            "system_b": system_b,
            "state_b": [kb.states[j] for j in ib.ravel()],
            "distance": fp.d.ravel(),
        }
    )
    return DistanceResult(frame, pairs)


def radius_table(frame: pd.DataFrame, lam_in: float) -> pd.DataFrame:
    """The contextwise window radius C_M (Definition 11) with its entry bracket, one row."""
    col = {
        c: frame[c].to_numpy(float) if c in frame else None for c in ("entry_dist", "e_a", "e_b")
    }
    r = distance.contextwise_radius(
        frame["exit_dist"].to_numpy(float), col["entry_dist"], col["e_a"], col["e_b"], lam_in
    )
    return pd.DataFrame([r.__dict__])


def claim_graphs(
    nodes: pd.DataFrame, edges: pd.DataFrame, nodes_file: str, edges_file: str
) -> tuple[dict[str, graph.ClaimGraph], bool]:
    """Every typed claim graph of the nodes / edges tables, and whether the nodes carry any
    importance weight."""
    nd = nodes.copy()
    for c in ("text", "paper_id"):
        nd[c] = nd[c].fillna("").astype(str) if c in nd else ""
    has_weight = "weight" in nd and bool(nd["weight"].notna().any())
    nd["weight"] = nd["weight"].fillna(1.0) if "weight" in nd else 1.0
    graphs = {}
    for g in sorted(set(nd["graph"])):
        sub = nd[nd["graph"] == g]
        es = edges[edges["graph"] == g]
        known = set(sub["node"])
        for col in ("source", "target"):
            bad = es[~es[col].isin(known)]
            if not bad.empty:
                raise InputError(
                    "unknown_node",
                    f"graph {g!r}: edge {col} {bad[col].iloc[0]!r} is not a node of that graph "
                    f"in the nodes file {nodes_file}",
                    where=Location(edges_file, row=_file_row(bad), column=col),
                )
        if float(sub["weight"].sum()) <= 0:
            raise InputError(
                "zero_mass",
                f"graph {g!r}: node weights sum to 0",
                where=Location(nodes_file, column="weight"),
            )
        graphs[g] = graph.ClaimGraph(
            tuple(sub["node"]), tuple(sub["type"]), tuple(sub["text"]), tuple(sub["paper_id"]),
            sub["weight"].to_numpy(float),
            tuple(es[["source", "target", "relation"]].itertuples(index=False, name=None)),
        )  # fmt: skip
    return graphs, has_weight


def fgw_table(
    graphs: dict[str, graph.ClaimGraph],
    lam: float,
    anchors: bool,
    masses: str,
    pair: tuple[str, str] | None,
    nodes_file: str,
) -> pd.DataFrame:
    """Eq. (20) for every pair of ``graphs`` (or only ``pair``), one row per pair."""
    names = sorted(graphs)
    if pair:
        missing = [g for g in pair if g not in graphs]
        if missing:
            raise ConfigError("unknown_graph", f"--pair names unknown graph {missing[0]!r}")
        todo = [tuple(pair)]
    else:
        todo = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    if not todo:
        raise InputError("too_few_graphs", "need at least two graphs", where=Location(nodes_file))
    rows = []
    for a, b in todo:
        r = graph.fgw_distance(graphs[a], graphs[b], lam, anchors=anchors, masses=masses)
        rows.append(
            {"graph_a": a, "graph_b": b, "lam": lam, "masses": r.masses, "value": r.value,
             "feature": r.feature,
             "structure": r.structure, "n_anchors": r.n_anchors,
             "anchor_violation": r.anchor_violation}
        )  # fmt: skip
    return pd.DataFrame(rows)


def ignored_weight_pairs(table: pd.DataFrame) -> list[str]:
    """The pairs of an :func:`fgw_table` whose masses did not use the nodes' weights (A-B)."""
    return [
        f"{a}-{b}"
        for a, b, m in zip(table["graph_a"], table["graph_b"], table["masses"], strict=True)
        if m != "weights"
    ]
