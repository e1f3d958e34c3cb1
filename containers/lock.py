"""Write the hashed locks the container images install with `pip install --require-hashes`.

    .venv/bin/python containers/lock.py [--wheels DIR]      (make container-lock)

Reads constraints.txt (the pinned environment of `make setup`), downloads exactly the files pip
picks for each pin on this host (`pip download --no-deps`: Linux x86_64, CPython 3.11, like the
images) into DIR, and writes one line per package with the sha256 of that file:

    containers/requirements.lock      the CPU image: constraints.txt + BUILD_TOOLS
    containers/requirements-gpu.lock  the GPU image: the same with onnxruntime -> GPU_ONNXRUNTIME

BUILD_TOOLS are installed (hashed) too, so that the kit's editable install and the one sdist in
the set (antlr4-python3-runtime) build with `--no-build-isolation` from hashed packages only;
pip fetches build dependencies of an isolated build without checking any hash.

A pin with a local version (torch==2.13.0+cpu) is locked as the file pip found for it; a host
without that wheel in its find-links needs the index that serves it (PyTorch's CPU index) in
pip's configuration. Output is sorted and deterministic for the same files.

Every wheel's ``Requires-Python`` must admit IMAGE_PYTHON, the oldest Python an image runs:
Debian bookworm's python3 (3.11.2), the interpreter of the debootstrapped base that `make
container-check` builds from. A pin that needs a newer 3.11 (soupsieve >= 3 asks for >= 3.11.5)
is refused here, naming the package, instead of failing inside the image build.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
BUILD_TOOLS = ("setuptools==84.2.1",)
GPU_ONNXRUNTIME = "onnxruntime-gpu==1.31.1"
IMAGE_PYTHON = "3.11.2"  # Debian bookworm's python3: the base of containers/check.sh
LOCKS = {"cpu": ROOT / "containers" / "requirements.lock", "gpu": ROOT / "containers" / "requirements-gpu.lock"}  # fmt: skip


def normalise(name: str) -> str:
    """PEP 503 name: lower case, runs of -_. as one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    """``{normalised name: version}`` of every ``name==version`` line of a requirements file."""
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            if not sep:
                raise SystemExit(f"{path}: {line!r} is not pinned with ==")
            out[normalise(name)] = version.strip()
    return out


def image_pins(constraints: dict[str, str]) -> dict[str, dict[str, str]]:
    """The requirement set of each image: ``{image: {name: version}}``."""
    tools = dict(p.split("==") for p in BUILD_TOOLS)
    cpu = {**constraints, **{normalise(k): v for k, v in tools.items()}}
    gpu = {k: v for k, v in cpu.items() if k != "onnxruntime"}
    name, version = GPU_ONNXRUNTIME.split("==")
    gpu[normalise(name)] = version
    return {"cpu": cpu, "gpu": gpu}


def dist_name_version(filename: str) -> tuple[str, str]:
    """(normalised name, version) of a wheel or an sdist file name."""
    if filename.endswith(".whl"):
        name, version = filename.split("-")[:2]
    else:
        stem = re.sub(r"\.(tar\.gz|zip|tar\.bz2)$", "", filename)
        name, _, version = stem.rpartition("-")
    return normalise(name), version


def requires_python(wheel: Path) -> str:
    """The ``Requires-Python`` field of a wheel's METADATA ('' when it states none)."""
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        for line in zf.read(meta).decode("utf-8").splitlines():
            if not line.strip():
                break  # the headers end at the first blank line
            if line.lower().startswith("requires-python:"):
                return line.split(":", 1)[1].strip()
    return ""


def python_refusals(requires: dict[str, str], python: str = IMAGE_PYTHON) -> list[str]:
    """``name (Requires-Python SPEC)`` for each package whose spec does not admit ``python``."""
    return [
        f"{name} (Requires-Python {spec})"
        for name, spec in sorted(requires.items())
        if spec and not SpecifierSet(spec).contains(Version(python))
    ]


def download(reqs: dict[str, str], wheels: Path, python: str) -> dict[str, tuple[str, str]]:
    """``{name: (file name, sha256)}`` of the files pip downloads for ``reqs`` into ``wheels``."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("".join(f"{n}=={v}\n" for n, v in sorted(reqs.items())))
    subprocess.run(
        [python, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), "-r", fh.name],
        check=True,
    )
    Path(fh.name).unlink()
    found: dict[str, tuple[str, str]] = {}
    for f in sorted(wheels.iterdir()):
        if f.suffix in {".whl", ".gz", ".zip", ".bz2"}:
            name, version = dist_name_version(f.name)
            want = reqs.get(name)
            if want is not None and (version == want or version.split("+")[0] == want):
                found[name] = (f.name, hashlib.sha256(f.read_bytes()).hexdigest())
    missing = sorted(set(reqs) - set(found))
    if missing:
        raise SystemExit(f"no downloaded file for: {', '.join(missing)}")
    specs = {n: requires_python(wheels / f) for n, (f, _) in found.items() if f.endswith(".whl")}
    refused = python_refusals(specs)
    if refused:
        raise SystemExit(
            f"these pins need a newer Python than the images' {IMAGE_PYTHON}: "
            f"{', '.join(refused)}; pin a release that admits it in constraints.txt"
        )
    return found


def render(image: str, reqs: dict[str, str], files: dict[str, tuple[str, str]]) -> str:
    lines = [
        f"# The {image.upper()} image's Python packages, each pinned to one file by its sha256.",
        "# Generated by containers/lock.py from constraints.txt (make container-lock); do not edit.",
        "# Installed with: pip install --require-hashes --no-deps --no-index --find-links WHEELS",
    ]
    for name in sorted(reqs):
        filename, sha = files[name]
        version = dist_name_version(filename)[1]  # the file's own version (a local label kept)
        lines.append(f"{name}=={version} \\\n    --hash=sha256:{sha}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheels", type=Path, default=None, help="Download folder [a temp folder].")
    ap.add_argument("--python", default=sys.executable, help="The Python whose pip downloads.")
    args = ap.parse_args(argv)
    sets = image_pins(pins(ROOT / "constraints.txt"))
    wheels = args.wheels or Path(tempfile.mkdtemp(prefix="kit-lock-"))
    wheels.mkdir(parents=True, exist_ok=True)
    union = {**sets["cpu"], **sets["gpu"]}
    files = download(union, wheels, args.python)
    for image, reqs in sets.items():
        LOCKS[image].write_text(render(image, reqs, files), encoding="utf-8")
        print(f"wrote {LOCKS[image].relative_to(ROOT)}: {len(reqs)} packages (files in {wheels})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
