"""Durable file primitives for a session directory.

Two kinds of writes exist in a session and both live here:

* appends to JSONL logs (raw logs and the event log): one complete line per
  record, flushed and fsynced before the caller reports success;
* whole-file replacements (manifest, state snapshots): written to a temporary
  file in the same directory, fsynced, then renamed over the target, so a
  reader sees either the old or the new file, never half of one.

Readers are tolerant: a torn last line (a crash mid-append) is reported, not
fatal; a broken line elsewhere is reported with its line number.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...atomic_file import atomic_write_text
from ...errors import CcmError
from .long_lines import CHUNK, CHUNK_MAX, lines_backwards, lines_forward, read_record


class StoreError(CcmError, RuntimeError):
    """A session file could not be read or written; the message names the file."""


NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def symlink_refused(path: Path) -> StoreError:
    return StoreError(
        f"{path} is a symbolic link; a session's files must be regular files inside it "
        "(refusing to follow it: move the real file into the session)"
    )


DISK_FULL_ERRNOS = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
_DISK_FULL_WORDS = ("database or disk is full", "no space left on device", "disk quota exceeded", "the disk is full")
LOW_SPACE_BYTES = 64 * 1024  # less than this free: a failed write was the disk being full


def no_space_left(directory: Path) -> bool:
    """The file system of ``directory`` is (nearly) full — for errors that do not say so (SQLite's
    "disk I/O error")."""
    try:
        st = os.statvfs(directory)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < LOW_SPACE_BYTES


def disk_full(exc: BaseException) -> str | None:
    """The plain message for a full disk (``ENOSPC``, a quota, SQLite's "database or disk is full"),
    or None when ``exc`` is something else."""
    seen: BaseException | None = exc
    for _ in range(5):  # the error itself, or what caused it
        if seen is None:
            break
        if (isinstance(seen, OSError) and seen.errno in DISK_FULL_ERRNOS) or any(
            words in str(seen).lower() for words in _DISK_FULL_WORDS
        ):
            if str(seen).startswith("the disk is full"):
                return str(seen)  # said plainly already
            where = getattr(seen, "filename", None)
            return f"the disk is full{f' (writing {where})' if where else ''}: free some space and try again"
        seen = seen.__cause__ or seen.__context__
    return None


def not_regular(path: Path) -> StoreError:
    return StoreError(
        f"{path} is not a regular file (a FIFO, a device or a directory); a session's files must be "
        "regular files: remove it (or move the real file into the session)"
    )


def open_nofollow(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` that never follows a symbolic link at ``path`` (a session file planted as a
    link would make the app write outside the session) and refuses anything but a regular file
    (a FIFO would hang every command: it is opened without blocking, then checked)."""
    try:
        fd = os.open(path, flags | NOFOLLOW | os.O_NONBLOCK, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise symlink_refused(path) from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO without a reader, a directory
            raise not_regular(path) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise not_regular(path)
    os.set_blocking(fd, True)
    return fd


def require_regular(path: Path) -> None:
    """Refuse ``path`` unless it is missing or a regular file (before a library opens it by name)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise symlink_refused(path)
    if not stat.S_ISREG(st.st_mode):
        raise not_regular(path)


def read_bytes(path: Path) -> bytes:
    """A session file's bytes, refusing a symbolic link (FileNotFoundError when missing)."""
    with os.fdopen(open_nofollow(path, os.O_RDONLY), "rb") as fh:
        return fh.read()


def json_text(data: Any) -> str:
    """The text :func:`atomic_write_json` writes for ``data``."""
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def atomic_write_json(path: Path, data: Any, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` as JSON; ``durable=False`` for snapshots the record can rebuild."""
    atomic_write_text(path, json_text(data), durable=durable)


def encode_line(record: dict[str, Any]) -> str:
    """One JSONL line. Control characters are escaped by json; newlines never split a record."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def append_jsonl(path: Path, records: Iterable[dict[str, Any]], *, sync: bool = True) -> int:
    """Append records as complete lines; flush and fsync. Returns bytes written.

    If the file ends with a torn line (no trailing newline, left by a crash), a
    newline is written first so the new record starts on a line of its own and
    the torn fragment stays recognisable as broken rather than merging with it.
    If the write or the fsync fails (disk full, I/O error), the file is cut back to
    its size before the append, so no partial record is left behind (best effort:
    recovery sets aside whatever a failed cut leaves).
    """
    records_list = list(records)
    data = "".join(encode_line(r) for r in records_list)
    if not data:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = open_nofollow(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        prefix = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
        try:
            encoded = data.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates (undecodable input): JSON escapes keep the file UTF-8
            encoded = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records_list).encode("ascii")
        payload = prefix + encoded
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            if sync:
                os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, size)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)
    return len(payload)


@dataclass
class JsonlRead:
    """Result of reading a JSONL file: the good records and what was skipped."""

    records: list[dict[str, Any]] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)  # 1-based line numbers
    torn_tail: bool = False  # last line lacked its newline and did not parse
    numbers: list[int] = field(default_factory=list)  # each record's file line (1-based), as records
    lines: int = 0  # the file's lines: every one, blank, unreadable and a last unended one included

    def numbered(self) -> list[tuple[int, dict[str, Any]]]:
        """(file line, record) pairs: what :mod:`..session.withdrawn` judges lines by."""
        return list(zip(self.numbers, self.records))


def _parse_lines(raw: bytes, first_lineno: int = 1) -> JsonlRead:
    out = JsonlRead()
    if not raw:
        return out
    lines = raw.split(b"\n")
    complete_tail = raw.endswith(b"\n")
    if complete_tail:
        lines = lines[:-1]
    last = len(lines) - 1
    out.lines = len(lines)
    for i, line in enumerate(lines):
        lineno = first_lineno + i
        if not line.strip():
            continue
        try:
            rec = json.loads(line.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):  # not JSON, or nested too deep to read: a bad line
            rec = None
        if not isinstance(rec, dict):
            if i == last and not complete_tail:
                out.torn_tail = True
            else:
                out.bad_lines.append(lineno)
            continue
        out.records.append(rec)
        out.numbers.append(lineno)
    return out


MESSAGE_ROLES = ("user", "assistant", "system", "tool")


def is_message(record: dict[str, Any]) -> bool:
    """A log record the context can use: a known role and text content (``None`` only for an
    assistant message that carries tool calls). Anything else is a valid JSON line of the wrong
    shape (hand-edited, another tool's), skipped like an unreadable line."""
    role, content = record.get("role"), record.get("content")
    if role not in MESSAGE_ROLES:
        return False
    if content is None:
        return role == "assistant" and isinstance(record.get("tool_calls"), list)
    return isinstance(content, str)


def read_jsonl(path: Path, *, line_cap: int | None = None) -> JsonlRead:
    """Read a whole JSONL file tolerantly. A missing file reads as empty. With ``line_cap`` (a reader
    that shows lines) a longer line is parsed from its head (:mod:`.long_lines`)."""
    if line_cap is not None:
        return _read_capped(path, line_cap)
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        return JsonlRead()
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return _parse_lines(raw)


def _read_capped(path: Path, line_cap: int) -> JsonlRead:
    out = JsonlRead()
    try:
        fh = os.fdopen(open_nofollow(path, os.O_RDONLY), "rb")
    except FileNotFoundError:
        return out
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with fh:
        for number, line in enumerate(lines_forward(fh), 1):
            if line.size:
                record = read_record(fh, line, line_cap)
                if isinstance(record, dict):
                    out.records.append(record)
                elif line.complete:
                    out.bad_lines.append(number)
                else:
                    out.torn_tail = True
    return out


def read_jsonl_tail(
    path: Path, max_records: int, *, chunk: int = CHUNK, line_cap: int | None = None
) -> list[dict[str, Any]]:
    """The last ``max_records`` good records of a JSONL file, reading from the end.

    Cost depends on the size of the tail, not of the file, so a session with a
    million ambient lines starts as fast as an empty one; each byte of the tail is
    scanned once (a 60 MB line costs a scan of 60 MB, not of its square). With
    ``line_cap`` (readers that show lines) a longer line is parsed from its head
    (see :mod:`.long_lines`), so it costs a scan for its newline and ``line_cap`` bytes.
    A bad line is skipped; at most ``2 * max_records + 16`` lines are looked at.
    """
    return [record for _after, record in read_jsonl_tail_numbered(path, max_records, chunk=chunk, line_cap=line_cap)]


def read_jsonl_tail_numbered(
    path: Path, max_records: int, *, chunk: int = CHUNK, line_cap: int | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """:func:`read_jsonl_tail`, each record with the number of file lines after it (0: the last
    line), blank ones included: line numbers counted from the end, without reading the file's head
    (the caller who knows the line count makes them 1-based file lines)."""
    if max_records <= 0:
        return []
    try:
        fh = os.fdopen(open_nofollow(path, os.O_RDONLY), "rb")
    except FileNotFoundError:
        return []
    out: list[tuple[int, dict[str, Any]]] = []
    with fh:
        size = fh.seek(0, os.SEEK_END)
        after, later_start = 0, None
        for looked, line in enumerate(lines_backwards(fh, chunk=chunk)):
            if len(out) >= max_records or looked >= 2 * max_records + 16:
                break
            # the lines between this one and the next non-blank one (or the end) are blank ones
            gap = (size if later_start is None else later_start) - line.end - 1
            after += max(0, gap) + (later_start is not None)
            later_start = line.start
            record = read_record(fh, line, line_cap)
            if isinstance(record, dict):
                out.append((after, record))
    out.reverse()
    return out


def count_lines(path: Path) -> int:
    """The lines of a file as readers number them: each newline ends one, and bytes after the last
    newline are one more (a missing file has none)."""
    try:
        fh = os.fdopen(open_nofollow(path, os.O_RDONLY), "rb")
    except FileNotFoundError:
        return 0
    lines, last = 0, b"\n"
    with fh:
        while data := fh.read(CHUNK_MAX):
            lines += data.count(b"\n")
            last = data[-1:]
    return lines + (last != b"\n")


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def set_aside(path: Path) -> Path:
    """Rename a broken file to ``<name>.corrupt-<timestamp>`` (never overwriting one) and return it."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    os.replace(path, target)
    return target


def keep_copy(path: Path, label: str = "corrupt") -> Path:
    """Copy a file to ``<name>.<label>-<timestamp>`` (never overwriting one), durably, and return
    the copy. Unlike :func:`set_aside` the original stays in place, so a crash at any moment leaves
    the file where readers look for it."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    data = read_bytes(path)
    n = 1
    target = path.with_name(f"{path.name}.{label}-{stamp}")
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
            break
        except FileExistsError:
            n += 1
            target = path.with_name(f"{path.name}.{label}-{stamp}-{n}")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return target


def set_torn_tail_aside(path: Path) -> str | None:
    """A crash mid-append leaves a last line without its newline: a record that was never
    acknowledged. Keep its bytes in ``<file>.torn-<ts>`` and cut the file back to its last
    complete line, so the log holds only whole records. Returns the name of the kept file."""
    try:
        with os.fdopen(open_nofollow(path, os.O_RDWR), "r+b") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return None
            fh.seek(max(0, size - 65536))
            tail = fh.read()
            if tail.endswith(b"\n"):
                return None
            cut = tail.rfind(b"\n")
            if cut < 0 and size > len(tail):
                return None  # a single enormous torn line: leave it, readers tolerate it
            keep_to = size - len(tail) + cut + 1
            fragment = tail[cut + 1 :]
            aside = path.with_name(f"{path.name}.torn-{time.strftime('%Y%m%dT%H%M%S')}")
            with os.fdopen(open_nofollow(aside, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab") as out:
                out.write(fragment)
                out.flush()
                os.fsync(out.fileno())
            fh.truncate(keep_to)
            fh.flush()
            os.fsync(fh.fileno())
            return aside.name
    except OSError:
        return None
