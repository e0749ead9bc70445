"""``manifest.yaml`` as the session reads and writes it: the file, its catalog, and the journal.

Saving an effort does not rewrite the manifest (100,000 entries are tens of megabytes): the
changed entries are appended to ``events.jsonl`` as one ``efforts_saved`` event — fsynced, so
they are on disk before the change is reported — and upserted into the catalog. The manifest is
rewritten later, once per piece of work, after its result is out (:meth:`ManifestStore.flush`,
copying the blocks of the unchanged entries), and its first line records up to where in
``events.jsonl`` it includes the journal::

    # ccm-tui journal: events.jsonl@48213

Whoever reads the session — this process after another's write, ``status``, ``search``, the
MCP server, the next start after a kill — takes the manifest (through the catalog when the catalog
describes this very file, by size, mtime and inode) and applies the ``efforts_saved`` entries
logged after that offset. So a hand edit of the manifest (its stamp changes: it is read again), a
``repair`` (it writes a new file) and another process's write are all seen.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..storage.durable import file_size, open_nofollow
from ..storage.eventlog import EFFORTS_SAVED
from .catalog import CATALOG_FILE, CatalogUnusable, CatalogWriteFailed, EffortCatalog
from .effort import Effort, ManifestError, effort_from_dict, validated
from .yaml_file import Piece, head_bytes, read_manifest_text, render_block, write_manifest, write_pieces

_EVENT_MARK = f'"event":"{EFFORTS_SAVED}"'.encode()
EVENTS_NAME = "events.jsonl"


def stamp_of(st: os.stat_result | None) -> list[int] | None:
    return None if st is None else [st.st_size, st.st_mtime_ns, st.st_ino]


def file_stamp(path: Path) -> list[int] | None:
    try:
        return stamp_of(os.stat(path))
    except FileNotFoundError:
        return None


def journal_entries(events: Path, start: int) -> tuple[list[dict[str, Any]], int]:
    """The entries journaled in ``events`` from byte ``start`` on (the last one per id wins) and
    the offset read up to (the end of its last complete line)."""
    try:
        fd = open_nofollow(events, os.O_RDONLY)
    except FileNotFoundError:
        return [], 0
    with os.fdopen(fd, "rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        if start >= size:
            return [], size
        fh.seek(start)
        data = fh.read()
    end = data.rfind(b"\n") + 1
    latest: dict[str, dict[str, Any]] = {}
    for line in data[:end].split(b"\n"):
        if _EVENT_MARK not in line:
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        entries = record.get("entries") if isinstance(record, dict) else None
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                latest.pop(entry["id"], None)  # keep the order of the last save
                latest[entry["id"]] = entry
    return list(latest.values()), start + end


class ManifestStore:
    """Opens the catalog of a session's manifest (applying the journal) and rewrites the file."""

    def __init__(self, directory: Path, events: Path, manifest: Path) -> None:
        self.dir = directory
        self.events = events
        self.manifest = manifest
        self.notes: list[str] = []

    @property
    def catalog_path(self) -> Path:
        return self.dir / CATALOG_FILE

    def open(self, *, writable: bool) -> EffortCatalog:
        """The catalog as of now: the manifest plus the journal after it. ``writable``: the caller
        holds the writer lock, so the catalog file may be brought up to date."""
        stamp = file_stamp(self.manifest)
        try:
            catalog: EffortCatalog | None = EffortCatalog.open(
                self.catalog_path, writable=writable and self.dir.is_dir()
            )
        except CatalogUnusable:
            catalog = None
        try:
            if catalog is None or catalog.meta("stamp") != stamp or not isinstance(catalog.meta("applied"), int):
                catalog = self._rebuilt(catalog, stamp, writable)
            return self._journaled(catalog, writable)
        except (CatalogUnusable, CatalogWriteFailed):  # (a full disk: the next start writes the file)
            if catalog is not None and catalog.path is not None:
                catalog.close()
                if writable:
                    self.catalog_path.unlink(missing_ok=True)
            return self._journaled(self._rebuilt(None, stamp, False), False)

    def _rebuilt(self, catalog: EffortCatalog | None, stamp: Any, writable: bool) -> EffortCatalog:
        text = read_manifest_text(self.manifest)
        efforts = validated(text.entries, self.manifest)
        if stamp is None:
            applied = 0  # no manifest: the whole journal is the truth
        elif text.mark is not None:
            applied = text.mark
        else:
            applied = file_size(self.events)  # a file without the mark (hand-written, older) is the truth
        if catalog is None or not writable or catalog.path is None:
            if catalog is not None:
                catalog.close()
            catalog = EffortCatalog.in_memory()
        catalog.rebuild(efforts, text.lengths, head=text.head, stamp=stamp, applied=applied)
        return catalog

    def _journaled(self, catalog: EffortCatalog, writable: bool) -> EffortCatalog:
        applied = catalog.meta("applied")
        entries, end = journal_entries(self.events, applied if isinstance(applied, int) else 0)
        if not entries:
            return catalog
        efforts = []
        for i, entry in enumerate(entries):
            try:
                efforts.append(effort_from_dict(entry, f"{self.events.name} (efforts saved)", i))
            except ManifestError as exc:
                self.notes.append(f"{exc}; skipped")
        if not writable and catalog.path is not None:
            shared = catalog
            catalog = shared.copy_to_memory()
            shared.close()
        catalog.apply(efforts, applied=end)
        return catalog

    # ------------------------------------------------------------------ writing
    def stale(self, catalog: EffortCatalog) -> bool:
        """The manifest file changed behind the catalog's back (a hand edit, another writer)."""
        return catalog.meta("stamp") != file_stamp(self.manifest)

    def flush(self, catalog: EffortCatalog) -> bool:
        """Rewrite ``manifest.yaml`` with the changed entries (the writer lock is held and the
        catalog is current). Returns False when there was nothing to write."""
        if self.stale(catalog):
            raise ManifestError(f"{self.manifest} changed while this session had it open; read it again first")
        if not catalog.has_dirty():
            return False
        mark = file_size(self.events)
        layout = catalog.layout()
        if layout is None:
            return self._write_all(catalog, mark)
        dirty = catalog.dirty_entries()
        head = head_bytes(mark, layout.empty)
        pieces: list[Piece] = [head]
        lengths: dict[int, int] = {}
        copied_to = layout.head  # the old file's bytes up to here are placed
        for number, length, offset in layout.changed:
            start = layout.head + offset
            if start > copied_to:
                pieces.append((copied_to, start - copied_to))  # the unchanged entries in between
            block = render_block(dirty[number])
            pieces.append(block)
            lengths[number] = len(block)
            copied_to = start + length
        end = layout.head + layout.size
        if end > copied_to:
            pieces.append((copied_to, end - copied_to))
        stat = write_pieces(self.manifest, pieces)
        catalog.written(lengths, head=len(head), stamp=stamp_of(stat), applied=mark)
        return True

    def _write_all(self, catalog: EffortCatalog, mark: int) -> bool:
        rows = list(catalog.all_entries())
        head = head_bytes(mark, not rows)
        blocks = [render_block(entry) for _, entry in rows]
        stat = write_pieces(self.manifest, [head, *blocks])
        catalog.written(
            {n: len(b) for (n, _), b in zip(rows, blocks)}, head=len(head), stamp=stamp_of(stat), applied=mark
        )
        return True


