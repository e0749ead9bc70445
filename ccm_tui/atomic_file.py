"""Whole-file replacement that a crash cannot tear: temporary file, fsync, rename, fsync the directory.

The bottom layer: the configuration file and every session file (through
:mod:`ccm_tui.core.storage.durable`) are written with it.
"""

from __future__ import annotations

import os
from pathlib import Path


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    """Replace ``path`` with ``text`` atomically (temp file + fsync + rename).

    ``durable=False`` skips the fsyncs, for derived files (caches) that can be rebuilt."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _replace(path, text.encode("utf-8"), durable=durable, mode=None)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically and durably (temp file + fsync + rename + fsync of
    the directory), keeping the file's permission bits."""
    try:
        mode: int | None = os.stat(path).st_mode & 0o777
    except OSError:
        mode = None
    _replace(path, data, durable=True, mode=mode)


def _replace(path: Path, data: bytes, *, durable: bool, mode: int | None) -> None:
    """The one replacement: ``data`` into a temporary file beside ``path`` (with ``mode`` when given),
    fsynced when ``durable``, renamed over ``path``, then the directory fsynced."""
    import tempfile  # (lazily: not on the TUI's start-up path)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if durable:
        fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
