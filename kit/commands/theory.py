"""`kit theory`: the theory toolkit of "What Can a Leaderboard Certify?" (Appendices A.4-A.6, F).

Subcommands: lm (module sensitivity L_M from paired runs), compose (Theorem 2 and its
corollaries from per-stage constants), distance (the controllability distance of Theorem 4 on
logged branch kernels), radius (the contextwise window radius C_M), fgw (fused Gromov-Wasserstein
discrepancy between typed claim graphs, Eq. (20)).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
import numpy as np
import pandas as pd

from kit import atomic
from kit.commands.options import deprecated_alias, format_for, table_out_format_option
from kit.commands.sealed import sealed_file
from kit.errors import ConfigError, InputError, Location
from kit.report.tables import render
from kit.schema import read_table, validate_frame

if TYPE_CHECKING:
    from kit.certify.distance import BranchKernels, SystemDistance


def _emit(frame: pd.DataFrame, schema: str, out: Path | None, fmt: str | None, title: str) -> None:
    """Validate ``frame`` against its schema, then write it atomically (or print it)."""
    frame = validate_frame(frame, schema, str(out) if out else "<output>")
    text = render(frame, format_for(fmt, out), title=title)
    if out is None:
        click.echo(text, nl=False)
    else:
        atomic.write_text(out, text)
        click.echo(f"{title}: {len(frame)} rows -> {out}")


_out_option = click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Output file (default: print to stdout).",
)
_format_option = table_out_format_option


@click.group()
def theory() -> None:
    """Theory toolkit: L_M, composition bounds, controllability distance, graph discrepancy.

    Every example runs from the project root on the small synthetic files of examples/theory/
    (ids start with syn-; see its README.md).

    \b
    Examples:
      kit theory lm examples/theory/runs.csv
      kit theory compose examples/theory/stages.csv --eps0 0.05 --L-U 1 --format markdown
      kit theory distance examples/theory/transitions.csv examples/theory/states.csv --system-a syn-A --system-b syn-B
      kit theory radius examples/theory/pairs.csv --lam-in 0.5
      kit theory fgw examples/theory/nodes.csv examples/theory/edges.csv --lam 0.5
    """


@theory.command("lm")
@click.argument("runs", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--estimator",
    "designs",
    multiple=True,
    type=click.Choice(["ratio_q95", "ratio_sup", "affine"]),
    help="Estimator(s) of L_M, repeatable [all three].",
)
@deprecated_alias("--design", "--estimator", "designs", multiple=True)
@click.option("--q", type=float, default=0.95, show_default=True, help="Quantile level.")
@_out_option
@_format_option
@sealed_file("out", kind="theory-lm")
def lm_cmd(
    runs: Path, designs: tuple[str, ...], q: float, out: Path | None, fmt: str | None
) -> None:
    """Module sensitivity L_M from paired runs (Appendix F.1, Tables 11-12).

    RUNS is a CSV with columns system, task_id, x (entry mismatch), y (exit distance). Writes
    pooled, per-system and leave-one-system-out fits of each design with coverage and the
    count of expanding runs (y > x).

    \b
    Examples:
      kit theory lm examples/theory/runs.csv --estimator ratio_q95 --estimator affine
    """
    from kit.certify import sensitivity

    frame = read_table(runs, "theory_paired_runs")
    if frame.empty:
        raise InputError("no_runs", "no paired runs", where=Location(str(runs)))
    rows = sensitivity.sensitivity_report(
        frame["system"].tolist(),
        frame["x"].to_numpy(float),
        frame["y"].to_numpy(float),
        designs or sensitivity.DESIGNS,
        q,
    )
    _emit(pd.DataFrame([r.__dict__ for r in rows]), "theory_lm", out, fmt, "module sensitivity")


@theory.command("compose")
@click.argument("stages", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--eps0",
    type=float,
    required=True,
    help="Bound on the entry discrepancy W_0 (>= 0; inf = unbounded, which makes every bound "
    "that carries it inf, i.e. vacuous, unless a stage with L = 0 forgets its input).",
)
@click.option(
    "--L-U", "L_U", type=float, default=1.0, show_default=True, help="Utility constant (>= 0)."
)
@_out_option
@_format_option
@sealed_file("out", kind="theory-compose")
def compose_cmd(stages: Path, eps0: float, L_U: float, out: Path | None, fmt: str | None) -> None:
    """Theorem 2 (recursion and product form), Corollary 2 and Theorem 3 from stage constants.

    STAGES is a CSV with columns stage (1..K), L, eps and optional xi and name; a constant may
    be inf (no finite constant known). Products follow the paper's rule 0 * inf = 0 (a zero
    distance or a zero constant contributes nothing); an inf bound is printed as inf and
    reported on stderr as vacuous.

    \b
    Examples:
      kit theory compose examples/theory/stages.csv --eps0 0.05 --L-U 1 --format markdown
      kit theory compose examples/theory/stages_zero_inf.csv --eps0 0.05
      kit theory compose examples/theory/stages.csv --eps0 inf
    """
    from kit.certify import composition

    for name, v in (("--eps0", eps0), ("--L-U", L_U)):
        if not v >= 0:
            raise ConfigError("bad_parameter", f"{name} must be a number >= 0 or inf, got {v}")
    frame = read_table(stages, "theory_stages").sort_values("stage").reset_index(drop=True)
    if frame.empty or frame["stage"].tolist() != list(range(1, len(frame) + 1)):
        raise InputError(
            "bad_stages", "stages must be numbered 1..K without gaps", where=Location(str(stages))
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
    if vacuous:
        click.echo(
            f"warning: the Theorem 2 bound is inf (vacuous) at stage(s) {', '.join(vacuous)}: an "
            "infinite eps0/L/eps/xi is carried there by a nonzero factor",
            err=True,
        )
    _emit(table, "theory_compose", out, fmt, "composition bound")


def _kernels(
    transitions: pd.DataFrame,
    states: pd.DataFrame,
    system: str,
    transitions_file: str,
    states_file: str,
) -> BranchKernels:
    """One system's logged kernels; an error names the file that holds the offending column."""
    from kit.certify import distance

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


