"""The session as plain text and plain data: search results and the status, for every place that shows them.

``ccm-tui search`` / ``status``, the ``/search`` and ``/status`` slash commands (TUI
and ``send``) and the MCP server all show the same words and the same JSON.

A search report is also given as :class:`ReportLine` s — each line's indent, its text and the
spans of the words found — so that a terminal (:func:`render_report`: bold on a terminal, plain
when piped, wrapped lines keeping their indent) and the TUI style the matches from the structure,
never by parsing markup out of logged text.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from ..efforts.states import EffortState
from ..search import Marked, SearchHit, Span
from ..text.terminal import terminal_safe
from .status import SessionStatus, listing_order

BOLD, NOT_BOLD = "\x1b[1m", "\x1b[22m"


@dataclass(frozen=True)
class ReportLine:
    """One line of a text report: ``indent`` spaces (a wrapped line keeps them), its ``text`` (no
    markup, no control characters) and the ``spans`` to highlight in it (offsets into ``text``)."""

    indent: int
    text: str
    spans: tuple[Span, ...] = ()

    @classmethod
    def of(cls, indent: int, marked: Marked | str, width: int | None = None) -> ReportLine:
        """A line from text with its matches (cut to ``width`` characters), made terminal-safe piece by
        piece so the spans still point at the words they marked."""
        if isinstance(marked, str):
            marked = Marked(marked)
        if width is not None:
            marked = marked.cut(width)
        pieces, spans, at, size = [], [], 0, 0
        for start, end in (*marked.spans, (len(marked.text), len(marked.text))):
            before, inside = terminal_safe(marked.text[at:start]), terminal_safe(marked.text[start:end])
            pieces += [before, inside]
            size += len(before)
            if inside:
                spans.append((size, size + len(inside)))
            size += len(inside)
            at = end
        return cls(indent, "".join(pieces), tuple(spans))

    @property
    def plain(self) -> str:
        return " " * self.indent + self.text

    def as_json(self) -> dict[str, Any]:
        return {"indent": self.indent, "text": self.text, "spans": [list(s) for s in self.spans]}


GROUP_TITLES = {
    "open": "Open",
    "expanded": "Expanded",
    "concluded": "Concluded",
    "evicted": "Evicted (searchable)",
}


def hit_lines(hit: SearchHit) -> list[ReportLine]:
    """One result: an effort with its summary, or a stretch of ambient chat by its lines in
    raw.jsonl; then the best passage, its matches as spans."""
    ambient = hit.source == "ambient"
    out = []
    if ambient:
        where = f"  lines {hit.lines[0]}-{hit.lines[1]}" if hit.lines else ""
        out.append(ReportLine.of(0, f"{hit.score:7.2f}  ambient chat{where}:"))
    else:
        out.append(ReportLine.of(0, f"{hit.score:7.2f}  {hit.id}  [{hit.status}]"))
        if hit.summary:
            out.append(ReportLine.of(9, hit.summary, 110))
    snippet = hit.marked_snippet or Marked(hit.snippet)
    if hit.snippet and snippet.text != hit.summary and not hit.passage:
        out.append(ReportLine.of(9, Marked("… " + snippet.text, tuple((a + 2, b + 2) for a, b in snippet.spans)), 112))
    if hit.passage and hit.lines:
        if not ambient:
            out.append(ReportLine.of(9, f"lines {hit.lines[0]}-{hit.lines[1]}:"))
        passage = hit.marked_passage or Marked(hit.passage)
        out.extend(ReportLine.of(11, line, 160) for line in passage.lines())
    return out


NO_HITS = "no matching efforts or ambient chat"
CAPTURES_HEADER = "In the captured agents' sessions:"


def captured_json(found: Any) -> dict[str, Any]:
    """A hit in a captured agent session (an ``all_sessions.SessionHit``) as ``search --all-sessions
    --json`` gives it: ``session``, the hit's keys, ``agent``, ``project``, ``started``, ``resume``."""
    capture = found.capture or {}
    result = {"session": found.session, **hit_json(found.hit)}
    result.update({key: capture.get(key) for key in ("agent", "project", "started", "resume")})
    if capture.get("source_gone"):
        result["source_gone"] = True
    return result


def captured_report(found: list[Any]) -> list[ReportLine]:
    """The hits in captured agent sessions (``/search`` with ``search_captures``): each says where it
    comes from and how to resume it, then its lines as :func:`hit_lines` gives them (none: nothing)."""
    if not found:
        return []
    out = [ReportLine(0, ""), ReportLine(0, CAPTURES_HEADER)]
    for one in found:
        capture = one.capture or {}
        where = " · ".join(str(capture[k]) for k in ("agent", "project", "started") if capture.get(k))
        out.append(ReportLine.of(0, f"{one.session}  ({where})" if where else one.session))
        out += hit_lines(one.hit)
        if capture.get("resume"):
            out.append(ReportLine.of(9, f"resume: {capture['resume']}"))
    return out


