"""`make device-check`: the verifier on a CUDA GPU -- training and scoring, one command.

Run: .venv/bin/python bench/device_check.py [--parts training,scoring] [--device cuda]
     [--pairs 512] [--batch-sizes 32,128,512] [--tolerance 1e-3]
     [--train-batch-size 16] [--train-epochs N] [--train-cap N] [--train-val 300] [--base DIR]
     [--raw data/raw] [--out FILE.json]

Two parts, each run when this machine can (``--parts``; default both on cuda):

* **training** (needs torch that sees a CUDA device: a CUDA build of torch and an NVIDIA GPU):
  ``kit guard train``'s pipeline (:func:`kit.guard.training.nli_verifier.train_verifier`) on ``--device``
  with the recipe (``--train-batch-size`` default the recipe's 16, ``--train-epochs``,
  ``--train-cap`` per source, ``--train-val`` held-out pairs per source), into a temporary card
  folder. Printed: training seconds and pairs/s (pairs seen / training seconds), and the held-out
  AUC (mean over the biomedical groups, each scoring rule; per group, the chosen rule) beside
  the CPU-trained card's (data/verifier-nli, when built by `make reproduce`). The GPU's kernels
  are not the CPU's: the weights, and so the AUCs, differ in the last digits at least.
* **scoring** (needs an NVIDIA GPU and onnxruntime's CUDAExecutionProvider: ``pip install
  onnxruntime-gpu`` of the same version as onnxruntime): each verifier that is built -- the
  bi-encoder ``minilm-bi`` (built into a temp folder when data/verifier is missing) and the
  cross-encoder ``minilm-nli`` when data/verifier-nli exists -- fp32, once on CPU and once on
  ``--device``, on the same ``--pairs`` PubMedQA pairs (as bench/bench_guard.py): the max |score
  difference| (parity holds when it is <= ``--tolerance``) and pairs/s on the device at each
  ``--batch-sizes`` (fresh verifier each, after a warm-up) against CPU at the first size.

A part this machine cannot run prints one line ``SKIP device-check <part>: <what is missing>``.
Exit status: 0 every part that ran passed; 1 scoring parity failed (a score differs by more
than the tolerance); 2 a usage or input error; **77 skipped**: no part could run (the SKIP
lines say why) -- the automake convention for "skipped", so a CPU-only machine or CI job can
tell a skip from a pass and from a failure.

``--device cpu`` runs the same steps with CPU on both sides (parity 0 by construction; by
default the scoring part only, training on CPU being `kit guard train`): a dry run of the
script itself on any machine. Not done here: fp16 graphs, IO binding.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

SKIPPED = 77
PARTS = ("training", "scoring")


def gpu_status() -> str | None:
    """None when nvidia-smi lists a GPU, else why not."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "no NVIDIA GPU here (nvidia-smi not found)"
    probe = subprocess.run([smi, "-L"], capture_output=True, text=True, check=False)
    if probe.returncode != 0 or "GPU" not in probe.stdout:
        return f"nvidia-smi lists no GPU ({(probe.stderr or probe.stdout).strip()[:200]})"
    return None


def cuda_status() -> str | None:
    """Scoring: None when a CUDA GPU and onnxruntime's CUDA provider are both present, else
    why not."""
    import onnxruntime as ort

    gpu = gpu_status()
    if gpu is not None:
        return gpu
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return (
            f"onnxruntime {ort.__version__} has no CUDAExecutionProvider (providers: "
            f"{', '.join(ort.get_available_providers())}); install onnxruntime-gpu=="
            f"{ort.__version__} in place of onnxruntime"
        )
    return None


def torch_status() -> str | None:
    """Training: None when torch is installed and sees a CUDA device, else why not."""
    try:
        import torch
    except ImportError:
        return "torch is not installed (pip install -e '.[train]' with a CUDA build of torch)"
    if not torch.cuda.is_available():
        build = torch.version.cuda
        what = f"a CUDA {build} build" if build else "a CPU-only build"
        gpu = gpu_status()
        return f"torch {torch.__version__} ({what}) sees no CUDA device" + (
            f"; {gpu}" if gpu else ""
        )
    return None


