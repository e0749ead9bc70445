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
    from ..core.engine import SearchIndexError, search_session

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
        print("no matching efforts")
    for h in hits:
        print(f"{h.score:7.2f}  {h.id}  [{h.status}]")
        if h.summary:
            print(f"         {h.summary[:110]}")
        if h.snippet and h.snippet != h.summary:
            print(f"         … {h.snippet[:110]}")
    return EXIT_OK


def hit_json(hit: Any) -> dict[str, Any]:
    """One result of ``search --json`` (contract: id, status, summary, score, snippet)."""
    return {
        "id": hit.id,
        "status": hit.status,
        "summary": hit.summary,
        "score": round(hit.score, 4),
        "snippet": hit.snippet,
    }
