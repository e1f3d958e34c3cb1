"""Atomic writes: a file appears whole or not at all (temp file in the same folder, then rename).

Files are created with mode ``0666 & ~umask`` and folders ``0777 & ~umask`` (what ``open`` and
``mkdir`` give), not the private 0600/0700 of ``mkstemp``/``mkdtemp``. A set of files written by
one command goes through :func:`staged_dir`: staged in a temp folder beside the target and
swapped in only when all are written, so a refused or killed run leaves the old set intact.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give a new file (``0666 & ~umask``)."""
    return 0o666 & ~_umask()


def dir_mode() -> int:
    """The mode ``mkdir`` would give a new folder (``0777 & ~umask``)."""
    return 0o777 & ~_umask()


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; create parent folders. Returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return target


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write UTF-8 text atomically, with ``\\n`` line endings on every platform."""
    return write_bytes(path, text.encode("utf-8"))


@contextlib.contextmanager
def staged_file(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temp path beside ``path``; rename it into place only if the block succeeds.

    For writers that need a filename (matplotlib, DuckDB, onnx.save).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent)
    os.close(fd)
    os.unlink(tmp)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            if tmp_path.is_dir():
                shutil.rmtree(tmp_path)
            else:
                tmp_path.unlink()


@contextlib.contextmanager
def staged_dir(path: str | os.PathLike[str], keep: bool = False) -> Iterator[Path]:
    """Yield a temp folder beside ``path``; swap it into place only on success.

    A failed block leaves ``path`` exactly as it was. ``keep``: the temp folder starts as a copy
    of ``path``'s current files (for a command that rewrites part of a folder, e.g. some of the
    reproductions), so the swap replaces what the block rewrote and keeps the rest.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    tmp.chmod(dir_mode())
    try:
        if keep and target.is_dir():
            shutil.copytree(target, tmp, symlinks=True, dirs_exist_ok=True)
        yield tmp
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            if old.exists():
                shutil.rmtree(old)
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old)
        else:
            os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
