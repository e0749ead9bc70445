"""The bytes of ``manifest.yaml``: one standard YAML dump per entry, cut apart again to read.

The file is what ``yaml.dump({"efforts": entries}, sort_keys=False, allow_unicode=True)`` writes, under
a comment saying up to where it includes the journal (see :mod:`.effort_list`)::

    # ccm-tui journal: events.jsonl@48213
    efforts:
    - id: auth-bug
      status: concluded
      ...

Each entry is dumped alone (:func:`dump_block`), so a rewrite after one change dumps one block and
copies the others' bytes (:func:`write_pieces`). Every entry starts with ``- `` at column 0 (its other
lines are indented), so the file cuts back into blocks (:func:`cut`) and each is read alone: a hand
edit is taken in by reading only the blocks whose bytes changed. Files of earlier versions (blocks of
``key: <JSON>`` lines under ``  - ``) cut the same way; anything else is read whole by PyYAML.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ...atomic_file import fsync_dir
from ..storage.durable import open_nofollow, read_bytes
from .effort import Effort, ManifestError, effort_from_dict

try:  # the C loader and dumper are ~10x faster
    from yaml import CSafeDumper as _Dumper
    from yaml import CSafeLoader as _Loader

    FAST_YAML = True
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeDumper as _Dumper  # type: ignore[assignment]
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

    FAST_YAML = False

MARK_RE = re.compile(rb"\A# ccm-tui journal: events\.jsonl@([0-9]{1,18})\n")
HEAD = b"efforts:\n"
EMPTY = b"efforts: []\n"
_HUGE_NUMBER = re.compile(r"\d{4000,}")  # past Python's int conversion limit (4300 digits)
_ITEM = re.compile(rb"\n(?=- )")  # where a block starts (column 0: the file's own shape)
_OLD_ITEM = re.compile(rb"\n(?=  - )")  # ... in the shape written before issue 32


def dump_block(entry: dict[str, Any]) -> bytes:
    """One entry as the standard dump writes it inside the file (one key per line)."""
    text = yaml.dump([_clean(entry)], Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=2**20)
    return text.encode("utf-8")


def head_bytes(mark: int | None, empty: bool) -> bytes:
    comment = f"# ccm-tui journal: events.jsonl@{mark}\n".encode() if mark is not None else b""
    return comment + (EMPTY if empty else HEAD)


def cut(data: bytes, start: int) -> tuple[int | None, list[bytes]]:
    """The file after its mark line as (bytes before the first block, the blocks), or (None, []) when
    it is not one ``efforts:`` list of blocks starting at a steady indentation (then it is read whole)."""
    rest = data[start:]
    if rest == EMPTY:
        return len(data), []
    if not rest.startswith(HEAD) or not rest.endswith(b"\n"):
        return None, []
    body = rest[len(HEAD) :]
    pattern = _ITEM if body.startswith(b"- ") else _OLD_ITEM if body.startswith(b"  - ") else None
    if pattern is None:
        return None, []
    ends = [m.end() for m in pattern.finditer(body)]
    starts = [0, *ends]
    return start + len(HEAD), [body[a:b] for a, b in zip(starts, [*ends, len(body)])]


def parse_block(block: bytes, path: Path) -> dict[str, Any] | None:
    """The entry one block holds, or None when it does not hold exactly one mapping."""
    try:
        parsed = parse_yaml(block.decode("utf-8"), path)
    except (ManifestError, UnicodeDecodeError):
        return None
    return parsed[0] if isinstance(parsed, list) and len(parsed) == 1 and isinstance(parsed[0], dict) else None


def read_whole(data: bytes, path: Path) -> list[Any]:
    """Every entry of a file in any YAML shape (broken → ManifestError naming the line)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    parsed = parse_yaml(text, path)
    if parsed is None:
        _refuse_empty_beside_logs(path)
        return []
    if not isinstance(parsed, dict) or not isinstance(parsed.get("efforts", []), list):
        raise ManifestError(f"{path}: expected a mapping with an 'efforts' list")
    return list(parsed.get("efforts") or [])


def _refuse_empty_beside_logs(path: Path) -> None:
    """An empty (or ``null``) manifest beside effort logs is damage, not a session without efforts:
    ``repair`` rebuilds it from the event log and the logs."""
    try:
        with os.scandir(path.parent / "efforts") as entries:
            logs = sum(1 for entry in entries if entry.name.endswith(".jsonl"))
    except OSError:
        return
    if logs:
        raise ManifestError(f"{path} is empty but the session has {logs} effort log(s) in efforts/")


