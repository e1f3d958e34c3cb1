"""Malformed variants of every input format the kit reads, and the commands that read them.

Shared by the hypothesis suite (tests/spine/test_malformed_inputs.py) and the census
(``python -m tests.spine.malformed``): each :class:`Format` is a valid seed file plus the command
line that reads it; each mutation turns the seed into an input that must be refused (exit 2,
the message naming the file, no traceback, nothing written). Mutations draw their choices from
``pick(lo, hi)`` so hypothesis and a seeded ``random.Random`` drive them alike.
"""

from __future__ import annotations

import io
import json
import random
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from kit.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
Pick = Callable[[int, int], int]

# a small synthetic score table (SYNTHETIC: labelled so in entry_hash and backbone)
SCORES = "task_id,cluster,system,readout,score,failed,entry_hash,backbone,entry_condition,length_view\n" + "".join(
    f"t{t},c{t % 3},{s},r1,{0.5 + 0.01 * t + (0.1 if s == 'A' else 0):.3f},False,"
    "synthetic:test,synthetic-backbone,fixed_input,matched_length\n"
    for s in "AB"
    for t in range(6)
)  # fmt: skip
DESIGN = "alpha: 0.05\nfamily: all_pairs\n"
CALIBRATION = '{"unsupported_scores": [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]}\n'


def _parquet(text: str) -> bytes:
    buf = io.BytesIO()
    pd.read_csv(io.StringIO(text), dtype=str).to_parquet(buf, index=False)
    return buf.getvalue()


@dataclass(frozen=True)
class Format:
    """A valid input (``files``; ``target`` is the one mutated) and the command reading it.

    ``argv(inputs, out)`` is the command line; ``out`` a path that must not exist afterwards
    when the input is refused. ``required``: CSV columns the schema requires; ``finite``: CSV
    columns where inf must be refused.
    """

    name: str
    kind: str  # csv | parquet | json | jsonl | yaml
    target: str
    files: dict[str, bytes]
    argv: Callable[[Path, Path], list[str]]
    required: tuple[str, ...] = ()
    finite: tuple[str, ...] = ()
    prepare: Callable[[Path], None] | None = field(default=None)


def _ex(*parts: str) -> bytes:
    return EX.joinpath(*parts).read_bytes()


