"""inspect_ai finds the kit's scorer through the entry point pyproject.toml declares, and its
own command line, ``inspect score LOG --scorer kit/citation_support``, gives `kit audit`'s
values per sample.

The kit is not pip-installed by the tests (a reinstall would repoint the shared environment), so
the test writes the distribution metadata an install would: a temporary ``*.dist-info`` holding
``entry_points.txt`` rendered from pyproject.toml's ``[project.entry-points.inspect_ai]`` table,
put on the subprocess's ``PYTHONPATH``; inspect_ai's loader (``importlib.metadata``) reads it
there as from any installed package. A wrong group, name or module in pyproject.toml fails it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

inspect_ai = pytest.importorskip("inspect_ai")

from scenario import FINISHED, SCORER, Setup, audit_values, same_value  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]


def _entry_points() -> dict[str, str]:
    with (REPO_ROOT / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    return dict(project.get("entry-points", {}).get("inspect_ai", {}))


def _dist_info(site: Path) -> Path:
    """A dist-info whose entry_points.txt is pyproject's inspect_ai group."""
    dist = site / "litaudit_kit_entry_point_test-0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: litaudit-kit-entry-point-test\nVersion: 0.0\n"
    )
    lines = [f"{name} = {value}" for name, value in _entry_points().items()]
    (dist / "entry_points.txt").write_text("[inspect_ai]\n" + "\n".join(lines) + "\n")
    return dist


def test_pyproject_declares_the_extension_under_the_import_name() -> None:
    """inspect_ai loads the entry point whose name is a component's namespace (``kit`` of
    ``kit/citation_support``); its value is the module that registers the components."""
    assert _entry_points() == {"kit": "kit.inspect_ext._registry"}
    with (REPO_ROOT / "pyproject.toml").open("rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    assert any(d.startswith("inspect-ai") for d in extras["import"])


def test_the_inspect_score_command_finds_the_scorer_and_gives_kit_audits_values(
    scenario: Setup, tmp_path: Path
) -> None:
    from inspect_ai.log import read_eval_log

    site = tmp_path / "site"
    _dist_info(site)
    out = tmp_path / "scored.eval"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(site)])}
    args = [sys.executable, "-m", "inspect_ai", "score", str(scenario.log)]
    args += ["--scorer", "kit/citation_support", "--action", "append"]
    args += ["--output-file", str(out), "--display", "none"]
    for k, v in scenario.args().items():
        args += ["-S", f"{k}={v}"]
    res = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    log = read_eval_log(str(out))
    expected = audit_values(scenario)
    got = {s.id: s.scores[SCORER] for s in log.samples}
    for sid in FINISHED:
        assert same_value(got[sid].value, expected[sid]), (sid, got[sid].value, expected[sid])
    assert got["s_loop"].reason == "sample_limit" and got["s_outage"].reason == "sample_error"


def test_without_the_entry_point_inspect_score_does_not_find_it(
    scenario: Setup, tmp_path: Path
) -> None:
    """The control: the same command with no dist-info on the path fails (so the test above
    passes because of the entry point, not because something else registered the scorer).
    Skipped where the environment's installed kit (``make setup``) declares the entry point
    itself: there the scorer is found without the test's dist-info."""
    from importlib.metadata import entry_points

    if any(e.name == "kit" for e in entry_points(group="inspect_ai")):
        pytest.skip("the environment's installed kit declares the entry point itself")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    args = [sys.executable, "-m", "inspect_ai", "score", str(scenario.log), "--display", "none"]
    args += ["--scorer", "kit/citation_support", "--action", "append"]
    args += ["--output-file", str(tmp_path / "x.eval")]
    res = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert "couldn't be loaded" in res.stdout + res.stderr
