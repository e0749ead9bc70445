"""The text of ``manifest.yaml``: reading it (fast for what the app writes, PyYAML for the rest) and
writing it, whole or by reusing the bytes of the entries that did not change.

The app writes one block per effort, each line ``key: <JSON scalar>`` (JSON strings, numbers,
``true``/``false``/``null`` and flow collections are valid YAML), under an optional comment that
says up to where the file includes the journal (see :mod:`ccm_tui.core.manifest_journal`)::

    # ccm-tui journal: events.jsonl@48213
    efforts:
      - id: "auth-bug"
        status: "concluded"
        ...

A file in that shape is read line by line with the JSON decoder (a 100,000-effort manifest in
about a second, PyYAML takes fifteen) and its blocks' byte lengths are known, so a later write can
copy the unchanged blocks instead of rendering them. Anything else a hand edit may produce —
comments, plain scalars, other indentation — is read by PyYAML, with the same meaning.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ...atomic_file import fsync_dir
from ...errors import Interruption
from ..storage.durable import open_nofollow, read_bytes
from .effort import Effort, ManifestError, effort_from_dict

try:  # the C loader is ~10x faster on big manifests
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MARK_RE = re.compile(rb"\A# ccm-tui journal: events\.jsonl@([0-9]{1,18})\n")
HEAD = b"efforts:\n"
EMPTY = b"efforts: []\n"
_KEY = re.compile(r"[a-z_][a-z0-9_]{0,40}\Z")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # JSON reads a pair, PyYAML refuses it
_scalar = json.JSONEncoder(ensure_ascii=False).encode


class _NotPlain(Interruption, ValueError):
    """A line the fast reader does not take (PyYAML reads the file instead)."""


def _no_constant(name: str) -> Any:
    raise _NotPlain(name)  # NaN/Infinity: JSON reads a float, YAML a string


def _float(text: str) -> float:
    if "e" in text or "E" in text:
        raise _NotPlain(text)  # PyYAML reads 1e5 as a string
    return float(text)


_decode = json.JSONDecoder(parse_constant=_no_constant, parse_float=_float).raw_decode


@dataclass
class ManifestText:
    """What a manifest file holds. ``lengths`` (bytes of each entry's block, in order) and
    ``head`` (bytes before the first block) are set when the file is exactly in the app's shape,
    so its blocks can be copied into the next version; ``mark`` is the journal offset the file
    includes (None: a file without the comment, which then includes everything)."""

    entries: list[Any] = field(default_factory=list)
    lengths: list[int] | None = None
    head: int = 0
    mark: int | None = None


def read_manifest_text(path: Path) -> ManifestText:
    """Read ``manifest.yaml`` (missing → no entries). Broken → ManifestError naming the line."""
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return ManifestText(lengths=[], head=0)
    except OSError as exc:
        raise ManifestError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return parse_manifest(data, path)


def parse_manifest(data: bytes, path: Path) -> ManifestText:
    match = MARK_RE.match(data)
    mark = int(match.group(1)) if match else None
    try:
        plain = _read_plain(data, match.end() if match else 0)
    except (_NotPlain, ValueError, UnicodeDecodeError, RecursionError):
        plain = None
    if plain is not None:
        plain.mark = mark
        return plain
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    parsed = parse_yaml(text, path)
    if parsed is None:
        _refuse_empty_beside_logs(path)
        return ManifestText(mark=mark)
    if not isinstance(parsed, dict) or not isinstance(parsed.get("efforts", []), list):
        raise ManifestError(f"{path}: expected a mapping with an 'efforts' list")
    return ManifestText(entries=list(parsed.get("efforts") or []), mark=mark)


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


def _read_plain(data: bytes, start: int) -> ManifestText | None:
    """The fast reader: the app's own shape, or None (then PyYAML reads it)."""
    rest = data[start:]
    if rest == EMPTY:
        return ManifestText(lengths=[], head=len(data))
    if not rest.startswith(HEAD) or not data.endswith(b"\n"):
        return None
    head = start + len(HEAD)
    entries: list[dict[str, Any]] = []
    lengths: list[int] = []
    for line in data[head:-1].split(b"\n"):
        text = line.decode("utf-8")
        if text.startswith("  - "):
            entries.append({})
            lengths.append(0)
        elif not text.startswith("    ") or not entries:
            return None
        key, sep, value = text[4:].partition(": ")
        if not sep or not _KEY.match(key) or _SURROGATE_ESCAPE.search(value):
            return None
        decoded, end = _decode(value)
        if end != len(value):
            return None
        entries[-1][key] = decoded
        lengths[-1] += len(line) + 1
    return ManifestText(entries=entries, lengths=lengths, head=head)


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


_HUGE_NUMBER = re.compile(r"\d{4000,}")  # past Python's int conversion limit (4300 digits)


def one_problem(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc).split("\n")[0][:200] or type(exc).__name__


def salvage_manifest(path: Path) -> list[Effort]:
    """The entries of a broken ``manifest.yaml`` that can still be read, for ``repair`` to keep.

    The app writes one ``  - id: ...`` block per effort, so a hand-broken line spoils only
    the entry it is in: each block is read on its own when the whole file does not parse."""
    try:
        text = read_bytes(path).decode("utf-8", errors="replace")
    except OSError:
        return []
    try:
        data = parse_yaml(text, path)
        entries = data.get("efforts") if isinstance(data, dict) else None
        chunks = None if isinstance(entries, list) else _entry_chunks(text)
    except ManifestError:
        chunks = _entry_chunks(text)
    if chunks is not None:
        entries = []
        for chunk in chunks:
            try:
                part = parse_yaml("efforts:\n" + _HUGE_NUMBER.sub("null", chunk), path)  # a huge number: unset
            except ManifestError:
                continue
            if isinstance(part, dict) and isinstance(part.get("efforts"), list):
                entries.extend(part["efforts"])
    out: dict[str, Effort] = {}
    for i, raw in enumerate(entries or []):
        try:
            effort = effort_from_dict(raw, str(path), i)
        except (ManifestError, TypeError):
            continue
        out.setdefault(effort.id, effort)
    efforts = list(out.values())
    active = [e for e in efforts if e.active]
    for e in active[:-1]:
        e.active = False
    return efforts


def _entry_chunks(text: str) -> list[str]:
    chunks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("  - ") or line.startswith("- "):
            chunks.append([line])
        elif chunks:
            chunks[-1].append(line)
    return ["\n".join(c) + "\n" for c in chunks]


# ---------------------------------------------------------------------- writing


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


def render_block(entry: dict[str, Any]) -> bytes:
    """One effort's block, as the fast reader reads it back."""
    lines: list[str] = []
    for key, value in entry.items():
        lines.append(f"{'  - ' if not lines else '    '}{key}: {_scalar(_clean(value))}\n")
    return "".join(lines).encode("utf-8")


def head_bytes(mark: int | None, empty: bool) -> bytes:
    comment = f"# ccm-tui journal: events.jsonl@{mark}\n".encode() if mark is not None else b""
    return comment + (EMPTY if empty else HEAD)


def dump_manifest(entries: Iterable[dict[str, Any]], mark: int | None = None) -> str:
    blocks = [render_block(e) for e in entries]
    return (head_bytes(mark, not blocks) + b"".join(blocks)).decode("utf-8")


Piece = tuple[int, int] | bytes  # a byte range of the old file to copy, or new bytes


def write_pieces(path: Path, pieces: Sequence[Piece]) -> os.stat_result:
    """Write a new ``path`` from ``pieces`` (ranges of the current file and new bytes) to a
    temporary file, fsync it and rename it into place. Returns the new file's stat."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    src = None
    if any(isinstance(p, tuple) for p in pieces):
        src = open_nofollow(path, os.O_RDONLY)
    try:
        dst = open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            for piece in pieces:
                if isinstance(piece, tuple):
                    assert src is not None
                    _copy_range(src, dst, *piece)
                else:
                    view = memoryview(piece)
                    while view:
                        view = view[os.write(dst, view) :]
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
            view = memoryview(chunk)
            while view:
                view = view[os.write(dst, view) :]
        if n == 0:
            raise ManifestError("manifest.yaml shrank while it was being rewritten")
        done += n


def write_manifest(path: Path, entries: Sequence[dict[str, Any]], mark: int | None = None) -> os.stat_result:
    """Write a whole manifest (repair, tests, benchmarks): atomic, like every other write."""
    blocks = [render_block(e) for e in entries]
    return write_pieces(path, [head_bytes(mark, not blocks), *blocks])
