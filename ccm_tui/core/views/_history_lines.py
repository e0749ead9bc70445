"""What the chat pane shows of earlier turns, line by line: log records as chat lines, and the banners
of a stretch of time (opened, concluded, expanded, switched, auto-collapsed, auto-compaction …)
rebuilt from the event log, worded and placed as they were shown live: a turn's banners above its
reply, an action's between turns, each once. Which records a page holds is :mod:`.scrollback`'s.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..efforts.lifecycle import REOPEN_SEPARATOR
from ..session.chat_line import NOTE, LoggedLine, note_author
from ..storage import eventlog as ev
from ..storage.long_lines import shown_content
from ..turn.compaction import COLLAPSED_BY_COMPACTION

# The banner each effort event showed live (core/turn/tools.py words them the same way).
EVENT_BANNERS = {
    ev.EFFORT_OPENED: "Opened effort: {id}",
    ev.EFFORT_CONCLUDED: "Concluded effort: {id}",
    ev.EFFORT_EXPANDED: "Expanded effort: {id} ({tokens} tokens loaded)",
    ev.EFFORT_COLLAPSED: "Collapsed effort: {id}",
    ev.EFFORT_SWITCHED: "Switched to effort: {id}",
    ev.EFFORT_REOPENED: "Reopened effort: {id}",
    ev.EFFORT_RESTORED: "Imported effort: {id}",
}


def line_records(records: list[dict[str, Any]], logged_to: str) -> list[LoggedLine]:
    """The lines the chat shows of some log records (``logged_to``: the log they come from)."""
    out = []
    for r in records:
        content = r.get("content")
        if content == REOPEN_SEPARATOR and r.get("role") == "system":
            continue  # the reopen's banner stands for it (live, the chat showed only that)
        if r.get("role") in ("user", "assistant", "system") and isinstance(content, str):
            text = shown_content(r)  # a line read by its head says how much is left out
            author = note_author(r)  # an agent's note is shown as one, never as the user's words
            role = NOTE if author is not None else r["role"]
            ts = str(r.get("ts") or "")
            interrupted, cut = bool(r.get("interrupted")), r.get("cut") is True
            out.append(LoggedLine(role, text, ts, logged_to, interrupted, author=author or "", cut=cut))
    return out


def _banner_text(record: dict[str, Any], effort_id: str) -> str | None:
    event = str(record.get("event"))
    if event == ev.EFFORT_COLLAPSED:
        reason = str(record.get("reason") or "")
        if reason == "compaction":
            return COLLAPSED_BY_COMPACTION.format(id=effort_id)
        if reason.startswith("inactive for"):  # decay (core/turn/_record.py words it so)
            return f"Auto-collapsed effort: {effort_id} ({reason})"
    template = EVENT_BANNERS.get(event)
    tokens = record.get("tokens")
    shown = f"{tokens:,}" if isinstance(tokens, int) and not isinstance(tokens, bool) else "?"
    return None if template is None else template.format(id=effort_id, tokens=shown)


def banners_between(records: list[dict[str, Any]], since: str, until: str = "\uffff") -> list[LoggedLine]:
    """The banners the chat showed live for the events ``records`` (in order) logged from ``since``
    up to, not including, ``until``."""
    out: list[LoggedLine | None] = []
    started: dict[int, tuple[int, str, int]] = {}  # compaction number → (its place in out, ts, tokens before)
    for record in records:
        event, ts, effort_id = str(record.get("event")), str(record.get("ts") or ""), record.get("effort_id")
        number = int(record.get("compaction_number") or 0)
        if ts >= until:
            continue
        if event == ev.COMPACTION_START and ts >= since:
            started[number] = (len(out), ts, int(record.get("tokens") or 0))
            out.append(None)  # its headline comes first, as live, once its figures are known
        elif event == ev.COMPACTION_COMPLETE and number in started:
            at, when, before = started.pop(number)
            text = f"AUTO-COMPACTION #{number}: {before:,} → {int(record.get('tokens') or 0):,} tokens"
            out[at] = LoggedLine("system", text, when, "ambient", banner=True, kind="compaction")
        elif ts >= since and isinstance(effort_id, str) and (said := _banner_text(record, effort_id)) is not None:
            out.append(LoggedLine("system", said, ts, effort_id, banner=True))
    return [line for line in out if line is not None]


def turn_spans(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """When each turn ran: (turn_start, its terminal event), in order."""
    turns, start = [], None
    for record in records:
        event, ts = record.get("event"), str(record.get("ts") or "")
        if event == ev.TURN_START:
            start = ts
        elif event in ev.TERMINAL_TURN_EVENTS and start is not None:
            turns.append((start, ts))
            start = None
    return turns


def above_replies(lines: list[LoggedLine], banners: list[LoggedLine], turns: list[tuple[str, str]]) -> list[LoggedLine]:
    """A turn's banners go above its reply, as the chat showed them live, even those logged
    after the reply was (a decay collapse, compaction for the next request)."""
    replies = sorted(line.ts for line in lines if line.role == "assistant")
    placed = []
    for banner in banners:
        for start, end in turns:
            if start <= banner.ts <= end:
                reply = next((ts for ts in replies if start <= ts <= end), None)
                if reply is not None and banner.ts >= reply:
                    banner = replace(banner, place=reply)
                break
        placed.append(banner)
    return placed


def with_usage(lines: list[LoggedLine], records: list[dict[str, Any]]) -> list[LoggedLine]:
    """Each reply with what its turn cost (the ``turn_done`` event's usage), for the chat's
    tokens-per-message view."""
    spent: list[tuple[str, str, tuple[int, int, float | None]]] = []
    start = None
    for record in records:
        event, ts = record.get("event"), str(record.get("ts") or "")
        if event == ev.TURN_START:
            start = ts
        elif event == ev.TURN_DONE and start is not None:
            usage = record.get("usage")
            if isinstance(usage, dict):
                cost = record.get("cost")
                figures = (
                    int(usage.get("prompt_tokens") or 0),
                    int(usage.get("completion_tokens") or 0),
                    float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
                )
                spent.append((start, ts, figures))
            start = None
    if not spent:
        return lines
    out = list(lines)
    for start, end, figures in spent:
        at = [i for i, line in enumerate(out) if line.role == "assistant" and start <= line.ts <= end]
        if at:
            out[at[-1]] = replace(out[at[-1]], usage=figures)
    return out
