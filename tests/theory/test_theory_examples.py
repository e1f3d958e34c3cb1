"""Every `kit theory` --help example runs as written from the project root on examples/theory/;
FGW says which masses it used; errors name the file that holds the offending column."""

from __future__ import annotations

import shlex
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from kit.cli import cli

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "examples" / "theory"
SUBCOMMANDS = ("lm", "compose", "distance", "radius", "fgw")


def help_examples(args: list[str]) -> list[str]:
    res = CliRunner().invoke(cli, [*args, "--help"])
    assert res.exit_code == 0
    return [ln.strip() for ln in res.output.splitlines() if ln.strip().startswith("kit theory ")]


def all_examples() -> list[str]:
    out = help_examples(["theory"])
    for sub in SUBCOMMANDS:
        out += help_examples(["theory", sub])
    return sorted(set(out))


def test_every_subcommand_has_an_example_on_shipped_files() -> None:
    for sub in SUBCOMMANDS:
        ex = help_examples(["theory", sub])
        assert ex and all(e.startswith(f"kit theory {sub} ") for e in ex), sub
    used = " ".join(all_examples())
    shipped = sorted(p.name for p in EXAMPLES.glob("*.csv"))
    assert shipped and all(f"examples/theory/{name}" in used for name in shipped)


@pytest.mark.parametrize("line", all_examples())
def test_help_example_runs_as_written(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO_ROOT)
    args = shlex.split(line)[1:]  # drop the program name `kit`
    for a in args:
        if a.startswith("examples/"):
            assert (REPO_ROOT / a).is_file(), a
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert len(res.stdout.strip().splitlines()) >= 2  # a header and at least one row


def test_example_ids_are_labelled_synthetic() -> None:
    """Every id an output can show (system, graph, task, context) starts with syn-."""
    for path in EXAMPLES.glob("*.csv"):
        frame = pd.read_csv(path)
        for col in ("system", "graph", "task_id", "context"):
            if col in frame:
                assert frame[col].astype(str).str.startswith("syn-").all(), (path.name, col)


def fgw(nodes: Path, *extra: str) -> tuple[pd.DataFrame, str]:
    res = CliRunner().invoke(
        cli, ["theory", "fgw", str(nodes), str(EXAMPLES / "edges.csv"), "--format", "csv", *extra]
    )
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    frame = pd.DataFrame([ln.split(",") for ln in lines[1:]], columns=lines[0].split(","))
    return frame, res.stderr


def test_fgw_weight_counts_under_weights_and_is_reported_ignored_under_anchored(
    tmp_path: Path,
) -> None:
    nodes = pd.read_csv(EXAMPLES / "nodes.csv")
    heavy = nodes.copy()
    heavy.loc[heavy["node"] == "C1", "weight"] = 50.0  # was 2
    heavy_path = tmp_path / "nodes_heavy.csv"
    heavy.to_csv(heavy_path, index=False)
    base_w, err_w = fgw(EXAMPLES / "nodes.csv", "--masses", "weights")
    heavy_w, _ = fgw(heavy_path, "--masses", "weights")
    assert (base_w["masses"] == "weights").all() and "ignored" not in err_w
    assert float(base_w["value"][0]) != pytest.approx(float(heavy_w["value"][0]), abs=1e-6)
    base_a, err_a = fgw(EXAMPLES / "nodes.csv")
    heavy_a, err_h = fgw(heavy_path)
    assert (base_a["masses"] == "anchored").all()
    assert float(base_a["value"][0]) == pytest.approx(float(heavy_a["value"][0]), abs=1e-12)
    for err, path in ((err_a, EXAMPLES / "nodes.csv"), (err_h, heavy_path)):
        assert "warning" in err and "'weight' column" in err and str(path) in err
    # no shared paper id: anchored falls back to the weights, which then count (no warning)
    apart = nodes.copy()
    apart.loc[apart["graph"] == "syn-generated", "paper_id"] = "PMID-SYN-9"
    apart_path = tmp_path / "nodes_apart.csv"
    apart.to_csv(apart_path, index=False)
    frame, err = fgw(apart_path)
    assert (frame["masses"] == "weights").all() and "ignored" not in err
    help_text = CliRunner().invoke(cli, ["theory", "fgw", "--help"]).output
    assert "IGNORED" in help_text and "weight" in help_text


def test_errors_name_the_file_that_holds_the_column(tmp_path: Path) -> None:
    tr = tmp_path / "transitions.csv"
    tr.write_text((EXAMPLES / "transitions.csv").read_text() + "syn-B,b1,write,b9,1\n")
    st = EXAMPLES / "states.csv"
    res = CliRunner().invoke(
        cli, ["theory", "distance", str(tr), str(st), "--system-a", "syn-A", "--system-b", "syn-B"]
    )
    assert res.exit_code == 2
    assert f"{tr}, row 8, column 'next_state'" in res.output and "b9" in res.output
    res = CliRunner().invoke(
        cli, ["theory", "distance", str(tr), str(st), "--system-a", "syn-A", "--system-b", "syn-Z"]
    )
    assert res.exit_code == 2 and f"{st}, column 'system'" in res.output
    ent = tmp_path / "entries.csv"
    ent.write_text("system,context,state,weight\nsyn-A,t1,a0,1\nsyn-B,t1,zz,1\n")
    res = CliRunner().invoke(
        cli,
        ["theory", "distance", str(EXAMPLES / "transitions.csv"), str(st), "--system-a", "syn-A",
         "--system-b", "syn-B", "--entries", str(ent)],
    )  # fmt: skip
    assert res.exit_code == 2 and f"{ent}, row 3, column 'state'" in res.output
    edges = tmp_path / "edges.csv"
    edges.write_text(
        "graph,source,target,relation\nsyn-review,c1,t,supports\nsyn-review,c1,x,supports\n"
    )
    res = CliRunner().invoke(cli, ["theory", "fgw", str(EXAMPLES / "nodes.csv"), str(edges)])
    assert res.exit_code == 2 and f"{edges}, row 3, column 'target'" in res.output
