"""`kit theory`: the theory toolkit of "What Can a Leaderboard Certify?" (Appendices A.4-A.6, F).

Subcommands: lm (module sensitivity L_M from paired runs), compose (Theorem 2 and its
corollaries from per-stage constants), distance (the controllability distance of Theorem 4 on
logged branch kernels), radius (the contextwise window radius C_M), fgw (fused Gromov-Wasserstein
discrepancy between typed claim graphs, Eq. (20)).
"""

from __future__ import annotations

from pathlib import Path

import click

from kit.commands.options import deprecated_alias, echo_table, table_out_format_option
from kit.commands.sealed import sealed_file
from kit.core.schema import read_table

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
    from kit.certify.theory import lm_table

    frame = read_table(runs, "theory_paired_runs")
    echo_table(lm_table(frame, designs, q, str(runs)), "theory_lm", fmt, out, "module sensitivity")


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
    from kit.certify.theory import check_compose_constants, compose_table

    check_compose_constants(eps0, L_U)
    table, vacuous = compose_table(read_table(stages, "theory_stages"), eps0, L_U, str(stages))
    if vacuous:
        click.echo(
            f"warning: the Theorem 2 bound is inf (vacuous) at stage(s) {', '.join(vacuous)}: an "
            "infinite eps0/L/eps/xi is carried there by a nonzero factor",
            err=True,
        )
    echo_table(table, "theory_compose", fmt, out, "composition bound")


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
    from kit.certify.theory import DistanceInputs, distance_tables

    tr = read_table(transitions, "theory_transitions")
    st = read_table(states, "theory_states")
    inputs = DistanceInputs(
        tr,
        st,
        str(transitions),
        str(states),
        (lambda: read_table(entries, "theory_entries")) if entries is not None else None,
        str(entries),
    )
    result = distance_tables(inputs, system_a, system_b, gamma, beta, tol, seed)
    if pairs_out is not None:
        echo_table(
            result.pairs, "theory_distance_pairs", "csv", pairs_out, "controllability distance"
        )
    echo_table(result.checks, "theory_distance_checks", fmt, out, "Theorem 4 checks")


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
    from kit.certify.theory import radius_table

    frame = read_table(pairs, "theory_window_pairs")
    echo_table(radius_table(frame, lam_in), "theory_window_radius", fmt, out, "window radius")


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
    from kit.certify.theory import claim_graphs, fgw_table, ignored_weight_pairs

    nd = read_table(nodes, "theory_graph_nodes")
    ed = read_table(edges, "theory_graph_edges")
    graphs, has_weight = claim_graphs(nd, ed, str(nodes), str(edges))
    table = fgw_table(graphs, lam, not no_anchors, masses, pair, str(nodes))
    ignored = ignored_weight_pairs(table)
    if has_weight and ignored:
        click.echo(
            f"warning: the 'weight' column of {nodes} is ignored for {len(ignored)} pair(s) "
            f"({', '.join(ignored)}): masses = {masses} (use --masses weights to use it)",
            err=True,
        )
    echo_table(table, "theory_fgw", fmt, out, "graph discrepancy")
