"""The append-only event log of a session (``events.jsonl``).

Every state change is logged here with its turn and a timestamp. State files
(manifest, session state, expanded.json) are snapshots; between snapshots the
event log is the truth, and recovery reads it to reconcile after a crash.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...config import MIN_SECRET_CHARS, secret_values
from .durable import append_jsonl

# Every event name the session logs; nothing else defines one.
TURN_START = "turn_start"
TURN_DONE = "turn_done"
TURN_FAILED = "turn_failed"
TURN_CANCELLED = "turn_cancelled"
MESSAGE_LOGGED = "message_logged"
TOOL_CALLED = "tool_called"
EFFORT_OPENED = "effort_opened"
EFFORT_CONCLUDED = "effort_concluded"
EFFORT_EXPANDED = "effort_expanded"
EFFORT_COLLAPSED = "effort_collapsed"
EFFORT_REOPENED = "effort_reopened"
EFFORT_SWITCHED = "effort_switched"
EFFORT_RESTORED = "effort_restored"  # a transcript imported as a concluded effort
SUMMARY_EVICTED = "summary_evicted"
SUMMARY_RESTORED = "summary_restored"
COMPACTION_START = "compaction_start"
COMPACTION_COMPLETE = "compaction_complete"
SESSION_PAUSE = "session_pause"
SESSION_RESUME = "session_resume"
SESSION_START = "session_start"
SESSION_END = "session_end"
RECOVERED = "recovered"
SESSION_MIGRATED = "session_migrated"  # a session of an older schema was brought up to date
MODEL_WITHOUT_TOOLS = "model_without_tools"  # the model cannot use tools: the chat goes on without them
EFFORTS_SAVED = "efforts_saved"  # manifest entries that changed (the journal: see manifest/effort_list.py)
# the last exchange was withdrawn (regenerate, edit: core/engine/_withdraw.py); the name on disk is the
# one older sessions hold ("retract" was an earlier word for it)
EXCHANGE_WITHDRAWN = "exchange_retracted"
NOTE_ADDED = "note_added"  # another agent left a note in an effort's log (ccm-tui mcp's remember)
RECALL_REVISED = "recall_revised"  # a compaction mid-turn moved lines: the turn's recall was looked for again
EFFORT_RENAMED = "effort_renamed"  # the user gave an effort another name (its id stays)
SUMMARY_EDITED = "summary_edited"  # the user's summary replaced the model's (kept here, as "replaced")
EFFORT_PINNED = "effort_pinned"  # its summary stays in working memory
EFFORT_UNPINNED = "effort_unpinned"
EFFORTS_MERGED = "efforts_merged"  # one effort's lines were appended to another's log; it points there
SESSION_FORKED = "session_forked"  # this session was made from another at a turn (core/session/fork.py)
FORGOTTEN = "forgotten"  # a forget rewrote the files (kind, where, how many; never the text): engine/forget.py

TERMINAL_TURN_EVENTS = {TURN_DONE, TURN_FAILED, TURN_CANCELLED}

_SECRET_RE = re.compile(
    r"(?:\bsk-[A-Za-z0-9_\-]{8,}"  # OpenAI/Anthropic style keys
    r"|\b(?:api[_-]?key|x-api-key|authorization|bearer|token)\b(?:\s*[:=]\s*|\s+)[\"']?[A-Za-z0-9_\-\.]{16,}"
    r"|\bAIza[0-9A-Za-z_\-]{20,})",  # Google keys
    re.I,
)
# Userinfo in a URL (scheme://user:password@host): the whole userinfo goes.
_URL_USERINFO_RE = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://)[^/\s@\"'<>]+@")
# A credential in a query string (?key=…, &api_key=…, ;token=…).
_QUERY_SECRET_RE = re.compile(
    r"([?&;](?:[A-Za-z0-9_\-]*(?:key|token|secret|password|passwd|pwd|sig|signature|auth)[A-Za-z0-9_\-]*)=)[^&#\s\"'<>]+",
    re.I,
)
# An echoed auth header: "Basic dXNlcjpwYXNz", "Bearer abc123" (a word of letters only is left alone).
_AUTH_SCHEME_RE = re.compile(r"\b(Basic|Bearer)\s+(?=[A-Za-z0-9+/=_\-.~]*[0-9+/=_\-.~])[A-Za-z0-9+/=_\-.~]{6,}", re.I)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def redact(text: str, values: list[str] | None = None) -> str:
    """Remove the configured credentials (the actual values of every ``*_API_KEY``, ``*_TOKEN``,
    ``*_SECRET`` … variable; ``values``: those already read) and anything that looks like an API key
    or auth header from text bound for the screen or the disk. Each pattern runs only where a cheap
    test (its literal words) says it may match."""
    for value in secret_values() if values is None else values:
        if value not in text:
            continue
        if len(value) >= MIN_SECRET_CHARS:
            text = text.replace(value, "[redacted]")
        else:  # a short key: only as a whole word, so that "abcd" does not eat "abcdef"
            text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", "[redacted]", text)
    if "://" in text and _USERINFO_HINT.search(text):
        text = _URL_USERINFO_RE.sub(r"\1[redacted]@", text)
    if "=" in text:
        text = _QUERY_SECRET_RE.sub(r"\1[redacted]", text)
    low = text.casefold()
    if _AUTH_HINTS[0].search(low) or _AUTH_HINTS[1].search(low):
        text = _AUTH_SCHEME_RE.sub(r"\1 [redacted]", text)
    if "sk-" in low or "aiza" in low or any(hint.search(low) for hint in _SECRET_HINTS):
        text = _SECRET_RE.sub("[redacted]", text)
    return text


# What each pattern needs, as regexes that begin with a literal (found by a scan), over the text or its
# case-folded copy: most text holds none, and the patterns themselves try a match at every position.
_USERINFO_HINT = re.compile(r"://[^/\s@\"'<>]+@")
_AUTH_HINTS = tuple(re.compile(word + r"\s+[a-z0-9+/=_\-.~]{6,}") for word in ("basic", "bearer"))
_SECRET_HINTS = tuple(
    re.compile(word + r"(?:\s*[:=]\s*|\s+)[\"']?[a-z0-9_\-.]{16,}")
    for word in ("api_key", "api-key", "apikey", "authorization", "bearer", "token")
)


REDACTED_FIELDS = ("error", "reason", "partial")  # provider text that may echo a credential


class EventLog:
    """Appends events to ``events.jsonl``; each append is flushed and fsynced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last_written = 0  # bytes the last append took

    def log(self, event: str, turn: int, **fields: Any) -> dict[str, Any]:
        return self.log_many(turn, (event, fields))[0]

    def log_many(self, turn: int, *events: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
        """Append several events in one write and one fsync (a turn's end is one commit)."""
        records = []
        ts = now_iso()
        for event, fields in events:
            for key in REDACTED_FIELDS:
                if isinstance(fields.get(key), str):
                    fields[key] = redact(fields[key])
            records.append({"event": event, "turn": turn, "ts": ts, **fields})
        self.last_written = append_jsonl(self.path, records)
        return records
