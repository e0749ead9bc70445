"""Land a restored transcript in a ccm session as a concluded effort.

The raw log is the transcript's turns as user/assistant messages, complete
(raw logs are the record); the summary is the SESSION SUMMARY; the manifest
entry carries the provenance in ``source``. The summary goes into working
memory like a just-concluded effort's, and the search index is updated, so the
effort can be searched, expanded and reopened like any other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccm_tui.config import Settings
from ccm_tui.core.manifest.effort import Effort, ManifestError
from ccm_tui.core.manifest.effort_list import check_manifest, imported_as
from ccm_tui.core.session.lock import SessionLock
from ccm_tui.core.storage.durable import StoreError
from ccm_tui.core.storage.eventlog import now_iso
from ccm_tui.restore.turns import ParsedTranscript

from ..errors import CcmError

NO_RESPONSE = "(no response recorded)"


class AlreadyImported(CcmError):
    """The transcript was imported before; ``effort_id`` is where it is."""

    def __init__(self, effort_id: str) -> None:
        super().__init__(f"already imported as {effort_id}")
        self.effort_id = effort_id


@dataclass
class Landed:
    """Where a restored transcript ended up."""

    effort_id: str
    session_dir: Path
    turns: int
    messages: int
    summary: str
    source: dict[str, Any]


def effort_name(parsed: ParsedTranscript, transcript: Path) -> str:
    """A human name for the effort: the transcript's title, else its file name."""
    title = " ".join((parsed.title or "").split())
    return title[:120] if title else transcript.stem


def turn_messages(parsed: ParsedTranscript, ts: str) -> list[dict[str, Any]]:
    """Each turn as one user message and one assistant message (agent responses joined, complete)."""
    messages: list[dict[str, Any]] = []
    for turn in parsed.turns:
        messages.append({"role": "user", "content": turn.user, "ts": ts, "turn": turn.turn})
        reply = "\n\n".join(r for r in turn.agent_responses if r.strip())
        messages.append({"role": "assistant", "content": reply or NO_RESPONSE, "ts": ts, "turn": turn.turn})
    return messages


def provenance(parsed: ParsedTranscript, transcript: Path, restored_at: str, **extra: Any) -> dict[str, Any]:
    """The manifest's ``source`` entry: file, format, turns, restored_at, artifacts (+ extras)."""
    artifacts = {(a.path, a.action) for t in parsed.turns for a in t.artifacts}
    source: dict[str, Any] = {
        "file": str(transcript.expanduser().resolve()),
        "format": parsed.format,
        "turns": len(parsed.turns),
        "restored_at": restored_at,
        "artifacts": len(artifacts),
    }
    if parsed.cwd:
        source["cwd"] = parsed.cwd
    if parsed.title:
        source["title"] = parsed.title
    source.update({k: v for k, v in extra.items() if v not in (None, "", [], {})})
    return source


def transcript_digest(transcript: Path) -> str:
    """The SHA-256 of the transcript's bytes: what makes an import idempotent."""
    digest = hashlib.sha256()
    with Path(transcript).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def already_imported(directory: Path, digest: str, max_turns: int | None = None) -> str | None:
    """The id of the effort this transcript (same bytes, same ``--max-turns``) was imported as, if any."""
    manifest = Path(directory) / "manifest.yaml"
    if not Path(directory).is_dir():
        return None
    return find_import(imported_as(manifest, digest), digest, max_turns)


def find_import(efforts: Iterable[Effort], digest: str, max_turns: int | None) -> str | None:
    """The effort imported from a transcript of this digest and ``--max-turns``, if any."""
    for effort in efforts:
        source = effort.source or {}
        if source.get("sha256") == digest and source.get("max_turns") == max_turns:
            return effort.id
    return None


def check_session_dir(directory: Path) -> None:
    """Fail early (before any model work) when the session's manifest cannot be read, or its
    writer lock cannot be taken (held by another process past the wait landing would allow, a
    read-only directory): every model call would be spent before failing on the lock."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise ManifestError(f"{directory} exists and is not a directory")
    check_manifest(directory / "manifest.yaml")
    if directory.is_dir():
        lock = SessionLock(directory)
        try:
            lock.acquire(wait=LOCK_PROBE_WAIT)
        except OSError as exc:
            raise StoreError(f"cannot take the session's lock {lock.path}: {exc.strerror or exc}") from None
        lock.release()


LOCK_PROBE_WAIT = 10.0  # as long as landing waits for the lock


def land(
    directory: Path,
    parsed: ParsedTranscript,
    transcript: Path,
    summary: str,
    settings: Settings,
    *,
    report: str | None = None,
    extra_source: dict[str, Any] | None = None,
    lock_wait: float = 10.0,
    digest: str | None = None,
    force: bool = False,
) -> Landed:
    """Write the restored effort into the session at ``directory`` (created if needed), opened
    through the engine's door (lock, schema check, recovery).

    With ``digest`` (the transcript's :func:`transcript_digest`) and not ``force``, an
    import of the same transcript that landed meanwhile raises :class:`AlreadyImported`."""
    from ccm_tui.core.engine.opening import NO_MODEL, start_engine

    restored_at = now_iso()
    engine = start_engine(Path(directory), settings, llm=NO_MODEL, lock_wait=lock_wait, probe_model_window=False)
    clean = False
    try:
        if digest is not None and not force:
            earlier = engine.find_import(digest, (extra_source or {}).get("max_turns"))
            if earlier is not None:
                raise AlreadyImported(earlier)
        source = provenance(parsed, transcript, restored_at, report=report, sha256=digest, **(extra_source or {}))
        messages = turn_messages(parsed, restored_at)
        effort = engine.land_import(effort_name(parsed, transcript), messages, summary, source, restored_at=restored_at)
        clean = True
    finally:
        engine.close(clean=clean)
    return Landed(effort.id, engine.session_dir, len(parsed.turns), len(messages), summary, source)