def refuse_aliases(text: str, path: Path) -> None:
    """The app never writes YAML anchors or aliases; a manifest with them is refused before it is
    loaded, so an alias bomb (a few lines expanding to gigabytes) costs a parse, not the machine."""
    if "&" not in text or "*" not in text:
        return  # no anchor or no alias: nothing to expand (the common case costs a scan)
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                mark = event.start_mark
                line = f" line {mark.line + 1}" if mark is not None else ""
                raise ManifestError(f"{path}{line}: YAML anchors and aliases are not allowed in a manifest")
    except yaml.YAMLError:
        return  # the real load reports the syntax error with its line


def parse_yaml(text: str, path: Path) -> Any:
    refuse_aliases(text, path)
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ManifestError(f"{path}{line}: {problem}") from exc
    except (ValueError, RecursionError) as exc:  # e.g. an integer of thousands of digits
        huge = _HUGE_NUMBER.search(text) if isinstance(exc, ValueError) else None
        line = f" line {text.count(chr(10), 0, huge.start()) + 1}" if huge else ""
        raise ManifestError(f"{path}{line}: {one_problem(exc)}") from None


def one_problem(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc).split("\n")[0][:200] or type(exc).__name__


def salvage_manifest(path: Path) -> list[Effort]:
    """The entries of a broken ``manifest.yaml`` that can still be read, for ``repair`` to keep: the
    whole file when it parses, else each block on its own (a broken line spoils only its entry)."""
    try:
        data = read_bytes(path)
    except OSError:
        return []
    try:
        entries = read_whole(data, path)
    except ManifestError:  # each entry alone (this shape or the old one), a huge number unset
        text = _HUGE_NUMBER.sub("null", data.decode("utf-8", errors="replace"))
        item = "- " if re.search(r"^- ", text, re.M) else "  - "
        chunks = [c.encode() for c in re.split(rf"(?m)^(?={item})", text) if c.startswith(item)]
        entries = [entry for c in chunks if (entry := parse_block(c, path)) is not None]
    out: dict[str, Effort] = {}
    for i, raw in enumerate(entries):
        try:
            effort = effort_from_dict(raw, str(path), i)
        except (ManifestError, TypeError):
            continue
        out.setdefault(effort.id, effort)
    return list(out.values())  # (more than one active: the rows keep the last, and so will the file)


def _clean(value: Any) -> Any:
    """Text that UTF-8 can hold (a lone surrogate from undecodable input becomes U+FFFD)."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(value) else value
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


Piece = tuple[int, int] | bytes  # a byte range of the old file to copy, or new bytes


def write_pieces(path: Path, pieces: Sequence[Piece]) -> os.stat_result:
    """Write a new ``path`` from ``pieces`` (ranges of the current file and new bytes) to a
    temporary file, fsync it and rename it into place. Returns the new file's stat."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    src = open_nofollow(path, os.O_RDONLY) if any(isinstance(p, tuple) for p in pieces) else None
    try:
        dst = open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            for piece in pieces:
                if isinstance(piece, tuple):
                    assert src is not None
                    _copy_range(src, dst, *piece)
                else:
                    _write_all(dst, piece)
            os.fsync(dst)
            stat = os.fstat(dst)
        finally:
            os.close(dst)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        if src is not None:
            os.close(src)
    fsync_dir(path.parent)
    return stat


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _copy_range(src: int, dst: int, start: int, length: int) -> None:
    """Copy ``length`` bytes from ``start`` of ``src`` to the end of ``dst`` (in the kernel when it can)."""
    done = 0
    copy = getattr(os, "copy_file_range", None)
    while done < length:
        if copy is not None:
            try:
                n = copy(src, dst, length - done, start + done)
            except OSError:
                copy = None
                continue
        else:
            chunk = os.pread(src, min(1 << 20, length - done), start + done)
            n = len(chunk)
            _write_all(dst, chunk)
        if n == 0:
            raise ManifestError("manifest.yaml shrank while it was being rewritten")
        done += n


def write_manifest(path: Path, entries: Sequence[dict[str, Any]], mark: int | None = None) -> os.stat_result:
    """Write a whole manifest (repair, tests, benchmarks): atomic, like every other write."""
    return write_pieces(path, [head_bytes(mark, not entries), *(dump_block(e) for e in entries)])
