"""What the tools answer, as compact text a model reads well: search hits, log lines, effort lists.

A search answers ten hits in about a thousand tokens: per hit one line saying what and
where (id, state, date, line numbers) and at most two short lines of its best passage,
the matched words in ``**``. Reads number every line as in the log file, so a line seen
here, in a search hit, in ``sed -n`` and in ccm-tui is the same line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..core.api import EffortEntry, EffortView, SearchHit, capture_of

SUMMARY_CHARS = 90  # of a hit's summary
PASSAGE_LINES = 2  # lines of a hit's passage shown
PASSAGE_LINE_CHARS = 120  # ... each at most
LIST_SUMMARY_CHARS = 80
MESSAGE_CHARS = 2_000  # of one message in a read
READ_CHARS = 24_000  # of one read, all messages together (about 6,000 tokens)
MARK = "**"


@dataclass(frozen=True)
class Found:
    """One search hit, with the session it comes from (all sessions) and its effort's view."""

    hit: SearchHit
    session: str | None = None
    view: EffortView | None = None


def cut(text: str, width: int) -> str:
    """``text`` on one line, at most about ``width`` characters, cut at word boundaries around its
    first match when long."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    first = text.find(MARK)
    start = 0
    if first > width // 2:
        start = text.find(" ", max(0, first - width // 4)) + 1 or first
        start = min(start, first)
    piece = text[start : start + width - 1]
    if start + width - 1 < len(text) and " " in piece[width // 2 :]:
        piece = piece[: piece.rfind(" ")]
    if piece.count(MARK) % 2:  # never leave a match open
        piece = piece[: piece.rfind(MARK)]
    return ("…" if start else "") + piece.rstrip() + "…"


def date(value: str | None) -> str:
    return (value or "")[:10]


def passage_lines(hit: SearchHit) -> list[str]:
    """The lines of the hit's passage holding the most matches (at most PASSAGE_LINES, in log order;
    the first line when none holds one), numbered as in the log when the passage's lines are consecutive."""
    if not hit.passage or not hit.lines:
        return [cut(hit.snippet, PASSAGE_LINE_CHARS)] if hit.snippet and hit.snippet != hit.summary else []
    parts = hit.passage.splitlines()
    numbered = hit.lines[1] - hit.lines[0] + 1 == len(parts)
    rows = [(f"{hit.lines[0] + i} " if numbered else "") + part for i, part in enumerate(parts)]
    matched = [i for i, part in enumerate(parts) if MARK in part]
    chosen = sorted(sorted(matched, key=lambda i: -parts[i].count(MARK))[:PASSAGE_LINES]) or [0]
    width = PASSAGE_LINE_CHARS if len(chosen) > 1 else PASSAGE_LINE_CHARS + PASSAGE_LINE_CHARS // 3
    return [cut(rows[i], width) for i in chosen]


def hit_text(rank: int, found: Found) -> list[str]:
    hit = found.hit
    where = f" · session {found.session}" if found.session else ""
    lines = f" · lines {hit.lines[0]}-{hit.lines[1]}" if hit.lines else ""
    if hit.source == "ambient":
        head = f"{rank}. ambient chat{where}{lines}"
    else:
        view = found.view
        state = view.state.value if view is not None else hit.status
        when = date(view.concluded_at or view.created) if view is not None else ""
        head = f"{rank}. {hit.id}{where} · {state}" + (f" {when}" if when else "") + lines
    out = [f"{head} · score {hit.score:.1f}"]
    captured = capture_line(found.view)
    if captured:
        out.append(f"   {captured}")
    if hit.summary:
        out.append(f"   summary: {cut(hit.summary, SUMMARY_CHARS)}")
    out.extend(f"   {line}" for line in passage_lines(hit))
    return out


def capture_line(view: EffortView | None) -> str:
    """For a captured agent session (``ccm-tui watch``): its agent, project, start date and how to
    resume it — the fields ``search --all-sessions --json`` gives — and whether its file is gone."""
    capture = capture_of(view.source if view is not None else None)
    if capture is None:
        return ""
    parts = [f"agent: {capture['agent']}"]
    if capture.get("project"):
        parts.append(f"project: {capture['project']}")
    parts.append(f"started: {capture['started']}")
    parts.append(f"resume: {capture['resume']}" if capture.get("resume") else "resume: none")
    if capture.get("source_gone"):
        parts.append("its original file is gone")
    return " · ".join(parts)


