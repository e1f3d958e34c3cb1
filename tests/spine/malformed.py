"""Malformed variants of every input format the kit reads, and the commands that read them.

Shared by the hypothesis suite (tests/spine/test_malformed_inputs.py) and the census
(``python -m tests.spine.malformed``): each :class:`Format` is a valid seed file plus the command
line that reads it; each mutation turns the seed into an input that must be refused (exit 2,
the message naming the file, no traceback, nothing written). Mutations draw their choices from
``pick(lo, hi)`` so hypothesis and a seeded ``random.Random`` drive them alike.
"""

from __future__ import annotations

import functools
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
    kind: str  # csv | parquet | json | jsonl | yaml | xml | zip
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


# a labelled pair table (guard score / calibrate) and a scores table (guard evaluate)
PAIRS = "pair_id,claim,passage,label\n" + "".join(
    f"p{i},treatment {i} lowers risk,Treatment {i} {('lowered', 'did not change', 'raised')[i % 3]} "
    f"the risk in the trial.,{('SUPPORT', 'NEI', 'CONTRADICT')[i % 3]}\n"
    for i in range(24)
)  # fmt: skip
EVAL_SCORES = "pair_id,label,score\n" + "".join(
    f"p{i},{('SUPPORT', 'NEI', 'CONTRADICT')[i % 3]},{(i * 37 % 100) / 100}\n" for i in range(30)
)  # fmt: skip
# documents of a corpus table (DOIs as ids) and lm-eval samples (lm-eval's documented fields)
DOCS = "id,t,abs,pm\n10.1234/alpha,Alpha trial,alpha text,555\n10.1234/beta,Beta,beta text,556\n"
LM_EVAL = "".join(
    json.dumps({
        "doc_id": i, "doc": {"QUESTION": f"q{i}"}, "target": "yes",
        "arguments": {"gen_args_0": {"arg_0": f"prompt {i}", "arg_1": {"until": ["\n"]}}},
        "resps": [[a]], "filtered_resps": [a], "filter": "none", "metrics": ["exact_match"],
        "doc_hash": "a" * 64, "prompt_hash": "b" * 64, "target_hash": "c" * 64, "exact_match": m,
    }) + "\n"
    for i, (a, m) in enumerate([("yes. Aspirin lowers risk (PMID: 123).", 1.0), ("no", 0.0)])
)  # fmt: skip
LM_EVAL_NAME = "samples_pubmedqa_2026-01-02T03-04-05.678901.jsonl"


def _jsonl(text: str) -> bytes:
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    return "".join(json.dumps(r) + "\n" for r in frame.to_dict("records")).encode()


@functools.cache
def _tiny_verifier() -> Path:
    """A tiny random-weight cross-encoder card (tests/guard/tiny_model.py), built once."""
    import tempfile

    from tests.guard.tiny_model import build_tiny_cross_encoder

    return build_tiny_cross_encoder(Path(tempfile.mkdtemp(prefix="kit-census-tiny-")) / "tiny")


def _with_tiny(inputs: Path) -> None:
    shutil.copytree(_tiny_verifier(), inputs / "tiny")


@functools.cache
def _release_template() -> Path:
    """A small release tree (tests/release/_release_tree.py) with a built manifest, once."""
    import tempfile

    from tests.release._release_tree import RAW_FILES, make_tree

    tree = make_tree(Path(tempfile.mkdtemp(prefix="kit-census-release-")) / "tree", RAW_FILES)
    res = CliRunner().invoke(
        cli, ["release", "build", "--root", str(tree), "--sources", str(tree / "sources.yaml")]
    )
    assert res.exit_code == 0, res.output
    return tree


def _release(inputs: Path) -> None:
    shutil.copytree(_release_template(), inputs / "tree", symlinks=True)


@functools.cache
def _medline() -> bytes:
    """A SYNTHETIC MEDLINE baseline file (kit.corpus.synthetic), three records."""
    import tempfile

    from kit.corpus.synthetic import SynthRecord, write_medline

    path = Path(tempfile.mkdtemp(prefix="kit-census-medline-")) / "pubmed26n0001.xml"
    recs = [SynthRecord(p, f"title {p}", (("", f"text of {p}"),)) for p in (100, 101, 102)]
    write_medline(path, recs)
    return path.read_bytes()


