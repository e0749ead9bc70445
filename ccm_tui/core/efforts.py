"""The effort model and the manifest that indexes efforts (``manifest.yaml``).

An effort is a topic with a natural end. The manifest keeps one entry per
effort; its raw log lives in ``efforts/<id>.jsonl``. Ids are slugs that can
never name a path outside ``efforts/``, whatever the model called the effort.
"""

from __future__ import annotations

import datetime
import json
import re
import unicodedata
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml
from anyascii import anyascii

from .store import StoreError, atomic_write_text, read_bytes

try:  # the C loader is ~10x faster on big manifests
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

OPEN = "open"
CONCLUDED = "concluded"
STATUSES = (OPEN, CONCLUDED)

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
MAX_NAME_CHARS = 200


class ManifestError(StoreError):
    """manifest.yaml cannot be understood; the message names the file and the problem."""


def _ascii(name: str) -> str:
    """``name`` in ASCII: accents folded, other scripts transliterated ("Отпуск" → "Otpusk").

    Each CJK ideograph is one word, so it is kept apart from its neighbours
    ("東京旅行" → "dong jing lu xing", not one run of letters)."""
    parts = []
    for ch in unicodedata.normalize("NFC", name):
        if ch.isascii():
            parts.append(ch)
        elif unicodedata.name(ch, "").startswith("CJK"):
            parts.append(f" {anyascii(ch)} ")
        else:
            parts.append(anyascii(ch))
    return "".join(parts)


def slugify(name: str) -> str:
    """Turn whatever name the model gave into ``[a-z0-9][a-z0-9-]{0,63}``.

    Accents are folded ("Café" → "cafe") and other scripts transliterated
    ("Отпуск в Японии" → "otpusk-v-yaponii"); everything that is not a letter or
    a digit becomes a single hyphen, so ``../../etc/passwd`` becomes
    ``etc-passwd``. An empty result becomes ``effort``. The human name is kept
    beside the id and is what the UI shows.
    """
    slug = re.sub(r"[^a-z0-9]+", "-", _ascii(name or "").lower()).strip("-")
    slug = slug[:64].rstrip("-")
    return slug or "effort"


def unique_slug(name: str, taken: set[str]) -> str:
    base = slugify(name)
    if base not in taken:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = base[: 64 - len(suffix)].rstrip("-") + suffix
        if candidate not in taken:
            return candidate
        n += 1


@dataclass
class Effort:
    """One manifest entry. The first six fields are the contract; the rest are ours."""

    id: str
    status: str = OPEN
    active: bool = False
    summary: str | None = None
    raw_file: str = ""
    name: str = ""
    created: str = ""
    concluded_at: str | None = None
    reopen_count: int = 0
    raw_tokens: int = 0  # tokens of the whole raw log (for the naive figure)
    summary_tokens: int = 0
    messages: int = 0  # lines in the raw log
    source: dict[str, Any] | None = None  # provenance of imported efforts
    checkpoint: str | None = None  # compaction summary of the oldest part of an open effort
    checkpoint_upto: int = 0  # ... covering its first N log lines

    def __post_init__(self) -> None:
        if not self.raw_file:
            self.raw_file = f"efforts/{self.id}.jsonl"

    @property
    def is_open(self) -> bool:
        return self.status == OPEN

    @property
    def is_concluded(self) -> bool:
        return self.status == CONCLUDED

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in _FIELD_ORDER}
        for optional in ("source", "checkpoint"):
            if data[optional] is None:
                del data[optional]
        if not data["checkpoint_upto"]:
            del data["checkpoint_upto"]
        return data


_FIELD_ORDER = tuple(f.name for f in fields(Effort))
_FIELD_NAMES = set(_FIELD_ORDER)


