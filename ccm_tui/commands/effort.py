"""``ccm-tui effort rename|summary|pin|unpin|merge``: the user's edits of an effort, through the session
controller like the TUI's (Ctrl+G) and the slash commands: rename (the id stays), replace the summary
(the model's stays in the event log), pin or unpin, merge one effort into another."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from .common import (
    EXIT_OK,
    CliError,
    UsageError,
    debug_option,
    load_settings_from,
    print_json,
    require_session,
    session_dir_from,
    session_options,
)

WAIT = 10.0  # seconds an edit waits while a turn runs in another process


def add_parser(sub: Any) -> None:
    p = sub.add_parser("effort", help="rename an effort, edit its summary, pin, unpin or merge it")
    actions = p.add_subparsers(dest="edit", metavar="EDIT", required=True)

    def edit(name: str, help: str) -> argparse.ArgumentParser:
        q = actions.add_parser(name, help=help)
        session_options(q)
        debug_option(q)
        q.add_argument("--json", action="store_true", help="print the outcome as JSON")
        q.add_argument("id", help="the effort's id (or its name)")
        return q

    edit("rename", "give an effort another name (its id stays)").add_argument("name", help="the new name")
    summary = edit("summary", "replace an effort's summary with yours (the model's stays in the event log)")
    summary.add_argument("text", help="the new summary, or '-' to read it from standard input")
    edit("pin", "keep an effort's summary in working memory")
    edit("unpin", "let salience evict its summary again")
    edit("merge", "append an effort's lines to another effort's log; it then points there").add_argument(
        "into", help="the effort that keeps both"
    )


def run(args: argparse.Namespace) -> int:
    from ..core.api import Action

    value = {"rename": "name", "summary": "text", "merge": "into"}.get(args.edit)
    text = getattr(args, value, "") if value else ""
    if args.edit == "summary" and text == "-":
        text = sys.stdin.read()
    action = Action(args.edit)
    directory = session_dir_from(args)
    require_session(directory, " (it is created by the first 'ccm-tui send' or the TUI)")
    return asyncio.run(_edit(args, action, text))


async def _edit(args: argparse.Namespace, action: Any, value: str) -> int:
    from ..core.api import EffortAction, OpenOptions, SessionController

    settings = load_settings_from(args)
    options = OpenOptions(hold_lock=True, lock_wait=WAIT, retry_delays=(), probe_model_window=False)
    controller = SessionController(session_dir_from(args), settings, options=options)
    try:
        await controller.open()
        outcome = await controller.run(EffortAction(action, args.id, value=value))
    finally:
        await controller.close()
    if outcome.cause == "input":
        raise UsageError(outcome.reason, usage=False)
    if outcome.failed or outcome.cancelled:
        raise CliError(outcome.reason or "cancelled")
    result = dict(outcome.result or {})
    if args.json:
        print_json({"edit": action.value, **result, "banners": [b.strip("- ") for b in outcome.banners]})
        return EXIT_OK
    for banner in outcome.banners:
        print(banner.strip("- ").strip())
    if not outcome.banners:
        print(f"{result.get('id', args.id)}: nothing to change")
    return EXIT_OK