def _seal_folder(inputs: Path) -> None:
    """Make ``inputs/sealed`` a folder sealed by the kit (the receipt is then mutated)."""
    stages = inputs / "stages.csv"
    stages.write_bytes(_ex("theory", "stages.csv"))
    (inputs / "sealed").mkdir()
    res = CliRunner().invoke(
        cli, ["theory", "compose", str(stages), "--eps0", "0.05", "--out", str(inputs / "sealed" / "b.csv")]
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    stages.unlink()


def _theory(sub: str, *extra: str) -> Callable[[Path, Path], list[str]]:
    return lambda i, o: ["theory", sub, *[str(i / e) if e.endswith(".csv") else e for e in extra], "--out", str(o / "t.csv")]  # fmt: skip


FORMATS: tuple[Format, ...] = (
    Format(
        "scores.csv", "csv", "scores.csv", {"scores.csv": SCORES.encode(), "design.yaml": DESIGN.encode()},
        lambda i, o: ["certify", str(i / "scores.csv"), "--design", str(i / "design.yaml"), "--out", str(o)],
        required=("task_id", "system", "score"), finite=("score",),
    ),
    Format(
        "scores.parquet", "parquet", "scores.parquet",
        {"scores.parquet": _parquet(SCORES), "design.yaml": DESIGN.encode()},
        lambda i, o: ["certify", str(i / "scores.parquet"), "--design", str(i / "design.yaml"), "--out", str(o)],
    ),
    Format(
        "design.yaml", "yaml", "design.yaml", {"scores.csv": SCORES.encode(), "design.yaml": DESIGN.encode()},
        lambda i, o: ["certify", str(i / "scores.csv"), "--design", str(i / "design.yaml"), "--out", str(o)],
    ),
    Format(
        "runs v1", "jsonl", "runs.jsonl", {"runs.jsonl": _ex("grade", "runs.jsonl")},
        lambda i, o: ["grade", "runs", str(i / "runs.jsonl"), "--out", str(o / "r.csv")],
    ),
    Format(
        "runs v2", "jsonl", "runs.jsonl", {"runs.jsonl": _ex("runs", "runs.v2.jsonl")},
        lambda i, o: ["grade", "runs", str(i / "runs.jsonl"), "--out", str(o / "r.csv")],
    ),
    Format(
        "checklists", "jsonl", "checklists.jsonl",
        {"runs.jsonl": _ex("grade", "runs.jsonl"), "checklists.jsonl": _ex("grade", "checklists.jsonl")},
        lambda i, o: ["grade", "judge", str(i / "runs.jsonl"), "--checklists", str(i / "checklists.jsonl"), "--out", str(o / "v.csv")],
    ),
    Format(
        "verdicts", "csv", "verdicts.csv",
        {"verdicts.csv": _ex("grade", "verdicts.csv"), "checklists.jsonl": _ex("grade", "checklists.jsonl")},
        lambda i, o: ["grade", "checklist", str(i / "verdicts.csv"), "--checklists", str(i / "checklists.jsonl"), "--out", str(o / "c.csv")],
        required=("task_id", "criterion_id", "verdict"),
    ),
    Format(
        "replay cache", "jsonl", "cache.jsonl",
        {"runs.jsonl": _ex("grade", "runs.jsonl"), "cache.jsonl": _ex("grade", "cache.jsonl")},
        lambda i, o: ["grade", "replay", "check", str(i / "runs.jsonl"), "--cache", str(i / "cache.jsonl"), "--out", str(o / "c.csv")],
    ),
    Format(
        "task scores", "csv", "task_scores.csv", {"task_scores.csv": _ex("grade", "task_scores.csv")},
        lambda i, o: ["grade", "frozen-core", str(i / "task_scores.csv"), "--roster", "GLM-5.1,Qwen3.6,DeepSeek-V4", "--out", str(o / "f.csv")],
        required=("task_id",),
    ),
    Format(
        "calibration json", "json", "cal.json", {"cal.json": CALIBRATION.encode()},
        lambda i, o: ["guard", "tau", "--calibration", str(i / "cal.json"), "--alphas", "0.2", "--out", str(o / "tau.csv")],
    ),
    Format(
        "theory stages", "csv", "stages.csv", {"stages.csv": _ex("theory", "stages.csv")},
        _theory("compose", "stages.csv", "--eps0", "0.05"), required=("stage", "L", "eps"),
    ),
    Format(
        "theory runs", "csv", "runs.csv", {"runs.csv": _ex("theory", "runs.csv")},
        _theory("lm", "runs.csv"), required=("system", "x", "y"), finite=("x", "y"),
    ),
    Format(
        "theory window pairs", "csv", "pairs.csv", {"pairs.csv": _ex("theory", "pairs.csv")},
        _theory("radius", "pairs.csv", "--lam-in", "0.5"), required=("task_id", "exit_dist"), finite=("exit_dist",),
    ),
    Format(
        "theory graph nodes", "csv", "nodes.csv", {"nodes.csv": _ex("theory", "nodes.csv"), "edges.csv": _ex("theory", "edges.csv")},
        _theory("fgw", "nodes.csv", "edges.csv"), required=("graph", "node"),
    ),
    Format(
        "theory graph edges", "csv", "edges.csv", {"nodes.csv": _ex("theory", "nodes.csv"), "edges.csv": _ex("theory", "edges.csv")},
        _theory("fgw", "nodes.csv", "edges.csv"), required=("graph",),
    ),
    Format(
        "theory transitions", "csv", "transitions.csv",
        {"transitions.csv": _ex("theory", "transitions.csv"), "states.csv": _ex("theory", "states.csv")},
        _theory("distance", "transitions.csv", "states.csv", "--system-a", "syn-A", "--system-b", "syn-B"),
        required=("system", "state"), finite=("count",),
    ),
    Format(
        "theory states", "csv", "states.csv",
        {"transitions.csv": _ex("theory", "transitions.csv"), "states.csv": _ex("theory", "states.csv")},
        _theory("distance", "transitions.csv", "states.csv", "--system-a", "syn-A", "--system-b", "syn-B"),
        required=("state",),
    ),
    Format(
        "receipt", "json", "sealed/b.csv.receipt.json", {},
        lambda i, o: ["verify", "receipts", str(i / "sealed")], prepare=_seal_folder,
    ),
)  # fmt: skip


# ------------------------------------------------------------------------------- mutations


def _bad_byte(data: bytes, pick: Pick) -> bytes:
    """Insert one byte >= 0x80: never valid UTF-8 where valid UTF-8 was (the counts break)."""
    at = pick(0, len(data))
    return data[:at] + bytes([pick(0x80, 0xFF)]) + data[at:]


def _utf16(data: bytes, pick: Pick) -> bytes:
    return data.decode("utf-8").encode(("utf-16", "utf-16-le", "utf-16-be", "utf-32")[pick(0, 3)])


def _numbers(obj: object, path: tuple = ()) -> list[tuple]:
    """Key paths of every number (not bool) in a parsed JSON value."""
    if isinstance(obj, bool):
        return []
    if isinstance(obj, int | float):
        return [path]
    items = (
        obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    )
    return [p for k, v in items for p in _numbers(v, (*path, k))]


def _json_non_finite(data: bytes, pick: Pick) -> bytes:
    """One number of one record (outside any string) becomes Infinity, -Infinity, NaN or 1e999."""
    word = ("Infinity", "-Infinity", "NaN", "1e999")[pick(0, 3)]
    try:  # one JSON document (pretty-printed over lines) or JSON lines
        lines = [json.dumps(json.loads(data))]
    except json.JSONDecodeError:
        lines = data.decode().split("\n")
    rows = [(i, json.loads(ln)) for i, ln in enumerate(lines) if ln.strip()]
    spots = [(i, obj, p) for i, obj in rows for p in _numbers(obj)]
    if not spots:  # no number anywhere: add a field that carries one
        i, obj = rows[pick(0, len(rows) - 1)]
        spots = [(i, obj, ("zz",))] if isinstance(obj, dict) else [(i, obj, ())]
    i, obj, path = spots[pick(0, len(spots) - 1)]
    if not path:
        lines[i] = word
    else:
        cur = obj
        for k in path[:-1]:
            cur = cur[k]
        cur[path[-1]] = "@@NONFINITE@@"
        lines[i] = json.dumps(obj).replace('"@@NONFINITE@@"', word)
    return "\n".join(lines).encode()


def _json_deep(data: bytes, pick: Pick) -> bytes:
    depth = pick(65, 20_000)
    lines = data.split(b"\n")
    rows = [i for i, ln in enumerate(lines) if ln.strip().startswith(b"{")]
    i = rows[pick(0, len(rows) - 1)]
    lines[i] = lines[i].replace(b"{", b'{"zz": ' + b"[" * depth + b"]" * depth + b", ", 1)
    return b"\n".join(lines)


def _json_truncate(data: bytes, pick: Pick) -> bytes:
    lines = data.split(b"\n")
    rows = [i for i, ln in enumerate(lines) if len(ln.strip()) > 2]
    i = rows[pick(0, len(rows) - 1)]
    ln = lines[i].rstrip()
    lines[i] = ln[: pick(1, len(ln) - 1)]
    return b"\n".join(lines)


def _json_not_object(data: bytes, pick: Pick) -> bytes:
    lines = data.split(b"\n")
    rows = [i for i, ln in enumerate(lines) if ln.strip()]
    lines[rows[pick(0, len(rows) - 1)]] = (b"[1, 2]", b'"text"', b"42", b"null", b"true")[
        pick(0, 4)
    ]
    return b"\n".join(lines)


def _yaml_duplicate(data: bytes, pick: Pick) -> bytes:
    keys = re.findall(rb"^([A-Za-z_]+):", data, flags=re.M)
    key = keys[pick(0, len(keys) - 1)]
    return data.rstrip(b"\n") + b"\n" + key + b": " + (b"0.5", b"x", b"[]")[pick(0, 2)] + b"\n"


def _yaml_non_finite(data: bytes, pick: Pick) -> bytes:
    word = (b".inf", b"-.inf", b".nan", b".NaN", b".Inf")[pick(0, 4)]
    return re.sub(rb"^alpha: .*$", b"alpha: " + word, data, flags=re.M)


def _yaml_syntax(data: bytes, pick: Pick) -> bytes:
    junk = (b"alpha: [0.05\n", b"  - : :\n", b"alpha: {a: 1\n", b"\tbad: tab\n", b"? [\n")[
        pick(0, 4)
    ]
    return data + junk


def _yaml_deep(data: bytes, pick: Pick) -> bytes:
    depth = pick(65, 400)
    return data + b"zz: " + b"[" * depth + b"]" * depth + b"\n"


def _csv_rows(data: bytes) -> list[list[str]]:
    return [ln.split(",") for ln in data.decode().rstrip("\n").split("\n")]


def _csv_join(rows: list[list[str]]) -> bytes:
    return ("\n".join(",".join(r) for r in rows) + "\n").encode()


def _csv_bad_cell(fmt: Format) -> Callable[[bytes, Pick], bytes]:
    def mutate(data: bytes, pick: Pick) -> bytes:
        rows = _csv_rows(data)
        numeric = [
            c
            for c, name in enumerate(rows[0])
            if name in fmt.finite or name in {"stage", "L", "eps"}
        ]
        c = numeric[pick(0, len(numeric) - 1)]
        r = pick(1, len(rows) - 1)
        rows[r][c] = ("abc", "1.2.3", "0x1g", "--1", "one")[pick(0, 4)]
        return _csv_join(rows)

    return mutate


def _csv_missing_column(fmt: Format) -> Callable[[bytes, Pick], bytes]:
    def mutate(data: bytes, pick: Pick) -> bytes:
        rows = _csv_rows(data)
        name = fmt.required[pick(0, len(fmt.required) - 1)]
        c = rows[0].index(name)
        return _csv_join([r[:c] + r[c + 1 :] for r in rows])

    return mutate


def _csv_non_finite(fmt: Format) -> Callable[[bytes, Pick], bytes]:
    def mutate(data: bytes, pick: Pick) -> bytes:
        rows = _csv_rows(data)
        cols = [c for c, name in enumerate(rows[0]) if name in fmt.finite]
        c = cols[pick(0, len(cols) - 1)]
        rows[pick(1, len(rows) - 1)][c] = ("inf", "-inf", "Infinity", "INF")[pick(0, 3)]
        return _csv_join(rows)

    return mutate


def _csv_ragged(data: bytes, pick: Pick) -> bytes:
    rows = _csv_rows(data)
    r = pick(2, len(rows) - 1) if len(rows) > 2 else 1
    rows[r] = rows[r] + ["extra"] * pick(1, 3)
    return _csv_join(rows)


def _parquet_garbage(data: bytes, pick: Pick) -> bytes:
    return (SCORES.encode(), b"PAR1" + bytes(pick(0, 64)), data[: pick(4, len(data) - 1)])[
        pick(0, 2)
    ]


def _empty(data: bytes, pick: Pick) -> bytes:
    return (b"", b"\n", b"   \n\n")[pick(0, 2)]


def mutations(fmt: Format) -> dict[str, Callable[[bytes, Pick], bytes]]:
    """Every mutation that applies to ``fmt`` (each must make the input invalid)."""
    if fmt.kind == "parquet":
        return {"not_parquet": _parquet_garbage}
    out: dict[str, Callable[[bytes, Pick], bytes]] = {"bad_byte": _bad_byte, "utf16": _utf16}
    if fmt.kind in ("json", "jsonl"):
        out |= {
            "non_finite": _json_non_finite,
            "deep": _json_deep,
            "truncated": _json_truncate,
            "not_object": _json_not_object,
        }
    if (fmt.kind == "jsonl" and fmt.name != "replay cache") or fmt.name.startswith("calibration"):
        # an empty replay cache is a valid cache that answers nothing (`replay check` exits 1)
        out["empty"] = _empty
    if fmt.kind == "yaml":
        out |= {"duplicate_key": _yaml_duplicate, "non_finite": _yaml_non_finite}
        out |= {"syntax": _yaml_syntax, "deep": _yaml_deep}
    if fmt.kind == "csv":
        out |= {"ragged": _csv_ragged, "empty": _empty}
        if fmt.required:
            out["missing_column"] = _csv_missing_column(fmt)
        if fmt.finite:
            out["non_finite"] = _csv_non_finite(fmt)
            out["bad_cell"] = _csv_bad_cell(fmt)
    return out


# ------------------------------------------------------------------------------ one trial


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    output: str
    traceback: bool
    names_file: bool
    written: list[str]

    @property
    def refused(self) -> bool:
        return self.exit_code == 2


def setup(fmt: Format, root: Path) -> Path:
    """A fresh ``root/inputs`` with the valid files of ``fmt``."""
    if root.exists():
        shutil.rmtree(root)
    inputs = root / "inputs"
    inputs.mkdir(parents=True)
    for name, data in fmt.files.items():
        (inputs / name).write_bytes(data)
    if fmt.prepare is not None:
        fmt.prepare(inputs)
    return inputs


def trial(
    fmt: Format, mutate: Callable[[bytes, Pick], bytes] | None, pick: Pick, root: Path
) -> Outcome:
    """Run ``fmt``'s command on its input mutated by ``mutate`` (None: the valid seed)."""
    inputs = setup(fmt, root)
    target = inputs / fmt.target
    if mutate is not None:
        target.write_bytes(mutate(target.read_bytes(), pick))
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    out = root / "out"
    res = CliRunner().invoke(cli, fmt.argv(inputs, out))
    text = res.output
    crashed = res.exception is not None and not isinstance(res.exception, SystemExit)
    after = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    return Outcome(
        res.exit_code,
        text,
        crashed or "Traceback" in text or res.exit_code == 3,
        Path(fmt.target).name in text,
        sorted(set(after) - set(before)),
    )


def census(variants: int = 3, seed: int = 0, root: Path | None = None) -> dict[str, int]:
    """Try ``variants`` seeded variants of every mutation of every format; count the failures."""
    import tempfile

    rng = random.Random(seed)
    base = Path(tempfile.mkdtemp(prefix="kit-census-")) if root is None else root
    counts = {"inputs": 0, "refused": 0, "tracebacks": 0, "silent_accepts": 0, "partial_outputs": 0, "unnamed": 0}  # fmt: skip
    failures: list[str] = []
    try:
        for fmt in FORMATS:
            for name, mutate in mutations(fmt).items():
                for _ in range(variants):
                    o = trial(fmt, mutate, rng.randint, base / "t")
                    counts["inputs"] += 1
                    bad = []
                    if o.traceback:
                        counts["tracebacks"] += 1
                        bad.append("traceback")
                    elif not o.refused:
                        counts["silent_accepts"] += 1
                        bad.append(f"exit {o.exit_code}")
                    if o.written:
                        counts["partial_outputs"] += 1
                        bad.append(f"wrote {o.written}")
                    if o.refused and not o.names_file:
                        counts["unnamed"] += 1
                        bad.append("file not named")
                    if bad:
                        failures.append(
                            f"{fmt.name} / {name}: {', '.join(bad)}: {o.output[-300:]!r}"
                        )
                    else:
                        counts["refused"] += 1
    finally:
        if root is None:
            shutil.rmtree(base, ignore_errors=True)
    counts["formats"] = len(FORMATS)
    census.failures = failures  # type: ignore[attr-defined]
    return counts


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    totals = census(n)
    for line in census.failures:  # type: ignore[attr-defined]
        print("FAIL", line)
    print(", ".join(f"{k}: {v}" for k, v in totals.items()))
    sys.exit(
        1
        if any(totals[k] for k in ("tracebacks", "silent_accepts", "partial_outputs", "unnamed"))
        else 0
    )
