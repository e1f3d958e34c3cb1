"""Plain score tables for `kit certify` (task_id, system, score [+ cluster]) and the design's
`admissibility: assumed` (docs/certify.md "Plain score tables"; issue 16 item 4)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.certify.design import ASSUMED_LABEL, parse_design
from kit.certify.engine import certify_board
from kit.cli import cli
from kit.core.errors import ConfigError, InputError
from kit.core.schema import read_table, validate_json

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "certify"
EFFECTS = {"A": 0.15, "B": 0.0, "C": -0.01}
SOURCES = ("s1", "s2", "s3", "s4", "s5")


def plain_table(
    seed: int = 0, n_tasks: int = 30, fail: tuple[tuple[int, str], ...] = ()
) -> pd.DataFrame:
    """A SYNTHETIC plain table: task_id, system, score, source (5 sources); ``fail`` empties
    the score of (task index, system)."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_tasks):
        base = 0.5 + rng.normal(0, 0.1)
        for s, eff in EFFECTS.items():
            score = float(np.clip(base + eff + rng.normal(0, 0.05), 0, 1))
            rows.append(
                {
                    "task_id": f"t{t:02d}",
                    "system": s,
                    "score": None if (t, s) in fail else f"{score:.4f}",
                    "source": SOURCES[t % len(SOURCES)],
                }
            )
    return pd.DataFrame(rows)


def _run(tmp: Path, table: pd.DataFrame | str, design: str, *extra: str):
    tmp.mkdir(parents=True, exist_ok=True)
    scores = tmp / "scores.csv"
    if isinstance(table, str):
        scores.write_text(table)
    else:
        table.to_csv(scores, index=False)
    d = tmp / "design.yaml"
    d.write_text(design)
    out = tmp / "out"
    args = ["certify", str(scores), "--design", str(d), "--out", str(out), "--no-figure", *extra]
    return CliRunner().invoke(cli, args), scores, out


def test_three_column_table_with_assumed_certifies(tmp_path: Path) -> None:
    table = plain_table()[["task_id", "system", "score"]]
    res, _, out = _run(tmp_path, table, "admissibility: assumed\n")
    assert res.exit_code == 0, res.output
    pairs = read_table(out / "pairs.csv", "certify_pairs")
    assert set(pairs["readout"]) == {"score", "composite"}
    assert (pairs["admissibility"] == ASSUMED_LABEL).all()
    assert (pairs["reason"] == "admissibility_assumed").all()
    assert (pairs["eps_outside"] == 0.0).all()
    ab = pairs.query("readout == 'score' and system_a == 'A' and system_b == 'B'").iloc[0]
    assert ab["verdict"] == "certified" and ab["winner"] == "A"
    assert ab["n_clusters"] == 30  # no cluster column: each task its own cluster
    assert "Admissibility assumed by the user" in res.output
    assert "each task is its own cluster (K = 30 tasks" in res.output
    page = CliRunner().invoke(cli, ["report", "board", str(out)])
    assert page.exit_code == 0, page.output
    html = (out / "board.html").read_text()
    assert html.count("admissibility assumed by the user") == len(pairs)  # one per verdict
    assert "Admissibility assumed by the user</b>" in html


def test_without_assumed_exits_2_and_says_why(tmp_path: Path) -> None:
    table = plain_table()[["task_id", "system", "score"]]
    res, scores, out = _run(tmp_path, table, "alpha: 0.05\n")
    assert res.exit_code == 2, res.output
    assert "admissibility_untestable" in res.output
    assert str(scores) in res.output and "cannot be tested" in res.output
    assert "entry_hash, backbone, entry_condition, length_view" in res.output
    assert "admissibility: assumed" in res.output
    assert not out.exists()  # nothing half-written
    with pytest.raises(InputError) as exc:
        certify_board(table.assign(cluster="x"), parse_design({}), source="s.csv")
    assert exc.value.reason == "admissibility_untestable"


