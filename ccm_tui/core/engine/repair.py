"""A way out for hand-broken or corrupt snapshot files that loses nothing.

``manifest.yaml`` is rebuilt from the event log (which records every open,
conclusion with its summary, reopen and switch) and the effort files on disk,
merged with every entry of the old manifest that can still be read and the
entries journaled after it (``efforts_saved``): those are saved before their
lifecycle event is logged, so what they say is never older than the event log
and is never downgraded (an open effort stays open, a summary stays). A copy of the old file is kept as
``manifest.yaml.corrupt-<timestamp>`` *before* the new one replaces it
atomically, so a kill at any moment leaves a ``manifest.yaml``. A valid
manifest is left alone unless ``force`` is given. Raw logs are never rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..efforts import lifecycle
from ..manifest.effort import CONCLUDED, SLUG_RE, Effort, ManifestError, effort_from_dict
from ..manifest.effort_list import journal_entries, load_manifest, save_manifest
from ..manifest.yaml_file import MARK_RE, salvage_manifest
from ..session.session import EFFORTS_DIR, EVENTS_FILE, MANIFEST_FILE, SessionLock
from ..storage.durable import StoreError, keep_copy, read_bytes, read_jsonl


class RepairNotNeeded(StoreError):
    """The manifest is valid; ``repair`` leaves it alone unless forced."""


@dataclass
class RepairReport:
    manifest_was_broken: bool
    kept_as: str | None = None
    efforts: int = 0
    from_events: int = 0
    from_manifest: int = 0  # entries of the old manifest kept as they were
    from_files_only: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        if self.kept_as:
            what = "broken" if self.manifest_was_broken else "previous"
            out.append(f"the {what} manifest is kept as {self.kept_as}")
        out.append(
            f"rebuilt manifest.yaml with {self.efforts} effort(s) ({self.from_manifest} kept from the old "
            f"manifest, {self.from_events} from the event log)"
        )
        if self.from_files_only:
            out.append(
                "efforts found only as files (concluded, summary to be rewritten on reopen): "
                + ", ".join(self.from_files_only)
            )
        return out


def efforts_from_events(session_dir: Path) -> dict[str, Effort]:
    """Replay the lifecycle events of a session into manifest entries."""
    return lifecycle.efforts_from_events(read_jsonl(session_dir / EVENTS_FILE).records)


def _placeholder_summary(session_dir: Path, effort_id: str) -> str:
    records = read_jsonl(session_dir / EFFORTS_DIR / f"{effort_id}.jsonl").records
    first = next((str(r.get("content", "")) for r in records if r.get("role") == "user"), "")
    first = " ".join(first.split())[:160]
    return f"{lifecycle.LOST_SUMMARY} First message: {first}"


KEEP_BEFORE_REPAIR = 3  # copies of a valid manifest that `repair --force` keeps (copies of broken ones: all)


def _prune_copies(path: Path, label: str) -> None:
    """Keep the newest :data:`KEEP_BEFORE_REPAIR` ``<manifest>.<label>-*`` copies (every forced repair
    of a valid manifest leaves one); a copy that cannot be removed stays."""
    copies = []
    for copy in path.parent.glob(f"{path.name}.{label}-*"):
        try:
            copies.append((copy.lstat().st_mtime_ns, copy.name, copy))
        except OSError:
            continue
    for _, _, copy in sorted(copies)[:-KEEP_BEFORE_REPAIR]:
        try:
            copy.unlink()
        except OSError:
            pass


def _salvaged(path: Path, events: Path) -> list[Effort]:
    """The readable entries of a broken manifest, with the entries journaled after it on top."""
    efforts = {e.id: e for e in salvage_manifest(path)}
    try:
        match = MARK_RE.match(read_bytes(path)[:64])
    except (OSError, StoreError):
        match = None
    if match is None:
        return list(efforts.values())
    entries, _ = journal_entries(events, int(match.group(1)))
    for i, entry in enumerate(entries):
        try:
            effort = effort_from_dict(entry, events.name, i)
        except ManifestError:
            continue
        efforts[effort.id] = effort
    return list(efforts.values())


def rebuild_manifest(session_dir: Path, *, force: bool = False) -> RepairReport:
    """Rebuild ``manifest.yaml`` from the event log and effort files, merged with what the old
    one still says; a copy of the old one is kept. Raises :class:`RepairNotNeeded` when the
    manifest is valid and ``force`` is not given."""
    session_dir = Path(session_dir)
    lock = SessionLock(session_dir)
    lock.acquire(wait=5.0)
    try:
        path = session_dir / MANIFEST_FILE
        broken = False
        try:
            old = load_manifest(path)
        except ManifestError:
            broken = True
            old = _salvaged(path, session_dir / EVENTS_FILE)
        if not broken and path.exists() and not force:
            raise RepairNotNeeded(
                f"{path} is valid ({len(old)} effort(s)); nothing to repair "
                "(--force rebuilds it from the event log, keeping everything it says)"
            )
        report = RepairReport(manifest_was_broken=broken)
        efforts = efforts_from_events(session_dir)
        for log in sorted((session_dir / EFFORTS_DIR).glob("*.jsonl")):
            effort_id = log.stem
            if effort_id in efforts or not SLUG_RE.fullmatch(effort_id):
                continue
            if any(e.id == effort_id for e in old):
                continue
            efforts[effort_id] = Effort(
                id=effort_id, name=effort_id, status=CONCLUDED, summary=_placeholder_summary(session_dir, effort_id)
            )
            report.from_files_only.append(effort_id)
        # The old manifest's entries win: it is saved before its events are logged.
        for kept in old:
            rebuilt = efforts.pop(kept.id, None)
            if rebuilt is not None and kept.is_concluded and not kept.summary:
                kept.summary = rebuilt.summary
            report.from_manifest += 1
        report.from_events = len(efforts) - len(report.from_files_only)
        for effort in [*old, *efforts.values()]:
            if effort.status == CONCLUDED and not effort.summary:
                effort.summary = _placeholder_summary(session_dir, effort.id)
        ordered = old + sorted(efforts.values(), key=lambda e: (e.created or "", e.id))
        if any(e.active for e in old):
            for effort in efforts.values():
                effort.active = False
        if path.exists():
            # a copy first, then the atomic replacement: a manifest.yaml exists at every moment
            report.kept_as = keep_copy(path, "corrupt" if broken else "before-repair").name
        save_manifest(path, ordered)
        _prune_copies(path, "before-repair")
        report.efforts = len(ordered)
        return report
    finally:
        lock.release()
