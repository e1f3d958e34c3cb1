"""How near the machine's limit the verifier's cross-encoder runs: a roofline of one CPU core.

Run: .venv/bin/python bench/bench_roofline.py [--verifier data/verifier-nli] [--tokens 131]
     [--batch 16] [--repeats 7] [--out FILE.json]

For the card's cross-encoder (BERT-style: its ``config.json`` gives layers, hidden size and
intermediate size), this prints, on ONE thread and per CPU-second (``time.process_time``, so a
loaded machine slows the wall clock but not the ratios much):

* the work of one pair of ``--tokens`` tokens, counted from the configuration: the linear layers
  ``layers * tokens * (4 h^2 + 2 h i)`` multiply-adds plus the attention products
  ``layers * 2 tokens^2 h``;
* pairs per CPU-second of the fp32 and int8 ONNX graphs on a batch of ``--batch`` pairs of that
  length (the cost of a forward pass does not depend on which tokens they are);
* the machine's own rate on the graph's largest product, [batch*tokens, h] x [h, i], as an
  onnxruntime ``MatMul`` (fp32) and ``MatMulInteger`` (uint8 x int8) -- the baseline a user would
  pick: what this CPU does when it does nothing but the arithmetic the model is made of;
* the share of that rate each graph reaches, the ceiling it implies (every multiply-add at the
  product's rate), and where the int8 graph's time goes (onnxruntime's profiler, by operator).

What it does not say: the default card's rule also runs a relatedness bi-encoder of the same
size (``bench/bench_cross.py`` measures the rule as a whole); two cores give at most twice one.
No card at ``--verifier``: a STAND-IN of the same size and graph is built (bench/standin.py;
every line says so). Out of pytest on purpose: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import collections
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def macs_per_pair(config: dict[str, Any], tokens: int) -> dict[str, float]:
    """Multiply-adds of one forward pass over ``tokens`` tokens of a BERT-style encoder."""
    h = int(config["hidden_size"])
    i = int(config["intermediate_size"])
    layers = int(config["num_hidden_layers"])
    linear = layers * tokens * (4 * h * h + 2 * h * i)
    attention = layers * 2 * tokens * tokens * h
    return {
        "linear": float(linear),
        "attention": float(attention),
        "total": float(linear + attention),
    }


def _session(model: Any, profile: str | None = None) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    if profile:
        opts.enable_profiling = True
        opts.profile_file_prefix = profile
    return ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])


def _cpu_seconds(run: Any, repeats: int) -> float:
    """Median CPU-seconds of ``run()`` over ``repeats`` calls after one warm-up."""
    run()
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        run()
        times.append(time.process_time() - t0)
    return float(np.median(times))


def _feed(session: Any, batch: int, tokens: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    arrays = {
        "input_ids": rng.integers(1000, 30000, (batch, tokens)).astype(np.int64),
        "attention_mask": np.ones((batch, tokens), np.int64),
        "token_type_ids": np.zeros((batch, tokens), np.int64),
    }
    return {i.name: arrays[i.name] for i in session.get_inputs()}


def product_rates(
    rows: int, h: int, i: int, repeats: int, rng: np.random.Generator
) -> dict[str, float]:
    """GMAC per CPU-second of [rows, h] x [h, i] as onnxruntime MatMul (fp32) and MatMulInteger."""
    from onnx import TensorProto, helper

    rates = {}
    for kind in ("fp32", "int8"):
        if kind == "fp32":
            a = rng.standard_normal((rows, h)).astype(np.float32)
            w = rng.standard_normal((h, i)).astype(np.float32)
            node = helper.make_node("MatMul", ["A", "W"], ["Y"])
            a_type, w_type, y_type = TensorProto.FLOAT, TensorProto.FLOAT, TensorProto.FLOAT
        else:
            a = rng.integers(0, 255, (rows, h)).astype(np.uint8)
            w = rng.integers(-127, 127, (h, i)).astype(np.int8)
            node = helper.make_node("MatMulInteger", ["A", "W"], ["Y"])
            a_type, w_type, y_type = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32
        graph = helper.make_graph(
            [node],
            "product",
            [helper.make_tensor_value_info("A", a_type, [rows, h])],
            [helper.make_tensor_value_info("Y", y_type, [rows, i])],
            [helper.make_tensor("W", w_type, [h, i], w.flatten().tolist())],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        session = _session(model.SerializeToString())
        seconds = _cpu_seconds(lambda s=session, x=a: s.run(None, {"A": x}), repeats)
        rates[kind] = rows * h * i / seconds / 1e9
    return rates


def op_shares(model: Path, feed: dict[str, np.ndarray], workdir: Path) -> list[tuple[str, float]]:
    """Share of kernel time per operator type over five runs (onnxruntime's profiler)."""
    session = _session(str(model), profile=str(workdir / "profile"))
    for _ in range(5):
        session.run(None, feed)
    events = json.loads(Path(session.end_profiling()).read_text())
    spent: collections.Counter[str] = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time"):
            spent[event["args"]["op_name"]] += event["dur"]
    total = sum(spent.values()) or 1
    return [(op, us / total) for op, us in spent.most_common()]


def card_folder(arg: Path, tmp: Path) -> tuple[Path, bool]:
    if (arg / "card.json").is_file():
        return arg, False
    from standin import build_standin

    print(f"no card at {arg}: timing a STAND-IN of the same size and graph (bench/standin.py)")
    return build_standin(tmp / "standin"), True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--verifier", type=Path, default=Path("data/verifier-nli"), help="Card folder.")
    ap.add_argument(
        "--tokens",
        type=int,
        default=131,
        help="Tokens per pair (PubMedQA short pairs average 131).",
    )
    ap.add_argument("--batch", type=int, default=16, help="Pairs per forward pass.")
    ap.add_argument("--repeats", type=int, default=7, help="Timed calls per measurement (median).")
    ap.add_argument("--seed", type=int, default=0, help="Seed of the random inputs.")
    ap.add_argument("--out", type=Path, default=None, help="Also write the figures as JSON.")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        folder, standin = card_folder(a.verifier, tmp)
        tag = " (STAND-IN: speed only)" if standin else ""
        card = json.loads((folder / "card.json").read_text())
        config_path = folder / "config.json"
        if standin:  # the stand-in keeps no config.json: it is the package's base model
            from kit.guard.verifiers.export import package_model_dir

            config_path = package_model_dir() / "config.json"
        config = json.loads(config_path.read_text())
        work = macs_per_pair(config, a.tokens)
        h, i = int(config["hidden_size"]), int(config["intermediate_size"])
        rates = product_rates(a.batch * a.tokens, h, i, a.repeats, rng)
        graphs = {
            "fp32": folder / card["onnx_file"],
            "int8": folder / card.get("extra", {}).get("int8_file", "missing-int8.onnx"),
        }
        result: dict[str, Any] = {
            "card": card.get("name", folder.name),
            "cpu": platform.processor() or platform.machine(),
            "tokens": a.tokens,
            "batch": a.batch,
            "gmac_per_pair": work["total"] / 1e9,
            "product_gmac_per_cpu_s": rates,
            "graphs": {},
        }
        print(f"card: {result['card']}")
        print(
            f"work of one {a.tokens}-token pair: {work['total'] / 1e9:.3f} GMAC "
            f"({work['linear'] / work['total']:.0%} in the linear layers, the rest attention products)"
        )
        print(
            f"this CPU core, [{a.batch * a.tokens}x{h}]x[{h}x{i}]: fp32 MatMul {rates['fp32']:.1f}, "
            f"int8 MatMulInteger {rates['int8']:.1f} GMAC per CPU-second"
        )
        for kind, path in graphs.items():
            if not path.is_file():
                print(f"{kind}: SKIP (no {path.name} in {folder})")
                continue
            session = _session(str(path))
            feed = _feed(session, a.batch, a.tokens, rng)
            seconds = _cpu_seconds(lambda s=session, f=feed: s.run(None, f), a.repeats)
            pairs = a.batch / seconds
            reached = pairs * work["total"] / 1e9
            share = reached / rates[kind]
            ceiling = rates[kind] * 1e9 / work["total"]
            result["graphs"][kind] = {
                "pairs_per_cpu_s": pairs,
                "gmac_per_cpu_s": reached,
                "share_of_product_rate": share,
                "ceiling_pairs_per_cpu_s": ceiling,
            }
            print(
                f"{kind} graph: {pairs:.1f} pairs per CPU-second{tag} = {reached:.1f} GMAC/s, "
                f"{share:.0%} of the {kind} product rate (ceiling {ceiling:.0f} pairs per CPU-second)"
            )
        int8 = graphs["int8"]
        if int8.is_file():
            shares = op_shares(int8, _feed(_session(str(int8)), a.batch, a.tokens, rng), tmp)
            result["int8_time_by_operator"] = dict(shares)
            top = ", ".join(f"{op} {s:.0%}" for op, s in shares[:8])
            print(f"int8 graph's kernel time by operator: {top}")
        print(
            "the default rule runs a relatedness bi-encoder of the same size beside the cross-encoder "
            "(bench/bench_cross.py times the rule); two cores give at most twice one"
        )
    if a.out:
        a.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
