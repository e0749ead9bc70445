"""Land a restored transcript in a ccm session as a concluded effort.

The raw log is the transcript's turns as user/assistant messages, complete
(raw logs are the record); the summary is the SESSION SUMMARY; the manifest
entry carries the provenance in ``source``. The summary goes into working
memory like a just-concluded effort's, and the search index is updated, so the
effort can be searched, expanded and reopened like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccm_tui.core import lifecycle
from ccm_tui.core.efforts import ManifestError, load_manifest
from ccm_tui.core.eventlog import now_iso
from ccm_tui.core.tokens import TokenCounter
from ccm_tui.restore.turns import ParsedTranscript

NO_RESPONSE = "(no response recorded)"


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


def check_session_dir(directory: Path) -> None:
    """Fail early (before any model work) when the session's manifest cannot be read."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise ManifestError(f"{directory} exists and is not a directory")
    load_manifest(directory / "manifest.yaml")


def land(
    directory: Path,
    parsed: ParsedTranscript,
    transcript: Path,
    summary: str,
    counter: TokenCounter,
    *,
    report: str | None = None,
    extra_source: dict[str, Any] | None = None,
    lock_wait: float = 10.0,
) -> Landed:
    """Write the restored effort into the session at ``directory`` (created if needed)."""
    from ccm_tui.core.engine import open_index, sync_index
    from ccm_tui.core.recovery import recover
    from ccm_tui.core.session import Session

    restored_at = now_iso()
    session = Session.open(Path(directory), counter=counter, lock_wait=lock_wait)
    clean = False
    try:
        recover(session)
        source = provenance(parsed, transcript, restored_at, report=report, **(extra_source or {}))
        messages = turn_messages(parsed, restored_at)
        effort = lifecycle.land_imported(
            session, effort_name(parsed, transcript), messages, summary, source, restored_at=restored_at
        )
        effort_id = effort.id
        with open_index(session.dir) as index:
            sync_index(index, session)
        clean = True
    finally:
        session.close(clean=clean)
    return Landed(effort_id, session.dir, len(parsed.turns), len(messages), summary, source)