@functools.cache
def _inspect_logs() -> dict[str, bytes]:
    """An inspect_ai log written by inspect_ai itself (mockllm, offline), as .eval and .json."""
    import tempfile
    from unittest import mock

    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    out = Path(tempfile.mkdtemp(prefix="kit-census-inspect-"))
    answers = ["Aspirin lowers risk (PMID: 123).", "No effect was seen [1]."]
    task = Task(
        dataset=[Sample(input=f"q{i}", target="x", id=f"t{i}") for i in range(2)],
        solver=[generate()],
        scorer=includes(),
    )
    outputs = [ModelOutput.from_content("mockllm/model", a) for a in answers]
    with mock.patch("inspect_ai.model._model.count_text_tokens", return_value=7):  # offline
        [log] = inspect_eval(
            task, model=get_model("mockllm/model", custom_outputs=outputs),
            log_dir=str(out), log_format="eval", display="none", max_samples=1,
        )  # fmt: skip
    eval_path = Path(log.location)
    json_path = out / "log.json"
    write_eval_log(read_eval_log(str(eval_path)), str(json_path), format="json")
    return {"eval": eval_path.read_bytes(), "json": json_path.read_bytes()}


def _inspect(kind: str) -> Callable[[Path], None]:
    def prepare(inputs: Path) -> None:
        (inputs / f"log.{kind}").write_bytes(_inspect_logs()[kind])

    return prepare