# ---------------------------------------------------------------------- whole-manifest helpers


def _store_for(path: Path) -> ManifestStore:
    return ManifestStore(path.parent, path.parent / EVENTS_NAME, path)


def load_manifest(path: Path) -> list[Effort]:
    """Every effort of a manifest, with the journal after it applied (tests, repair, tools: it reads
    them all). Broken → ManifestError naming the line."""
    catalog = _store_for(Path(path)).open(writable=False)
    try:
        return list(catalog.iter_efforts())
    finally:
        catalog.close()


def check_manifest(path: Path) -> None:
    """Raise ManifestError when the manifest cannot be read (cheap when its catalog is current)."""
    _store_for(Path(path)).open(writable=False).close()


def imported_as(path: Path, digest: str) -> list[Effort]:
    """The efforts imported from a transcript with this SHA-256 (one indexed query)."""
    catalog = _store_for(Path(path)).open(writable=False)
    try:
        return catalog.by_digest(digest)
    finally:
        catalog.close()


def save_manifest(path: Path, efforts: list[Effort]) -> None:
    """Write a whole manifest that includes the journal so far (repair, tests, benchmarks)."""
    path = Path(path)
    write_manifest(path, [e.to_dict() for e in efforts], mark=file_size(path.parent / EVENTS_NAME))