def search_text(query: str, found: list[Found], *, stale: Iterable[str] = (), skipped: Iterable[str] = ()) -> str:
    shown_query = cut(query, 80)
    notes = [f"({note})" for note in (*stale, *skipped)]
    if not found:
        return "\n".join([f'Nothing found for "{shown_query}" (keyword search: try other words).', *notes])
    head = f'{len(found)} found for "{shown_query}", best first (read an id with around_line=N for the lines around a hit):'
    body = [line for rank, f in enumerate(found, 1) for line in hit_text(rank, f)]
    return "\n".join([head, *body, *notes])


def message_text(message: dict[str, Any]) -> str:
    content = str(message.get("content") or "")
    size, chars = message.get("line_bytes"), message.get("chars")
    if isinstance(size, int):  # too long to read whole: its size is known in bytes
        content = content[:MESSAGE_CHARS] + f"… [the message goes on: {_size(size)} in all]"
    elif len(content) > MESSAGE_CHARS or isinstance(chars, int):
        whole = chars if isinstance(chars, int) else len(content)
        content = content[:MESSAGE_CHARS] + f"… [{whole - MESSAGE_CHARS:,} more characters]"
    role = f"note from {message['note_from']}" if message.get("note_from") else message.get("role")
    said = " (withdrawn)" if message.get("withdrawn") else ""  # withdrawn by the user, as in a search passage
    return f"{message['line']} {role}{said}: " + content.replace("\n", "\n    ")


def _size(size: int) -> str:
    return f"about {size / 1_000_000:,.1f} MB" if size >= 1_000_000 else f"about {size:,} bytes"


def read_text(title: list[str], messages: list[dict[str, Any]], first: int, last: int, total: int | None) -> str:
    """A read: ``title`` lines, then the log's lines ``first``..``last`` (within READ_CHARS), then where
    the rest of the log is."""
    out = [*title]
    used = 0
    shown_last = first - 1
    for message in messages:
        text = message_text(message)
        if used and used + len(text) > READ_CHARS:
            break
        out.append(text)
        used += len(text)
        shown_last = message["line"]
    if len(out) == len(title):
        out.append(f"(lines {first}-{last} hold no chat messages)")
        shown_last = last
    elif shown_last < last:
        last = shown_last
    out[len(title) : len(title)] = [f"lines {first}-{last} of {total if total is not None else '?'}:"]
    after = []
    if first > 1:
        after.append("line 1 comes before" if first == 2 else f"lines 1-{first - 1} come before")
    if total is not None and last < total:
        after.append(f"more from offset={last + 1}")
    if after:
        out.append("(" + "; ".join(after) + ")")
    return "\n".join(out)


def effort_title(view: EffortView, total: int | None, session: str | None = None) -> list[str]:
    where = f" · session {session}" if session else ""
    when = date(view.concluded_at or view.created)
    name = f' · "{cut(view.name, 80)}"' if view.name and view.name != view.id else ""
    head = f"{view.id}{where} · {view.state.value}" + (f" {when}" if when else "") + name
    if total is not None:
        head += f" · {total} log lines"
    lines = [head]
    if view.summary:
        lines.append(f"summary: {view.summary}")
    return lines


def ambient_title(total: int, session: str | None = None) -> list[str]:
    where = f" · session {session}" if session else ""
    return [f"ambient chat{where} (the exchanges between efforts, raw.jsonl) · {total} log lines"]


def list_text(
    session: str, turn: int, entries: list[EffortEntry], shown: list[EffortEntry], state: str, offset: int
) -> str:
    which = "" if state == "any" else f" {state}"
    head = (
        f"session {session} · turn {turn} · {len(entries)}{which} effort(s), most recently used first"
        + (f"; {offset + 1}-{offset + len(shown)} shown" if len(shown) < len(entries) else "")
        + ":"
    )
    if not entries:
        return f"session {session} · turn {turn} · no{which} efforts"
    out = [head]
    for entry in shown:
        view = entry.view
        turn_part = f" · turn {entry.last_turn}" if entry.last_turn is not None else ""
        when = date(view.concluded_at or view.created)
        name = f" · {cut(view.name, 60)}" if view.name and view.name != view.id else ""
        out.append(
            f"{view.id} · {view.state.value}{turn_part}"
            + (f" · {when}" if when else "")
            + f" · {view.messages} lines{name}"
        )
        if view.summary:
            out.append(f"   {cut(view.summary, LIST_SUMMARY_CHARS)}")
    return "\n".join(out)
