"""The session as plain text and plain data: search results and the status, for every place that shows them.

``ccm-tui search`` / ``status``, the ``/search`` and ``/status`` slash commands (TUI
and ``send``) and the MCP server all show the same words and the same JSON.
"""

from __future__ import annotations

from typing import Any

from .effort_states import EffortState
from .search import SearchHit
from .views import SessionStatus

GROUP_TITLES = {
    "open": "Open",
    "expanded": "Expanded",
    "concluded": "Concluded",
    "evicted": "Evicted (searchable)",
}


def hit_lines(hit: SearchHit) -> list[str]:
    """One result as text: an effort with its summary, or a stretch of ambient chat by its lines in
    raw.jsonl; then the best passage."""
    ambient = hit.source == "ambient"
    out = []
    if ambient:
        where = f"  lines {hit.lines[0]}-{hit.lines[1]}" if hit.lines else ""
        out.append(f"{hit.score:7.2f}  ambient chat{where}:")
    else:
        out.append(f"{hit.score:7.2f}  {hit.id}  [{hit.status}]")
        if hit.summary:
            out.append(f"         {hit.summary[:110]}")
    if hit.snippet and hit.snippet != hit.summary and not hit.passage:
        out.append(f"         … {hit.snippet[:110]}")
    if hit.passage and hit.lines:
        if not ambient:
            out.append(f"         lines {hit.lines[0]}-{hit.lines[1]}:")
        out.extend(f"           {line[:160]}" for line in hit.passage.splitlines())
    return out


def search_text(hits: list[SearchHit]) -> str:
    if not hits:
        return "no matching efforts or ambient chat"
    return "\n".join(line for hit in hits for line in hit_lines(hit))


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
    for e in status.efforts:
        label = e.id if e.title == e.id else f"{e.id} — {e.title[:60]}"
        if e.state.is_open:
            groups["open"].append(f"  {'▶' if e.active else ' '} {label}  ({e.raw_tokens} tokens)")
        elif e.state is EffortState.EXPANDED:
            groups["expanded"].append(f"    {label}  ({e.turns_since_reference} turn(s) idle)")
        elif e.state is EffortState.EVICTED:
            groups["evicted"].append(f"    {e.id}: {(e.summary or '')[:90]}")
        else:
            groups["concluded"].append(f"    {e.id}: {(e.summary or '')[:90]}")
    for key, rows in groups.items():
        if rows:
            lines.append(f"{GROUP_TITLES[key]}:")
            lines.extend(rows)
    if status.unlisted:
        lines.append(
            f"  … and {status.unlisted:,} older concluded effort(s) "
            "(ccm-tui search finds them; status --json lists them all)"
        )
    layers = ", ".join(f"{k} {v}" for k, v in ctx["layers"].items() if v)
    lines.append(
        f"context {ctx['total']:,} / {ctx['budget']:,} tokens (naive {ctx['naive']:,}, "
        f"saved {ctx['savings']:.0%})  [{layers}]"
    )
    return "\n".join(lines)
