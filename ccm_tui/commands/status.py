"""``ccm-tui status``: efforts and context figures, read-only (never imports litellm)."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import load_settings
from ..core.views import EffortState, SessionStatus
from .common import (
    EXIT_OK,
    debug_option,
    print_json,
    require_session,
    session_dir_from,
    session_options,
)

GROUP_TITLES = {
    "open": "Open",
    "expanded": "Expanded",
    "concluded": "Concluded",
    "evicted": "Evicted (searchable)",
}


def add_parser(sub: Any) -> None:
    p = sub.add_parser("status", help="show efforts and context figures")
    session_options(p)
    debug_option(p)
    p.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from ..core.reading import read_status

    settings = load_settings()
    directory = session_dir_from(args)
    require_session(directory, " (it is created by the first 'ccm-tui send' or the TUI)")
    status, data = read_status(directory, settings)
    if args.json:
        print_json(data)
    else:
        print(render_status(status, data))
    return EXIT_OK


def render_status(status: SessionStatus, data: dict[str, Any]) -> str:
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
    layers = ", ".join(f"{k} {v}" for k, v in ctx["layers"].items() if v)
    lines.append(
        f"context {ctx['total']:,} / {ctx['budget']:,} tokens (naive {ctx['naive']:,}, "
        f"saved {ctx['savings']:.0%})  [{layers}]"
    )
    return "\n".join(lines)