def test_cluster_column_option_equals_a_cluster_column(tmp_path: Path) -> None:
    table = plain_table(seed=1)
    res, _, out = _run(tmp_path, table, "admissibility: assumed\n", "--cluster-column", "source")
    assert res.exit_code == 0, res.output
    via_option = read_table(out / "pairs.csv", "certify_pairs")
    assert set(via_option["n_clusters"]) == {len(SOURCES)}
    assert "each task is its own cluster" not in res.output
    named = table.rename(columns={"source": "cluster"})
    res2, _, out2 = _run(tmp_path / "b", named, "admissibility: assumed\n")
    assert res2.exit_code == 0, res2.output
    pd.testing.assert_frame_equal(via_option, read_table(out2 / "pairs.csv", "certify_pairs"))
    # the cluster matters: 5 clusters give other radii than 30 singleton clusters
    singles_table = table.drop(columns="source")
    res3, _, out3 = _run(tmp_path / "c", singles_table, "admissibility: assumed\n")
    assert res3.exit_code == 0, res3.output
    singles = read_table(out3 / "pairs.csv", "certify_pairs")
    assert not np.allclose(singles["q"], via_option["q"])


def test_cluster_column_problems_exit_2(tmp_path: Path) -> None:
    table = plain_table()
    res, scores, _ = _run(tmp_path, table, "admissibility: assumed\n", "--cluster-column", "nope")
    assert res.exit_code == 2 and f"{scores}, column 'nope'" in res.output
    res, _, _ = _run(tmp_path, table, "admissibility: assumed\nclusters: [s1, s2]\n")
    assert res.exit_code == 2  # 'source' is not a plain column: strict schema names it
    assert "column 'source': not in schema 'scores_plain'" in res.output
    no_cluster = table.drop(columns="source")
    res, _, _ = _run(tmp_path, no_cluster, "admissibility: assumed\nclusters: [s1, s2]\n")
    assert res.exit_code == 2 and "no_cluster_column" in res.output


def test_missing_score_is_a_counted_failed_run_like_the_full_format() -> None:
    from kit.certify.plain import plain_to_long
    from kit.core.schema import validate_frame

    fail = ((3, "A"), (7, "A"), (7, "B"), (12, "C"))
    table = plain_table(seed=2, fail=fail).rename(columns={"source": "cluster"})
    plain = plain_to_long(validate_frame(table, "scores_plain", "p.csv"), "p.csv")
    assert int(plain.frame["failed"].sum()) == len(fail)
    assert "4 empty score(s) read as failed runs" in plain.notes
    res = certify_board(plain.frame, parse_design({"admissibility": "assumed"}), source="p.csv")
    assert res.n_failed_runs == len(fail)
    ab = res.pairs.query("readout == 'score' and system_a == 'A' and system_b == 'B'").iloc[0]
    assert (ab["n_failed_a"], ab["n_failed_b"], ab["n_common"]) == (2, 1, 30 - 2)
    # the same board in the full format, every pair exactly matched: the same numbers
    full = plain.frame.assign(
        entry_hash="h", backbone="b", entry_condition="fixed_input", length_view="full_length"
    )
    tested = certify_board(full, parse_design({}), source="f.csv")
    cols = ["n_common", "n_failed_a", "n_failed_b", "n_clusters", "gap", "q", "verdict"]
    pd.testing.assert_frame_equal(res.pairs[cols], tested.pairs[cols])
    assert set(tested.pairs["reason"]) == {"exact"} and "admissibility" not in tested.pairs


@pytest.mark.parametrize(
    ("edit", "row", "column", "says"),
    [
        (lambda t: pd.concat([t, t.iloc[[4]]], ignore_index=True), 92, "system", "second row"),
        (lambda t: t.assign(score=t["score"].where(t.index != 5, "abc")), 7, "score", "number"),
        (lambda t: t.assign(score=t["score"].where(t.index != 8, "1.5")), 10, "score", "in_range"),
        (lambda t: t.assign(score=t["score"].where(t.index != 9, "-0.1")), 11, "score", "in_range"),
    ],
)
def test_bad_plain_tables_name_file_row_column(tmp_path: Path, edit, row, column, says) -> None:
    table = edit(plain_table()[["task_id", "system", "score"]])
    res, scores, out = _run(tmp_path, table, "admissibility: assumed\n")
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert re.search(rf"{re.escape(str(scores))}, row {row}, column '{column}'", res.output)
    assert says in res.output
    assert not out.exists()