def search_report(hits: list[SearchHit]) -> list[ReportLine]:
    """The results as lines with their matches (``/search``, ``ccm-tui search``)."""
    return [line for hit in hits for line in hit_lines(hit)] if hits else [ReportLine(0, NO_HITS)]


def search_text(hits: list[SearchHit]) -> str:
    """The results as plain text (no markup: a pipe, a reply)."""
    return "\n".join(line.plain for line in search_report(hits))


def _cells(text: str) -> int:
    """Terminal columns ``text`` takes (wide CJK letters two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _breaks(text: str, room: int) -> list[int]:
    """Where ``text`` is cut to lines of at most ``room`` columns: at a space when there is one in
    the line, else (a long word) at the edge."""
    cuts, start = [], 0
    while _cells(text[start:]) > room:
        end, used = start, 0
        while end < len(text) and used + _cells(text[end]) <= room:
            used += _cells(text[end])
            end += 1
        space = text.rfind(" ", start + 1, end + 1)
        cut = space if space > start else max(end, start + 1)
        cuts.append(cut)
        start = cut + 1 if cut < len(text) and text[cut] == " " else cut
    return cuts


def _styled(text: str, spans: list[Span], bold: bool) -> str:
    if not bold or not spans:
        return text
    parts, at = [], 0
    for start, end in spans:
        parts += [text[at:start], BOLD, text[start:end], NOT_BOLD]
        at = end
    return "".join([*parts, text[at:]])


def render_report(lines: list[ReportLine], *, width: int | None = None, bold: bool = False) -> str:
    """The report for a terminal: matches in bold (``bold``: only when writing to a terminal) and
    lines longer than ``width`` columns wrapped, each wrapped part keeping the line's indent."""
    out = []
    for line in lines:
        room = (width - line.indent) if width else 0
        cuts = _breaks(line.text, room) if room > 8 else []
        starts = [0] + [c + 1 if c < len(line.text) and line.text[c] == " " else c for c in cuts]
        ends = [*cuts, len(line.text)]
        for a, b in zip(starts, ends):
            spans = [(max(s, a) - a, min(e, b) - a) for s, e in line.spans if s < b and e > a]
            out.append(" " * line.indent + _styled(line.text[a:b], spans, bold))
    return "\n".join(out)


def hit_json(hit: SearchHit) -> dict[str, Any]:
    """One result of ``search --json`` (contract: id, status, summary, score, snippet; added:
    ``passage``, the best few log messages, and ``lines``, their [first, last] 1-based line numbers
    in the raw log, both null when only the id/summary/name matched; ``source``, "effort" or
    "ambient": exchanges of the ambient log, whose id and status are "ambient", summary null, and
    lines numbered in raw.jsonl)."""
    return {
        "id": hit.id,
        "status": hit.status,
        "summary": hit.summary,
        "score": round(hit.score, 4),
        "snippet": hit.snippet,
        "passage": hit.passage,
        "lines": list(hit.lines) if hit.lines else None,
        "source": hit.source,
    }


def status_text(status: SessionStatus, data: dict[str, Any]) -> str:
    """The efforts by group and the context figures (``data``: ``status --json``)."""
    ctx = data["context"]
    lines = [f"session {data['session_dir']}  ·  turn {status.turn}"]
    groups: dict[str, list[str]] = {key: [] for key in GROUP_TITLES}
    for e in listing_order(status.efforts):
        label = e.id if e.title == e.id else f"{e.id} — {e.title[:60]}"
        label += "  [pinned]" if e.pinned else ""
        tokens = f"{e.context_tokens if e.context_tokens is not None else e.raw_tokens:,}"
        if e.state.is_open:
            groups["open"].append(f"  {'▶' if e.active else ' '} {label}  ({tokens} tokens in context)")
        elif e.state is EffortState.EXPANDED:
            groups["expanded"].append(f"    {label}  ({tokens} tokens loaded, {e.turns_since_reference} turn(s) idle)")
        elif e.state is EffortState.EVICTED:
            groups["evicted"].append(f"    {e.id}{'  [pinned]' if e.pinned else ''}: {(e.summary or '')[:90]}")
        else:
            groups["concluded"].append(f"    {e.id}{'  [pinned]' if e.pinned else ''}: {(e.summary or '')[:90]}")
    for key, rows in groups.items():
        if rows:
            lines.append(f"{GROUP_TITLES[key]}:")
            lines.extend(rows)
    if status.unlisted:
        lines.append(
            f"  … and {status.unlisted:,} older concluded effort(s) "
            "(ccm-tui search finds them; status --json lists them all)"
        )
    layers = ", ".join(f"{k} {v:,}" for k, v in ctx["layers"].items() if v)
    lines.append(
        f"context {ctx['total']:,} / {ctx['budget']:,} tokens (naive {ctx['naive']:,}, "
        f"saved {ctx['savings']:.0%})  [{layers}]"
    )
    return "\n".join(lines)