def _text(value: Any) -> str | None:
    """A text field as read from YAML: strings as they are, dates and numbers as text, None for
    anything else (lists, mappings)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _effort_from_dict(raw: Any, where: str, index: int) -> Effort:
    if not isinstance(raw, dict):
        raise ManifestError(f"{where}: entry {index + 1} is not a mapping")
    eid = raw.get("id")
    if not isinstance(eid, str) or not SLUG_RE.match(eid):
        raise ManifestError(f"{where}: entry {index + 1} has an invalid id {eid!r}")
    status = raw.get("status", OPEN)
    if status not in STATUSES:
        raise ManifestError(f"{where}: effort {eid!r} has unknown status {status!r}")
    known = {k: v for k, v in raw.items() if k in _FIELD_NAMES}
    known["raw_file"] = f"efforts/{eid}.jsonl"  # never trust a path from disk
    effort = Effort(**known)
    effort.active = effort.active is True and effort.is_open
    # a hand edit (or another tool) may leave any YAML type in a field: keep text as text
    effort.summary = _text(effort.summary)
    effort.checkpoint = _text(effort.checkpoint)
    effort.concluded_at = _text(effort.concluded_at)
    effort.created = _text(effort.created) or ""
    effort.name = _text(effort.name) or eid
    if effort.source is not None and not isinstance(effort.source, dict):
        effort.source = None
    for key in ("raw_tokens", "summary_tokens", "messages", "reopen_count", "checkpoint_upto"):
        value = getattr(effort, key)
        if not isinstance(value, int) or value < 0:
            setattr(effort, key, 0)
    return effort


def _cache_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.cache.json")


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _read_cache(path: Path) -> list[Any] | None:
    """The manifest's entries from its JSON cache, if the cache describes this very file.

    YAML parsing costs seconds at 10,000 efforts; the cache (derived data, written with
    the manifest) makes start-up cost a JSON load. A hand edit changes the file's stamp,
    so the YAML is read again.
    """
    try:
        data = json.loads(_cache_path(path).read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("stamp") == _stamp(path) and isinstance(data.get("efforts"), list):
            return data["efforts"]
    except (OSError, ValueError):
        pass
    return None


def _write_cache(path: Path, entries: list[dict[str, Any]]) -> None:
    try:
        atomic_write_text(
            _cache_path(path),
            json.dumps({"stamp": _stamp(path), "efforts": entries}, ensure_ascii=False, separators=(",", ":")),
            durable=False,
        )
    except OSError:
        pass  # only a cache


def load_manifest(path: Path) -> list[Effort]:
    """Read ``manifest.yaml``. Missing → no efforts. Broken → ManifestError naming the line."""
    try:
        cached = _read_cache(path)
        if cached is not None:
            return _validated(cached, path)
        text = read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"cannot read {path}: {exc}") from exc
    data = _parse_yaml(text, path)
    if data is None:
        return []
    if not isinstance(data, dict) or not isinstance(data.get("efforts", []), list):
        raise ManifestError(f"{path}: expected a mapping with an 'efforts' list")
    return _validated(data.get("efforts") or [], path)


def _refuse_aliases(text: str, path: Path) -> None:
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


def _parse_yaml(text: str, path: Path) -> Any:
    _refuse_aliases(text, path)
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ManifestError(f"{path}{line}: {problem}") from exc


def salvage_manifest(path: Path) -> list[Effort]:
    """The entries of a broken ``manifest.yaml`` that can still be read, for ``repair`` to keep.

    The app writes one ``  - id: ...`` block per effort, so a hand-broken line spoils only
    the entry it is in: each block is read on its own when the whole file does not parse."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    try:
        data = _parse_yaml(text, path)
        entries = data.get("efforts") if isinstance(data, dict) else None
        chunks = None if isinstance(entries, list) else _entry_chunks(text)
    except ManifestError:
        chunks = _entry_chunks(text)
    if chunks is not None:
        entries = []
        for chunk in chunks:
            try:
                part = _parse_yaml("efforts:\n" + chunk, path)
            except ManifestError:
                continue
            if isinstance(part, dict) and isinstance(part.get("efforts"), list):
                entries.extend(part["efforts"])
    out: dict[str, Effort] = {}
    for i, raw in enumerate(entries or []):
        try:
            effort = _effort_from_dict(raw, str(path), i)
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


def _validated(entries: list[Any], path: Path) -> list[Effort]:
    efforts = [_effort_from_dict(e, str(path), i) for i, e in enumerate(entries)]
    seen: set[str] = set()
    for e in efforts:
        if e.id in seen:
            raise ManifestError(f"{path}: effort id {e.id!r} appears twice")
        seen.add(e.id)
    # at most one active effort, whatever the file says
    active = [e for e in efforts if e.active]
    for e in active[:-1]:
        e.active = False
    return efforts


_scalar = json.JSONEncoder(ensure_ascii=False).encode


def dump_manifest(entries: list[dict[str, Any]]) -> str:
    """YAML block mappings with JSON scalars (JSON strings, numbers, true/false/null and flow
    collections are valid YAML): readable, and ~30x faster than PyYAML's emitter."""
    lines = ["efforts:"] if entries else ["efforts: []"]
    for entry in entries:
        first = True
        for key, value in entry.items():
            lines.append(f"{'  - ' if first else '    '}{key}: {_scalar(value)}")
            first = False
    return "\n".join(lines) + "\n"


def save_manifest(path: Path, efforts: list[Effort]) -> None:
    entries = [e.to_dict() for e in efforts]
    atomic_write_text(path, dump_manifest(entries))
    _write_cache(path, entries)


class EffortTable:
    """The efforts of a session in manifest order, with lookups by id.

    Open efforts are indexed separately so per-turn work does not scan every
    concluded effort: change an effort's status only through :meth:`set_status`.
    """

    def __init__(self, efforts: list[Effort] | None = None) -> None:
        self.efforts: list[Effort] = list(efforts or [])
        self._by_id = {e.id: e for e in self.efforts}
        self._open = {e.id: e for e in self.efforts if e.is_open}

    def __iter__(self):
        return iter(self.efforts)

    def __len__(self) -> int:
        return len(self.efforts)

    def get(self, effort_id: str) -> Effort | None:
        return self._by_id.get(effort_id)

    def ids(self) -> set[str]:
        return set(self._by_id)

    def add(self, effort: Effort) -> None:
        self.efforts.append(effort)
        self._by_id[effort.id] = effort
        if effort.is_open:
            self._open[effort.id] = effort

    def set_status(self, effort: Effort, status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        effort.status = status
        if status == OPEN:
            self._open[effort.id] = effort
        else:
            self._open.pop(effort.id, None)
            effort.active = False

    @property
    def active(self) -> Effort | None:
        for e in self._open.values():
            if e.active:
                return e
        return None

    def open_efforts(self) -> list[Effort]:
        return list(self._open.values())

    @property
    def concluded_count(self) -> int:
        return len(self.efforts) - len(self._open)

    def set_active(self, effort: Effort | None) -> None:
        for e in self._open.values():
            e.active = e is effort
