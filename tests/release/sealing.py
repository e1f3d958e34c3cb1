"""Checks shared by the tests of sealed outputs (issue 20, item 4): a folder or a single file
written by a command is sealed completely, `kit verify receipts` passes on it, and a single
flipped byte anywhere in any sealed file is caught and named."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kit.cli import cli
from kit.core import receipts


def positions(n: int, spread: int = 25) -> list[int]:
    """First, last and ``spread`` evenly spaced byte positions of an ``n``-byte file."""
    return sorted({0, n - 1, *range(0, n, max(1, n // spread))})


def verify(path: Path) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["verify", "receipts", str(path)])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    return res.exit_code, res.output


def _flip(path: Path, at: int, data: bytes) -> None:
    path.write_bytes(data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :])


def check_sealed_folder(folder: Path, kind: str, spread: int = 3) -> set[str]:
    """``folder`` is sealed whole by ``receipts/<kind>.receipt.json`` (and sidecars of files kept
    apart): verify passes, the receipts seal every file in it, and a byte flipped in any file is named (exit 1). Files are restored
    afterwards. Returns the sealed paths."""
    code, out = verify(folder)
    assert code == 0 and "chain intact" in out, out
    art = receipts.read_receipt(folder / receipts.RECEIPTS_DIR / f"{kind}{receipts.SUFFIX}")
    assert art["kind"] == kind
    files = {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.endswith(receipts.SUFFIX)
    }
    apart = {  # files sealed in their own sidecar (a card's build.json: machine readings)
        p.relative_to(folder).with_name(p.name[: -len(receipts.SUFFIX)]).as_posix()
        for p in folder.rglob(f"*{receipts.SUFFIX}")
        if p.parent.name != receipts.RECEIPTS_DIR
    }
    assert files and set(art["body"]["outputs"]) == files - apart
    for rel in sorted(files):
        path = folder / rel
        data = path.read_bytes()
        try:
            for at in positions(len(data), spread):
                _flip(path, at, data)
                found = [(f.kind, f.path) for f in receipts.verify_outputs(folder).findings]
                assert found == [("changed", rel)], (rel, at, found)
            code, out = verify(folder)
            assert code == 1 and f"changed  {rel}" in out, out
        finally:
            path.write_bytes(data)
    assert verify(folder)[0] == 0
    return files


def check_sealed_file(path: Path, kind: str, names: set[str], spread: int = 25) -> None:
    """``path`` and its companions (``names``: every file the sidecar must seal) are sealed in
    ``FILE.receipt.json``; verify passes on the file and on its folder; a flipped byte in any of
    them is named (exit 1). Files are restored afterwards."""
    side = receipts.sidecar(path)
    art = receipts.read_receipt(side)
    assert art["kind"] == kind and set(art["body"]["outputs"]) == names
    code, out = verify(path)
    assert code == 0 and "1 verified" in out, out
    for name in sorted(names):
        victim = path.with_name(name)
        data = victim.read_bytes()
        try:
            for at in positions(len(data), spread):
                _flip(victim, at, data)
                found = [(f.kind, f.path) for f in receipts.verify_file(path).findings]
                assert found == [("changed", name)], (name, at, found)
            code, out = verify(path)
            assert code == 1 and "changed" in out and name in out, out
        finally:
            victim.write_bytes(data)
    assert verify(path)[0] == 0
