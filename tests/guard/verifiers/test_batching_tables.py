"""Issue 38: the frozen tables that read verifier scores stay within their tolerances under the
new batching, and on each table's own inputs the scores stay those of the old batching
(tests/guard/old_batching.py): int8 byte-identical, fp32 within 1e-6.

Slow (minutes: the reproductions are ``slow: true`` themselves). The tables of minilm-bi are
rebuilt and compared with reproduce/expected exactly as `kit verify board` does; the
cross-encoder table guard_shift_example needs the trained minilm-nli (make reproduce), so where
it is not built its inputs are scored by a stand-in of the same size and rule instead
(bench/standin.py: the kernels' sums, not the weights, are what batching can change) and the
table itself is not compared.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kit.release import reproduce as rp
from tests.guard.old_batching import old_scores

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]


class Recorder:
    """Every (spec, variant) the reproduction loads, and every pair it scores with the score
    the verifier gave (the first one, as a score store would keep)."""

    def __init__(self) -> None:
        self.scored: dict[tuple[str, str], dict[tuple[str, str], float]] = {}

    def wrap(self, load: Any) -> Any:
        def loader(spec: Any, variant: str = "fp32", *a: Any, **kw: Any) -> Any:
            v = load(spec, variant, *a, **kw)
            seen = self.scored.setdefault((str(spec), variant), {})
            score = v.score

            def recording(claims: list[str], passages: list[str]) -> np.ndarray:
                s = score(claims, passages)
                for c, p, x in zip(claims, passages, s, strict=True):
                    seen.setdefault((c, p), float(x))
                return s

            v.score = recording
            return v

        return loader


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorder]:
    import kit.guard.verifiers.load as kv

    rec = Recorder()
    monkeypatch.setattr(kv, "load_verifier", rec.wrap(kv.load_verifier))
    yield rec


def _against_old(rec: Recorder) -> dict[str, float]:
    """Max |new - old| per (verifier, variant) on every pair the reproduction scored."""
    from kit.guard.verifiers.load import load_verifier

    out = {}
    for (spec, variant), pairs in rec.scored.items():
        claims = [c for c, _ in pairs]
        passages = [p for _, p in pairs]
        old = old_scores(load_verifier(spec, variant), claims, passages)
        new = np.array(list(pairs.values()))
        diff = float(np.max(np.abs(new - old))) if len(new) else 0.0
        out[f"{Path(spec).name} {variant} ({len(new)} pairs)"] = diff
        if variant == "int8":
            assert np.array_equal(new, old), (spec, variant, diff)
        else:
            assert diff <= 1e-6, (spec, variant, diff)
    return out


@pytest.mark.parametrize(
    "name", ["guard_pubmedqa", "guard_pubmedqa_fp32_vs_int8", "grade_planted_audit_minilm"]
)
def test_bi_encoder_tables_within_tolerance(
    name: str, recorder: Recorder, registry_raw: Path, verifier_dir: Path, tmp_path: Path
) -> None:
    decl = rp.select(rp.load_declarations(), (name,))[0]
    rp.run(decl, registry_raw, tmp_path, "0" * 64, {"verifier": verifier_dir})
    for cmp in rp.verify([decl], tmp_path):
        assert not cmp.diffs, cmp.diffs[:5]
    diffs = _against_old(recorder)
    print(f"{name}: max |new - old| {diffs}")


def test_cross_encoder_table_inputs(
    recorder: Recorder, registry_raw: Path, verifier_dir: Path, tmp_path: Path
) -> None:
    from kit.guard.verifiers.load import BUILTIN_VERIFIERS

    decl = rp.select(rp.load_declarations(), ("guard_shift_example",))[0]
    card = BUILTIN_VERIFIERS["minilm-nli"]
    trained = (card / "card.json").is_file()
    if not trained:
        sys.path.insert(0, str(REPO / "bench"))
        from standin import build_standin

        card = build_standin(tmp_path / "standin", bi_dir=verifier_dir, int8=False)
    if trained:
        rp.run(decl, registry_raw, tmp_path / "tables", "0" * 64, {"verifier_nli": card})
        for cmp in rp.verify([decl], tmp_path / "tables"):
            assert not cmp.diffs, cmp.diffs[:5]
    else:
        tables = rp.resolve(decl.function)(registry_raw, verifier_nli_dir=card)
        assert set(decl.tables) <= set(tables)
    diffs = _against_old(recorder)
    print(f"guard_shift_example ({'minilm-nli' if trained else 'stand-in'}): {diffs}")
