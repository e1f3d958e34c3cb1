"""Issue 13 in `kit audit`: --calibration ARTIFACT, the guarantee with its condition on the page."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from audit_helpers import audit_args, invoke
from click.testing import CliRunner

from kit.cli import cli
from kit.core.schema import validate_json

IDS = ("guarantee-statement", "guarantee-condition", "calibration-source", "false-flag-rate",
       "review-budget", "shift-check")  # fmt: skip


def _labelled(path: Path) -> Path:
    """30 labelled pairs: 12 supported (the passage restates the claim), 18 unsupported in two
    types (contradicted: negated; NEI: unrelated words)."""
    rng = np.random.default_rng(1)
    words = "insulin glucose mice trial dose risk cancer therapy virus brain cell gene".split()
    rows = []
    for i in range(30):
        claim = " ".join(rng.choice(words, 6))
        if i < 12:
            rows.append((claim, f"Our data show that {claim}.", "SUPPORT"))
        elif i < 21:
            rows.append((claim, f"We found no evidence that {claim}.", "CONTRADICT"))
        else:
            rows.append((claim, " ".join(rng.choice(words, 15)), "NEI"))
    pd.DataFrame(rows, columns=["claim", "passage", "label"]).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory, audit_verifier: Path) -> Path:
    d = tmp_path_factory.mktemp("audit_cal")
    out = d / "cal.json"
    r = invoke("guard", "calibrate", str(_labelled(d / "lab.csv")), "--verifier",
               str(audit_verifier), "--variant", "int8", "--alpha", "0.2", "--name",
               "lab-gold", "--out", str(out))  # fmt: skip
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def calibrated_audit(
    tmp_path_factory: pytest.TempPathFactory,
    planted_dir: Path,
    audit_verifier: Path,
    registry_raw: Path,
    artifact: Path,
) -> Path:
    out = tmp_path_factory.mktemp("audit_cal_out") / "report"
    r = invoke(*audit_args(planted_dir, audit_verifier, registry_raw, out, "--calibration",
                           str(artifact)))  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "exchangeable with lab-gold" in r.output
    assert "false-flag rate on supported citations" in r.output
    return out


def test_summary_carries_the_guarantee(calibrated_audit: Path, artifact: Path) -> None:
    s = json.loads((calibrated_audit / "summary.json").read_text())
    validate_json(s, "audit_summary", "summary.json")
    art = json.loads(artifact.read_text())
    c = s["conformal"]
    g = c["guarantee"]
    assert c["alpha"] == 0.2  # the artifact's alpha when --alpha is not given
    assert c["tau"] == g["tau"] == art["tau"]
    assert g["statement"].startswith("catch >= 80% of unsupported citations exchangeable with")
    assert g["calibration"]["name"] == "lab-gold" and g["calibration"]["kind"] == "artifact"
    assert g["calibration"]["sha256"] == art["sample"]["sha256"]
    assert g["calibration"]["negative_types"] == ["contradiction", "neutral"]
    assert g["calibration"]["same_verifier"] is True
    assert g["rule"] == "mondrian" and len(g["per_type"]) == 2
    ff = g["false_flag_rate"]
    assert ff["n"] == 12 and ff["k"] == art["false_flag"]["k"]
    assert ff["lo"] <= ff["estimate"] <= ff["hi"]
    assert g["review_budget"]["n"] > 0
    assert g["shift"]["testable"] is True


def test_default_calibration_states_its_condition(audited) -> None:
    g = json.loads((audited.out / "summary.json").read_text())["conformal"]["guarantee"]
    assert "exchangeable with pubmedqa-neighbours" in g["statement"]
    assert g["false_flag_rate"] is not None  # the right-paper pairs are the supported class
    assert g["shift"]["testable"] is True
    page = (audited.out / "report.html").read_text()
    assert "catch &gt;= 90% of unsupported citations exchangeable with" in page


def test_mismatched_verifier_is_refused(
    planted_dir: Path, audit_verifier: Path, registry_raw: Path, tmp_path: Path
) -> None:
    cal = tmp_path / "fp32.json"
    r = invoke("guard", "calibrate", str(_labelled(tmp_path / "lab.csv")), "--verifier",
               str(audit_verifier), "--variant", "fp32", "--out", str(cal))  # fmt: skip
    assert r.exit_code == 0, r.output
    args = audit_args(
        planted_dir, audit_verifier, registry_raw, tmp_path / "r", "--calibration", str(cal)
    )  # fmt: skip  (the audit runs int8)
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    assert "calibration_verifier_mismatch" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "r" / "report.html").exists()


class _ById(HTMLParser):
    """Text content of the elements with the wanted ids (nested tags included)."""

    def __init__(self, ids: tuple[str, ...]) -> None:
        super().__init__()
        self.ids, self.text = ids, {i: "" for i in ids}
        self.stack: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "meta", "img", "input"):
            return
        self.stack.append(dict(attrs).get("id"))

    def handle_endtag(self, tag: str) -> None:
        if self.stack and tag not in ("br", "meta", "img", "input"):
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        for i in self.ids:
            if i in self.stack:
                self.text[i] += data


def _dump_dom(page: Path, tmp: Path) -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (.ci/run installs it)")
        pytest.skip("chromium not installed")
    from browser import FLAGS

    cmd = [exe, *FLAGS, f"--user-data-dir={tmp / 'profile'}", "--dump-dom", page.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert "<body" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def test_page_read_in_headless_chromium(calibrated_audit: Path, tmp_path: Path) -> None:
    """The rendered page (chromium's DOM, not our HTML string) shows the condition, the
    calibration source and the false-flag rate next to tau."""
    s = json.loads((calibrated_audit / "summary.json").read_text())
    g = s["conformal"]["guarantee"]
    parser = _ById(IDS)
    parser.feed(_dump_dom(calibrated_audit / "report.html", tmp_path))
    got = {k: " ".join(v.split()) for k, v in parser.text.items()}
    assert got["guarantee-statement"] == g["statement"]
    assert "exchangeable" in got["guarantee-condition"]
    src = got["calibration-source"]
    assert "lab-gold" in src and g["calibration"]["sha256"] in src
    assert "18 unsupported, 12 supported" in src and "contradiction, neutral" in src
    ff = g["false_flag_rate"]
    assert got["false-flag-rate"].startswith(
        f"{ff['estimate']:.3f} [{ff['lo']:.3f}, {ff['hi']:.3f}]"
    )
    assert "Wilson" in got["false-flag-rate"]
    assert got["review-budget"].startswith(f"{g['review_budget']['estimate']:.3f}")
    assert got["shift-check"]
