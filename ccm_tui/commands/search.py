"""``ccm-tui search QUERY``: the ranking of ``search_efforts``, without a model (never imports litellm)."""

from __future__ import annotations

import argparse
from typing import Any

from .common import (
    EXIT_OK,
    CliError,
    UsageError,
    debug_option,
    print_json,
    require_session,
    session_dir_from,
    session_options,
)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("search", help="ranked search over all efforts (no model needed)")
    session_options(p)
    debug_option(p)
    p.add_argument("--limit", type=int, default=10, metavar="N", help="results to show (default 10)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("query", help="what to look for")


def run(args: argparse.Namespace) -> int:
    from ..core.reading import SearchIndexError, search_session

    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    directory = session_dir_from(args)
    require_session(directory)
    try:
        hits = search_session(directory, args.query, args.limit)
    except SearchIndexError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json({"results": [hit_json(h) for h in hits]})
        return EXIT_OK
    if not hits:
        print("no matching efforts or ambient chat")
    for h in hits:
        print_hit(h)
    return EXIT_OK


def print_hit(h: Any) -> None:
    """One result as text: an effort with its summary, or a stretch of ambient chat by its lines in
    raw.jsonl; then the best passage."""
    ambient = getattr(h, "source", "effort") == "ambient"
    if ambient:
        where = f"  lines {h.lines[0]}-{h.lines[1]}" if h.lines else ""
        print(f"{h.score:7.2f}  ambient chat{where}:")
    else:
        print(f"{h.score:7.2f}  {h.id}  [{h.status}]")
        if h.summary:
            print(f"         {h.summary[:110]}")
    if h.snippet and h.snippet != h.summary and not h.passage:
        print(f"         … {h.snippet[:110]}")
    if h.passage and h.lines:
        if not ambient:
            print(f"         lines {h.lines[0]}-{h.lines[1]}:")
        for passage_line in h.passage.splitlines():
            print(f"           {passage_line[:160]}")


def hit_json(hit: Any) -> dict[str, Any]:
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
        "source": getattr(hit, "source", "effort"),
    }
