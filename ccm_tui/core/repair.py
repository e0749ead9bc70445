"""A way out for hand-broken or corrupt snapshot files that loses nothing.

``manifest.yaml`` is rebuilt from the event log (which records every open,
conclusion with its summary, reopen and switch) and the effort files on disk;
the broken file is kept beside it as ``manifest.yaml.corrupt-<timestamp>``.
Raw logs are never rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import lifecycle
from .efforts import (
    CONCLUDED,
    SLUG_RE,
    Effort,
    ManifestError,
    load_manifest,
    save_manifest,
)
from .session import EFFORTS_DIR, EVENTS_FILE, MANIFEST_FILE, SessionLock
from .store import read_jsonl, set_aside


@dataclass
class RepairReport:
    manifest_was_broken: bool
    kept_as: str | None = None
    efforts: int = 0
    from_events: int = 0
    from_files_only: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        if self.kept_as:
            out.append(f"the broken manifest is kept as {self.kept_as}")
        out.append(f"rebuilt manifest.yaml with {self.efforts} effort(s) ({self.from_events} from the event log)")
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
    return f"(summary lost in a repair; the raw log is intact — expand to read it) First message: {first}"


def rebuild_manifest(session_dir: Path) -> RepairReport:
    """Rebuild ``manifest.yaml`` from the event log and effort files, keeping the old one aside."""
    session_dir = Path(session_dir)
    lock = SessionLock(session_dir)
    lock.acquire(wait=5.0)
    try:
        path = session_dir / MANIFEST_FILE
        broken = False
        try:
            load_manifest(path)
        except ManifestError:
            broken = True
        report = RepairReport(manifest_was_broken=broken)
        if path.exists():
            report.kept_as = set_aside(path).name
        efforts = efforts_from_events(session_dir)
        report.from_events = len(efforts)
        for log in sorted((session_dir / EFFORTS_DIR).glob("*.jsonl")):
            effort_id = log.stem
            if effort_id in efforts or not SLUG_RE.match(effort_id):
                continue
            efforts[effort_id] = Effort(
                id=effort_id, name=effort_id, status=CONCLUDED, summary=_placeholder_summary(session_dir, effort_id)
            )
            report.from_files_only.append(effort_id)
        for effort in efforts.values():
            if effort.status == CONCLUDED and not effort.summary:
                effort.summary = _placeholder_summary(session_dir, effort.id)
        ordered = sorted(efforts.values(), key=lambda e: (e.created or "", e.id))
        save_manifest(path, ordered)
        report.efforts = len(ordered)
        return report
    finally:
        lock.release()