def _file_row(bad: pd.DataFrame) -> int:
    """The 1-based file row (header = row 1) of the first offending row of a read table."""
    return int(bad.index[0]) + 2


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
    from kit.certify import distance

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


@theory.command("distance")
@click.argument("transitions", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("states", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--system-a", required=True, help="First system (a value of the system column).")
@click.option("--system-b", required=True, help="Second system (a value of the system column).")
@click.option("--gamma", type=float, default=0.9, show_default=True, help="Continuation weight.")
@click.option("--beta", type=float, default=0.5, show_default=True, help="Label weight.")
@click.option(
    "--tolerance",
    "tol",
    type=float,
    default=1e-10,
    show_default=True,
    help="Stop iterating once the sup-norm update is <= this (fixed point of Eq. 17).",
)
@deprecated_alias("--tol", "--tolerance", "tol")
@click.option(
    "--seed", type=int, default=0, show_default=True, help="For random contraction pairs."
)
@click.option(
    "--entries",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Entry laws (system, context, state, weight): adds Definition 10's whole-system "
    "distance, mean and sup over the contexts both systems have.",
)
@click.option(
    "--pairs-out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the fixed point d_AB (one row per state pair) as CSV.",
)
@_out_option
@_format_option
@sealed_file("out", kind="theory-distance")
def distance_cmd(
    transitions: Path,
    states: Path,
    system_a: str,
    system_b: str,
    gamma: float,
    beta: float,
    tol: float,
    seed: int,
    entries: Path | None,
    pairs_out: Path | None,
    out: Path | None,
    fmt: str | None,
) -> None:
    """Controllability distance (Definitions 8-9, Theorem 4, Proposition 2) on logged kernels.

    TRANSITIONS: system, state, label, next_state, count. STATES: system, state, z in [0, 1].
    Iterates the operator with exact OT to its fixed point from two starts, and checks the
    contraction modulus gamma (1 - beta), uniqueness and the pseudometric properties of the
    fixed point on the disjoint union of the two systems.

    \b
    Examples:
      kit theory distance examples/theory/transitions.csv examples/theory/states.csv --system-a syn-A --system-b syn-B
      kit theory distance examples/theory/transitions.csv examples/theory/states.csv --system-a syn-A --system-b syn-B --entries examples/theory/entries.csv --format markdown
    """
    from kit.certify import distance

    tr = read_table(transitions, "theory_transitions")
    st = read_table(states, "theory_states")
    if system_a == system_b:
        raise ConfigError("bad_parameter", "--system-a and --system-b must differ")
    ka = _kernels(tr, st, system_a, str(transitions), str(states))
    kb = _kernels(tr, st, system_b, str(transitions), str(states))
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
    if entries is not None:
        sd = _whole_system(
            read_table(entries, "theory_entries"), ka, kb, system_a, system_b, fp.d, str(entries)
        )
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
    if pairs_out is not None:
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
        _emit(pairs, "theory_distance_pairs", pairs_out, "csv", "controllability distance")
    _emit(frame, "theory_distance_checks", out, fmt, "Theorem 4 checks")


@theory.command("radius")
@click.argument("pairs", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--lam-in", type=float, default=0.5, show_default=True, help="Entry weight.")
@_out_option
@_format_option
@sealed_file("out", kind="theory-radius")
def radius_cmd(pairs: Path, lam_in: float, out: Path | None, fmt: str | None) -> None:
    """Contextwise window radius C_M (Definition 11, Appendix F.6) with its entry bracket.

    PAIRS: task_id, exit_dist, and entry_dist or (e_a, e_b) -- each entry's distance to the
    reference, which brackets the entry term by |e_a - e_b| .. e_a + e_b.

    \b
    Examples:
      kit theory radius examples/theory/pairs.csv --lam-in 0.5 --format markdown
    """
    from kit.certify import distance

    frame = read_table(pairs, "theory_window_pairs")
    col = {
        c: frame[c].to_numpy(float) if c in frame else None for c in ("entry_dist", "e_a", "e_b")
    }
    r = distance.contextwise_radius(
        frame["exit_dist"].to_numpy(float), col["entry_dist"], col["e_a"], col["e_b"], lam_in
    )
    _emit(pd.DataFrame([r.__dict__]), "theory_window_radius", out, fmt, "window radius")


@theory.command("fgw")
@click.argument("nodes", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("edges", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--lam", type=float, default=0.5, show_default=True, help="Structure weight.")
@click.option("--no-anchors", is_flag=True, help="Do not anchor shared paper ids.")
@click.option(
    "--masses",
    type=click.Choice(["anchored", "weights", "uniform"]),
    default="anchored",
    show_default=True,
    help="Node masses of Eq. (20). anchored: every paper id shared by the two graphs gets the "
    "same mass in both and the other nodes share the rest evenly, so the `weight` column is "
    "IGNORED for that pair (used only when the pair shares no paper id); weights: the "
    "normalised `weight` column; uniform: 1/|V|. The output's `masses` column says which rule "
    "each pair used.",
)
@click.option("--pair", nargs=2, default=None, help="Compare only these two graphs.")
@_out_option
@_format_option
@sealed_file("out", kind="theory-fgw")
def fgw_cmd(
    nodes: Path,
    edges: Path,
    lam: float,
    no_anchors: bool,
    masses: str,
    pair: tuple[str, str] | None,
    out: Path | None,
    fmt: str | None,
) -> None:
    """Fused Gromov-Wasserstein discrepancy (Definition 13, Eq. (20)) between claim graphs.

    NODES: graph, node, type, text, paper_id, weight. EDGES: graph, source, target, relation.
    Compares every pair of graphs (or --pair A B); shared paper ids are hard anchors. The node
    importance weights count only under --masses weights, or under the default anchored masses
    for a pair that shares no paper id; a warning on stderr names every pair whose weights were
    ignored.

    \b
    Examples:
      kit theory fgw examples/theory/nodes.csv examples/theory/edges.csv --lam 0.5
      kit theory fgw examples/theory/nodes.csv examples/theory/edges.csv --masses weights --pair syn-review syn-generated
    """
    from kit.certify import graph

    nd = read_table(nodes, "theory_graph_nodes")
    ed = read_table(edges, "theory_graph_edges")
    for c in ("text", "paper_id"):
        nd[c] = nd[c].fillna("").astype(str) if c in nd else ""
    has_weight = "weight" in nd and bool(nd["weight"].notna().any())
    nd["weight"] = nd["weight"].fillna(1.0) if "weight" in nd else 1.0
    names = sorted(set(nd["graph"]))
    graphs = {}
    for g in names:
        sub = nd[nd["graph"] == g]
        es = ed[ed["graph"] == g]
        known = set(sub["node"])
        for col in ("source", "target"):
            bad = es[~es[col].isin(known)]
            if not bad.empty:
                raise InputError(
                    "unknown_node",
                    f"graph {g!r}: edge {col} {bad[col].iloc[0]!r} is not a node of that graph "
                    f"in the nodes file {nodes}",
                    where=Location(str(edges), row=_file_row(bad), column=col),
                )
        if float(sub["weight"].sum()) <= 0:
            raise InputError(
                "zero_mass",
                f"graph {g!r}: node weights sum to 0",
                where=Location(str(nodes), column="weight"),
            )
        graphs[g] = graph.ClaimGraph(
            tuple(sub["node"]), tuple(sub["type"]), tuple(sub["text"]), tuple(sub["paper_id"]),
            sub["weight"].to_numpy(float),
            tuple(es[["source", "target", "relation"]].itertuples(index=False, name=None)),
        )  # fmt: skip
    if pair:
        missing = [g for g in pair if g not in graphs]
        if missing:
            raise ConfigError("unknown_graph", f"--pair names unknown graph {missing[0]!r}")
        todo = [tuple(pair)]
    else:
        todo = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    if not todo:
        raise InputError("too_few_graphs", "need at least two graphs", where=Location(str(nodes)))
    rows = []
    for a, b in todo:
        r = graph.fgw_distance(graphs[a], graphs[b], lam, anchors=not no_anchors, masses=masses)
        rows.append(
            {"graph_a": a, "graph_b": b, "lam": lam, "masses": r.masses, "value": r.value,
             "feature": r.feature,
             "structure": r.structure, "n_anchors": r.n_anchors,
             "anchor_violation": r.anchor_violation}
        )  # fmt: skip
    ignored = [f"{r['graph_a']}-{r['graph_b']}" for r in rows if r["masses"] != "weights"]
    if has_weight and ignored:
        click.echo(
            f"warning: the 'weight' column of {nodes} is ignored for {len(ignored)} pair(s) "
            f"({', '.join(ignored)}): masses = {masses} (use --masses weights to use it)",
            err=True,
        )
    _emit(pd.DataFrame(rows), "theory_fgw", out, fmt, "graph discrepancy")