def _corpus(table: str, *extra: str) -> Callable[[Path, Path], list[str]]:
    return lambda i, o: [
        "corpus", "build", "c", "--table", str(i / table), "--map", "id=id,title=t,text=abs,pmid=pm",
        "--id-scheme", "DOI", "--licence", "CC-BY-4.0", "--corpus-root", str(o), "--quiet", *extra,
    ]  # fmt: skip


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
        "anchor judged", "csv", "judged.csv",
        {"judged.csv": _ex("anchor", "judged.csv"), "gold.csv": _ex("anchor", "gold.csv")},
        lambda i, o: ["anchor", str(i / "judged.csv"), "--gold", str(i / "gold.csv"), "--out", str(o / "a.json")],
        required=("item_id", "judge"), finite=("judge",),
    ),
    Format(
        "anchor gold", "csv", "gold.csv",
        {"judged.csv": _ex("anchor", "judged.csv"), "gold.csv": _ex("anchor", "gold.csv")},
        lambda i, o: ["anchor", str(i / "judged.csv"), "--gold", str(i / "gold.csv"), "--out", str(o / "a.json")],
        required=("item_id", "gold"), finite=("gold",),
    ),
    Format(
        "receipt", "json", "sealed/b.csv.receipt.json", {},
        lambda i, o: ["verify", "receipts", str(i / "sealed")], prepare=_seal_folder,
    ),
    Format(
        "release manifest", "json", "tree/release/manifest.json", {},
        lambda i, o: ["release", "verify", "--root", str(i / "tree"), "--sources", str(i / "tree" / "sources.yaml")],
        prepare=_release,
    ),
    Format(
        "guard score pairs.csv", "csv", "pairs.csv", {"pairs.csv": PAIRS.encode()},
        lambda i, o: ["guard", "score", str(i / "pairs.csv"), "--verifier", str(i / "tiny"), "--no-cache", "--out", str(o / "s.csv")],
        required=("claim", "passage"), prepare=_with_tiny,
    ),
    Format(
        "guard score pairs.jsonl", "jsonl", "pairs.jsonl", {"pairs.jsonl": _jsonl(PAIRS)},
        lambda i, o: ["guard", "score", str(i / "pairs.jsonl"), "--verifier", str(i / "tiny"), "--no-cache", "--out", str(o / "s.csv")],
        prepare=_with_tiny,
    ),
    Format(
        "guard score pairs.parquet", "parquet", "pairs.parquet", {"pairs.parquet": _parquet(PAIRS)},
        lambda i, o: ["guard", "score", str(i / "pairs.parquet"), "--verifier", str(i / "tiny"), "--no-cache", "--out", str(o / "s.csv")],
        prepare=_with_tiny,
    ),
    Format(
        "guard calibrate pairs", "csv", "labelled.csv", {"labelled.csv": PAIRS.encode()},
        lambda i, o: ["guard", "calibrate", str(i / "labelled.csv"), "--verifier", str(i / "tiny"), "--alpha", "0.3", "--out", str(o / "cal.json")],
        required=("claim", "passage", "label"), prepare=_with_tiny,
    ),
    Format(
        "guard evaluate scores", "csv", "scores.csv", {"scores.csv": EVAL_SCORES.encode()},
        lambda i, o: ["guard", "evaluate", str(i / "scores.csv"), "--n-boot", "20", "--out", str(o / "ev")],
        required=("label", "score"), finite=("score",),
    ),
    Format(
        "guard evaluate scores.jsonl", "jsonl", "scores.jsonl", {"scores.jsonl": _jsonl(EVAL_SCORES)},
        lambda i, o: ["guard", "evaluate", str(i / "scores.jsonl"), "--n-boot", "20", "--out", str(o / "ev")],
    ),
    Format(
        "corpus table csv", "csv", "docs.csv", {"docs.csv": DOCS.encode()}, _corpus("docs.csv"),
        required=("id",),
    ),
    Format("corpus table jsonl", "jsonl", "docs.jsonl", {"docs.jsonl": _jsonl(DOCS)}, _corpus("docs.jsonl")),
    Format("corpus table parquet", "parquet", "docs.parquet", {"docs.parquet": _parquet(DOCS)}, _corpus("docs.parquet")),
    Format(
        "corpus medline xml", "xml", "pubmed26n0001.xml", {},
        lambda i, o: ["corpus", "build", "m", "--medline", str(i / "pubmed26n0001.xml"), "--licence", "synthetic", "--corpus-root", str(o), "--quiet"],
        prepare=lambda i: (i / "pubmed26n0001.xml").write_bytes(_medline()),
    ),
    Format(
        "lm-eval samples", "jsonl", LM_EVAL_NAME, {LM_EVAL_NAME: LM_EVAL.encode()},
        lambda i, o: ["import", "lm-eval", str(i / LM_EVAL_NAME), "--model", "m", "--out", str(o / "runs.jsonl")],
    ),
    Format(
        "inspect-ai .json log", "json", "log.json", {},
        lambda i, o: ["import", "inspect-ai", str(i / "log.json"), "--out", str(o / "runs.jsonl")],
        prepare=_inspect("json"),
    ),
    Format(
        "inspect-ai .eval log", "zip", "log.eval", {},
        lambda i, o: ["import", "inspect-ai", str(i / "log.eval"), "--out", str(o / "runs.jsonl")],
        prepare=_inspect("eval"),
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
    """A record cut short: one JSON line, or a pretty-printed document cut before its closing
    brace (cutting one line of it may leave valid JSON: a whole member, or digits, dropped)."""
    if data.strip().count(b"\n") and data.lstrip().startswith(b"{"):
        try:
            json.loads(data)
        except json.JSONDecodeError:
            pass
        else:
            return data[: pick(1, data.rfind(b"}") - 1)]
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


def _xml_truncate(data: bytes, pick: Pick) -> bytes:
    """The document cut inside its root element (the closing tags lost)."""
    end = data.rfind(b"</")
    return data[: pick(max(1, end // 2), max(1, end - 1))]


def _xml_garbage(data: bytes, pick: Pick) -> bytes:
    junk = (
        b"<<not xml>>",
        b"<PubmedArticleSet><a></b></PubmedArticleSet>",
        b'{"json": 1}',
        b"PAR1",
    )
    return junk[pick(0, 3)] + b"\n"


def _zip_corrupt(data: bytes, pick: Pick) -> bytes:
    """One byte of a sample's compressed data changed (its CRC or deflate stream breaks).

    A byte inserted just anywhere is no sure corruption: zip readers accept leading junk and
    never read some regions; a changed byte of a member the importer reads always is one.
    """
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = [i for i in zf.infolist() if i.filename.startswith("samples/") and i.compress_size]
    info = infos[pick(0, len(infos) - 1)]
    name_len, extra_len = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little"), int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")  # fmt: skip
    start = info.header_offset + 30 + name_len + extra_len
    at = start + pick(0, info.compress_size - 1)
    return data[:at] + bytes([data[at] ^ (1 << pick(0, 7))]) + data[at + 1 :]


def _zip_truncate(data: bytes, pick: Pick) -> bytes:
    """A zip archive cut short (its central directory lost) or garbage with a zip name."""
    return (data[: pick(4, len(data) - 23)], b"PK\x03\x04" + bytes(pick(0, 64)))[pick(0, 1)]


def _empty(data: bytes, pick: Pick) -> bytes:
    return (b"", b"\n", b"   \n\n")[pick(0, 2)]


def mutations(fmt: Format) -> dict[str, Callable[[bytes, Pick], bytes]]:
    """Every mutation that applies to ``fmt`` (each must make the input invalid)."""
    if fmt.kind == "parquet":
        return {"not_parquet": _parquet_garbage}
    if fmt.kind == "zip":
        return {"corrupt_member": _zip_corrupt, "truncated": _zip_truncate, "empty": _empty}
    if fmt.kind == "xml":
        return {
            "bad_byte": _bad_byte,
            "truncated": _xml_truncate,
            "garbage": _xml_garbage,
            "empty": _empty,
        }
    out: dict[str, Callable[[bytes, Pick], bytes]] = {"bad_byte": _bad_byte, "utf16": _utf16}
    if fmt.kind in ("json", "jsonl"):
        out |= {
            "non_finite": _json_non_finite,
            "deep": _json_deep,
            "truncated": _json_truncate,
            "not_object": _json_not_object,
        }
    if fmt.name.startswith("inspect-ai"):
        # inspect_ai writes NaN/Infinity itself (ser_json_inf_nan="constants": a metric's stderr
        # on one sample is NaN), so they are valid in its logs; what the importer writes is
        # checked by the v2 reader and json.dumps(allow_nan=False) (kit.runs.importers.common)
        del out["non_finite"]
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
