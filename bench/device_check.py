"""`make device-check`: the verifier on a CUDA GPU -- parity with CPU and pairs/s, one command.

Run: .venv/bin/python bench/device_check.py [--pairs 512] [--batch-sizes 32,128,512]
     [--tolerance 1e-3] [--raw data/raw] [--device cuda] [--out FILE.json]

What it does, on a machine with an NVIDIA GPU and onnxruntime's CUDAExecutionProvider
(``pip install onnxruntime-gpu`` of the same version as onnxruntime):

1. loads each verifier that is built -- the bi-encoder ``minilm-bi`` (built into a temp folder
   when data/verifier is missing) and the cross-encoder ``minilm-nli`` when data/verifier-nli
   exists -- fp32, once on CPU and once on ``--device``;
2. scores the same ``--pairs`` PubMedQA pairs (a conclusion sentence and one 3-sentence window of
   an abstract, as bench/bench_guard.py) on both and prints the max |score difference| (parity
   holds when it is <= ``--tolerance``);
3. times pairs/s on the device at each ``--batch-sizes`` (fresh verifier each: empty caches,
   after a warm-up) and once on CPU at the first batch size, and prints the speedup.

Exit status: 0 parity held everywhere; 1 parity failed (a score differs by more than the
tolerance); 2 a usage or input error; **77 skipped**: no CUDA GPU, or no CUDAExecutionProvider
in this onnxruntime (the line printed says which) -- the automake convention for "skipped", so a
CPU-only machine or CI job can tell a skip from a pass and from a failure.

``--device cpu`` runs the same steps with CPU on both sides (parity 0 by construction): a dry
run of the script itself on any machine. Not done here (issue 17, item 3, still open): fp16
graphs, IO binding, and training the verifier on the GPU.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

SKIPPED = 77


def cuda_status() -> str | None:
    """None when a CUDA GPU and onnxruntime's CUDA provider are both present, else why not."""
    import onnxruntime as ort

    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "no NVIDIA GPU here (nvidia-smi not found)"
    probe = subprocess.run([smi, "-L"], capture_output=True, text=True, check=False)
    if probe.returncode != 0 or "GPU" not in probe.stdout:
        return f"nvidia-smi lists no GPU ({(probe.stderr or probe.stdout).strip()[:200]})"
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return (
            f"onnxruntime {ort.__version__} has no CUDAExecutionProvider (providers: "
            f"{', '.join(ort.get_available_providers())}); install onnxruntime-gpu=="
            f"{ort.__version__} in place of onnxruntime"
        )
    return None


def _pairs_per_s(load: Any, claims: list[str], windows: list[str]) -> tuple[float, np.ndarray]:
    load().score(claims[:8], windows[:8])  # warm-up on a throwaway instance
    v = load()
    t = time.perf_counter()
    s = np.asarray(v.score(claims, windows), dtype=float)
    return len(claims) / (time.perf_counter() - t), s


def check_verifier(
    spec: str, claims: list[str], windows: list[str], args: argparse.Namespace
) -> dict[str, Any]:
    """Parity (max |s_device - s_cpu|) and pairs/s of one verifier (fp32)."""
    from kit.guard.verifier import load_verifier

    sizes = [int(x) for x in args.batch_sizes.split(",")]

    def loader(device: str, batch: int) -> Any:
        return lambda: load_verifier(spec, "fp32", device, batch)

    cpu_rate, cpu_s = _pairs_per_s(loader("cpu", sizes[0]), claims, windows)
    rows = []
    worst = 0.0
    for b in sizes:
        rate, s = _pairs_per_s(loader(args.device, b), claims, windows)
        diff = float(np.max(np.abs(s - cpu_s))) if len(s) else 0.0
        worst = max(worst, diff)
        rows.append(
            {
                "batch_size": b,
                "pairs_per_s": round(rate, 1),
                "speedup_vs_cpu": round(rate / cpu_rate, 2),
                "max_abs_score_diff_vs_cpu": diff,
            }
        )
    return {
        "verifier": spec,
        "variant": "fp32",
        "cpu_pairs_per_s": round(cpu_rate, 1),
        "cpu_batch_size": sizes[0],
        "device_rows": rows,
        "max_abs_score_diff": worst,
        "parity": worst <= args.tolerance,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=512)
    ap.add_argument("--batch-sizes", default="32,128,512")
    ap.add_argument("--tolerance", type=float, default=1e-3)
    ap.add_argument("--raw", type=Path, default=Path("data/raw"))
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    if args.device == "cuda":
        why = cuda_status()
        if why is not None:
            print(f"SKIP device-check: {why} (exit {SKIPPED})")
            return SKIPPED
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_guard import load_pairs

    from kit.errors import KitError
    from kit.guard.export import build_verifier
    from kit.guard.verifier import BUILTIN_VERIFIERS

    try:
        claims, windows = load_pairs(args.pairs, args.raw)
        with tempfile.TemporaryDirectory(prefix="device_check_") as tmp:
            bi = "minilm-bi"
            if not (BUILTIN_VERIFIERS[bi] / "card.json").is_file():
                bi = str(Path(tmp) / "verifier")
                build_verifier(Path(bi))
            specs = [bi]
            if (BUILTIN_VERIFIERS["minilm-nli"] / "card.json").is_file():
                specs.append("minilm-nli")
            else:
                print("device-check: minilm-nli is not built (make reproduce); bi-encoder only")
            results = [check_verifier(s, claims, windows, args) for s in specs]
    except KitError as err:
        print(err.render(), file=sys.stderr)
        return 2
    report = {"device": args.device, "pairs": len(claims), "verifiers": results}
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        from kit import atomic

        atomic.write_text(args.out, text + "\n")
    for r in results:
        print(
            f"device-check: {r['verifier']}: max |s_{args.device} - s_cpu| = "
            f"{r['max_abs_score_diff']:.3g} ({'ok' if r['parity'] else 'FAILS'} at "
            f"{args.tolerance:g}); "
            + ", ".join(
                f"batch {d['batch_size']}: {d['pairs_per_s']} pairs/s" for d in r["device_rows"]
            )
        )
    return 0 if all(r["parity"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