def plan(
    wanted: tuple[str, ...], device: str, why_not: dict[str, str | None]
) -> tuple[list[str], list[str]]:
    """(parts to run, SKIP lines) for the ``wanted`` parts: on cpu every part can run; on cuda a
    part runs when ``why_not[part]`` is None (its SKIP line names what is missing)."""
    run, skips = [], []
    for part in wanted:
        why = None if device == "cpu" else why_not.get(part)
        if why is None:
            run.append(part)
        else:
            skips.append(f"SKIP device-check {part}: {why}")
    return run, skips


def exit_status(ran: list[str], results: dict[str, Any]) -> int:
    """0 when every part that ran passed, 1 when scoring parity failed, 77 when none ran."""
    if not ran:
        return SKIPPED
    scoring = results.get("scoring")
    if scoring is not None and not all(r["parity"] for r in scoring["verifiers"]):
        return 1
    return 0


# ----------------------------------------------------------------------------- scoring


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
    from kit.guard.verifiers.load import load_verifier

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


def check_scoring(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_guard import load_pairs

    from kit.guard.verifiers.export import build_verifier
    from kit.guard.verifiers.load import BUILTIN_VERIFIERS

    claims, windows = load_pairs(args.pairs, args.raw)
    bi = "minilm-bi"
    if not (BUILTIN_VERIFIERS[bi] / "card.json").is_file():
        bi = str(tmp / "verifier")
        build_verifier(Path(bi))
    specs = [bi]
    if (BUILTIN_VERIFIERS["minilm-nli"] / "card.json").is_file():
        specs.append("minilm-nli")
    else:
        print("device-check: minilm-nli is not built (make reproduce); bi-encoder only")
    return {
        "pairs": len(claims),
        "verifiers": [check_verifier(s, claims, windows, args) for s in specs],
    }


# ----------------------------------------------------------------------------- training


def card_summary(card: dict[str, Any], build: dict[str, Any] | None) -> dict[str, Any]:
    """What a trained card says about its training and held-out AUC (one dict, for printing)."""
    t = card["extra"]["training"]
    v = card["extra"]["validation"]
    pairs = sum(t["train_pairs"].values()) * int(t["recipe"]["epochs"])
    seconds = (build or {}).get("train_seconds")
    return {
        "device": t.get("device", "cpu"),
        "batch_size": t["recipe"]["batch_size"],
        "epochs": t["recipe"]["epochs"],
        "pairs_seen": pairs,
        "train_seconds": seconds,
        "pairs_per_s": round(pairs / seconds, 1) if seconds else None,
        "fp32_sha256": card["onnx_sha256"],
        "rule": v["scoring_rule_choice"]["chosen"],
        "biomedical_mean_auc": v["scoring_rule_choice"]["means"],
        "group_auc": {
            g: (x.get("auc_unsupported") or {}).get("auc") for g, x in v["groups"].items()
        },
    }


def check_training(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """Train a card on ``args.device`` (the recipe, less what the options change) and set it
    beside the CPU card (data/verifier-nli) when that is built."""
    from kit.guard.training.nli_verifier import VAL_PER_SOURCE, train_verifier
    from kit.guard.training.train_data import Recipe
    from kit.guard.verifiers.build_record import read_build_record
    from kit.guard.verifiers.load import BUILTIN_VERIFIERS, load_card

    recipe = Recipe()
    changes = {
        "batch_size": args.train_batch_size,
        "epochs": args.train_epochs,
        "cap_per_source": args.train_cap,
    }
    recipe = replace(recipe, **{k: v for k, v in changes.items() if v is not None})
    out = tmp / "nli-device"
    card = train_verifier(
        args.raw,
        out,
        recipe,
        base=args.base,
        device=args.device,
        val_per_source=args.train_val or VAL_PER_SOURCE,
    )
    result = {"device_card": card_summary(card, read_build_record(out))}
    cpu = BUILTIN_VERIFIERS["minilm-nli"]
    if (cpu / "card.json").is_file():
        result["cpu_card"] = card_summary(load_card(cpu), read_build_record(cpu))
    else:
        result["cpu_card"] = None
    return result


def training_lines(res: dict[str, Any]) -> list[str]:
    d, c = res["device_card"], res["cpu_card"]

    def means(x: dict[str, Any]) -> str:
        return ", ".join(f"{r} {a}" for r, a in sorted(x["biomedical_mean_auc"].items()))

    lines = [
        f"device-check training: {d['device']}, batch {d['batch_size']}, {d['epochs']} epochs, "
        f"{d['pairs_seen']} pairs in {d['train_seconds']} s ({d['pairs_per_s']} pairs/s); "
        f"held-out biomedical mean AUC by rule: {means(d)}; chosen {d['rule']}"
    ]
    if c is None:
        lines.append(
            "device-check training: no CPU card to set beside it (data/verifier-nli is built by "
            "make reproduce)"
        )
        return lines
    lines.append(
        f"  CPU card (data/verifier-nli): {c['device']}, batch {c['batch_size']}, "
        f"{c['epochs']} epochs, {c['pairs_seen']} pairs in {c['train_seconds']} s "
        f"({c['pairs_per_s']} pairs/s); held-out biomedical mean AUC by rule: {means(c)}; "
        f"chosen {c['rule']}"
    )
    for g in sorted(set(d["group_auc"]) | set(c["group_auc"])):
        lines.append(
            f"  {g}: AUC {d['group_auc'].get(g)} ({d['rule']}, {d['device']}) vs "
            f"{c['group_auc'].get(g)} ({c['rule']}, cpu)"
        )
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--parts",
        default=None,
        help="comma list of training, scoring [both on cuda; scoring on cpu]",
    )
    ap.add_argument("--pairs", type=int, default=512)
    ap.add_argument("--batch-sizes", default="32,128,512")
    ap.add_argument("--tolerance", type=float, default=1e-3)
    ap.add_argument("--raw", type=Path, default=Path("data/raw"))
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--train-batch-size", type=int, default=None, help="[recipe: 16]")
    ap.add_argument("--train-epochs", type=int, default=None, help="[recipe]")
    ap.add_argument("--train-cap", type=int, default=None, help="pairs a source [recipe]")
    ap.add_argument("--train-val", type=int, default=None, help="held-out pairs a source [300]")
    ap.add_argument("--base", type=Path, default=None, help="BERT folder [MiniLM-L6 package]")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    default = PARTS if args.device == "cuda" else ("scoring",)
    wanted = tuple(p.strip() for p in args.parts.split(",")) if args.parts else default
    unknown = [p for p in wanted if p not in PARTS]
    if unknown:
        print(f"device-check: --parts takes {', '.join(PARTS)}; got {', '.join(unknown)}")
        return 2
    why_not: dict[str, str | None] = {}
    if args.device == "cuda":
        why_not = {
            "training": torch_status() if "training" in wanted else None,
            "scoring": cuda_status() if "scoring" in wanted else None,
        }
    ran, skips = plan(wanted, args.device, why_not)
    for line in skips:
        print(line)
    if not ran:
        print(f"device-check: no part could run here (exit {SKIPPED})")
        return SKIPPED

    from kit.core.errors import KitError

    results: dict[str, Any] = {"device": args.device, "skipped": skips}
    try:
        with tempfile.TemporaryDirectory(prefix="device_check_") as td:
            if "training" in ran:
                results["training"] = check_training(args, Path(td))
            if "scoring" in ran:
                results["scoring"] = check_scoring(args, Path(td))
    except KitError as err:
        print(err.render(), file=sys.stderr)
        return 2
    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        from kit.core import atomic

        atomic.write_text(args.out, text + "\n")
    if "training" in results:
        for line in training_lines(results["training"]):
            print(line)
    for r in results.get("scoring", {}).get("verifiers", []):
        print(
            f"device-check scoring: {r['verifier']}: max |s_{args.device} - s_cpu| = "
            f"{r['max_abs_score_diff']:.3g} ({'ok' if r['parity'] else 'FAILS'} at "
            f"{args.tolerance:g}); "
            + ", ".join(
                f"batch {d['batch_size']}: {d['pairs_per_s']} pairs/s" for d in r["device_rows"]
            )
        )
    for line in skips:  # again at the end, where a reader looks
        print(line)
    return exit_status(ran, results)


if __name__ == "__main__":
    sys.exit(main())