def test_duplicate_names_the_first_row_too(tmp_path: Path) -> None:
    text = "task_id,system,score\nt1,A,0.5\nt1,B,0.4\nt1,A,0.6\n"
    res, scores, _ = _run(tmp_path, text, "admissibility: assumed\n")
    assert res.exit_code == 2
    assert f"{scores}, row 4, column 'system'" in res.output and "the first is row 2" in res.output


def test_assumed_on_a_full_table_is_refused() -> None:
    table = plain_table().rename(columns={"source": "cluster"})
    full = table.assign(
        readout="r",
        score=table["score"].astype(float),
        failed=False,
        entry_hash="h",
        backbone="b",
        entry_condition="fixed_input",
        length_view="full_length",
    )
    with pytest.raises(ConfigError) as exc:
        certify_board(full, parse_design({"admissibility": "assumed"}, "d.yaml"), source="f.csv")
    assert exc.value.reason == "admissibility_assumed_with_metadata"
    assert "d.yaml" in exc.value.message and "entry_hash" in exc.value.message


def test_design_schema_and_parser_know_admissibility() -> None:
    validate_json({"admissibility": "assumed"}, "design")
    with pytest.raises(InputError):
        validate_json({"admissibility": "maybe"}, "design")
    with pytest.raises(ConfigError):
        parse_design({"admissibility": "maybe"})
    assert parse_design({}).admissibility == "tested"


def test_examples_run_as_the_readme_shows(tmp_path: Path) -> None:
    readme = (EXAMPLES / "README.md").read_text()
    commands = [ln.strip() for ln in readme.splitlines() if ln.strip().startswith("kit certify")]
    plain = [c for c in commands if "plain_scores" in c]
    assert len(plain) >= 2 and "SYNTHETIC" in readme
    for i, command in enumerate(plain):
        args = command.split("#")[0].split()[1:]
        out = args.index("--out")
        args[out + 1] = str(tmp_path / f"cert{i}")
        args = [str(REPO / a) if a.startswith("examples/") else a for a in args]
        res = CliRunner().invoke(cli, [*args, "--no-figure"])
        assert res.exit_code == 0, (command, res.output)
        pairs = read_table(tmp_path / f"cert{i}" / "pairs.csv", "certify_pairs")
        assert (pairs["admissibility"] == ASSUMED_LABEL).all()


def test_help_describes_scores_and_design_with_examples() -> None:
    text = CliRunner().invoke(cli, ["certify", "--help"]).output
    for needle in (
        "SCORES",
        "DESIGN",
        "task_id,system,score,cluster",
        "entry_hash, backbone, entry_condition, length_view",
        "admissibility: assumed",
        "examples/certify/plain_scores.csv",
        "examples/certify/design.yaml",
        "--cluster-column",
    ):
        assert needle in text, needle
    for ref in re.findall(r"(?:examples|schemas|docs)/[\w/.-]+\.(?:csv|yaml|json|md)", text):
        assert (REPO / ref).is_file(), ref


def test_schema_docs_point_to_files_that_exist() -> None:
    pattern = re.compile(r"\b(?:docs|examples|schemas|kit)/[\w/-]+\.(?:md|csv|yaml|json|py)\b")
    files = [*(REPO / "schemas").glob("*.yaml"), *(REPO / "schemas" / "json").glob("*.json")]
    for path in files:
        text = path.read_text()
        assert "DESIGN.md" not in text, path.name  # not in the project (../shared)
        for ref in pattern.findall(text):
            assert (REPO / ref).exists(), (path.name, ref)
    scores = (REPO / "schemas" / "scores.yaml").read_text()
    assert "docs/certify.md" in scores and "schemas/scores_plain.yaml" in scores


def test_rank_table_follows_format(tmp_path: Path) -> None:
    """`--format` is the one output-format option: the printed rank table follows it."""
    table = plain_table()[["task_id", "system", "score"]]
    res, _, out = _run(tmp_path, table, "admissibility: assumed\n", "--format", "csv")
    assert res.exit_code == 0, res.output
    ranks = pd.read_csv(out / "ranks.csv")
    header = ",".join(ranks.columns)
    assert header in res.output.splitlines()
    res, _, _ = _run(tmp_path / "md", table, "admissibility: assumed\n", "--format", "markdown")
    assert "| " + " | ".join(ranks.columns) + " |" in res.output
