"""Command line: the TUI by default, and ``send``/``status``/``search``/``restore``/``replay``/``demo``.

Exit codes: 0 ok, 2 usage error, 1 runtime error with a one-line cause on
stderr (a traceback only with ``--debug``). Heavy modules (litellm, textual)
are imported only by the commands that need them, so ``search`` and
``status`` start fast.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from . import __version__, paths

from .cli_common import (  # noqa: F401  (re-exported for the command modules)
    EXIT_OK,
    EXIT_RUNTIME,
    EXIT_USAGE,
    CliError,
    UsageError,
    load_settings_from,
    print_json,
    session_dir_from,
)


# ----------------------------------------------------------------------------- parser
def _session_options(p: argparse.ArgumentParser, *, sub: bool = True) -> None:
    # On subcommands the default is SUPPRESS, so `ccm-tui --session-dir X send hi` keeps X.
    default = argparse.SUPPRESS if sub else None
    group = p.add_mutually_exclusive_group()
    group.add_argument("--session", metavar="NAME", default=default,
                       help="named session under the data directory (default: 'default')")
    group.add_argument("--session-dir", metavar="PATH", type=Path, default=default, help="session directory to use")


def _model_options(p: argparse.ArgumentParser, *, sub: bool = True) -> None:
    default = argparse.SUPPRESS if sub else None
    p.add_argument("--model", metavar="M", default=default,
                   help="litellm model, e.g. openai/gpt-4o-mini or ollama/llama3.1")
    p.add_argument("--api-base", metavar="URL", default=default,
                   help="API base URL passed to litellm (proxies, Ollama, local servers)")


def _debug_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks on errors")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ccm-tui",
        description="Chat with any LLM; context managed by efforts (open → concluded summaries).",
    )
    parser.add_argument("--version", action="version", version=f"ccm-tui {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    _session_options(parser, sub=False)
    _model_options(parser, sub=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("send", help="run one turn without the UI and print banners and the reply")
    _session_options(p)
    _model_options(p)
    _debug_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--retry-orphan", action="store_true",
                   help="re-send the last message that never got a reply (after a crash or a failed turn)")
    p.add_argument("message", nargs="?", help="the message ('-' reads standard input)")

    p = sub.add_parser("status", help="show efforts and context figures")
    _session_options(p)
    _debug_option(p)
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("search", help="ranked search over all efforts (no model needed)")
    _session_options(p)
    _debug_option(p)
    p.add_argument("--limit", type=int, default=10, metavar="N", help="results to show (default 10)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("query", help="what to look for")

    p = sub.add_parser("restore", help="import a coding-agent transcript as a concluded effort")
    _session_options(p)
    _model_options(p)
    _debug_option(p)
    p.add_argument("transcript", type=Path)
    p.add_argument("--format", default="auto", help="auto|opencode|opencode-export|claude-code|claude-code-terminal|aider|specstory")
    p.add_argument("--root", type=Path, help="directory the evidence search may read files under")
    p.add_argument("--max-turns", type=int, metavar="N")
    p.add_argument("--skip-evidence-search", action="store_true")
    p.add_argument("--max-searches", type=int, default=8, metavar="N")
    p.add_argument("--dump-turns", action="store_true", help="print the turn-by-turn summaries")
    p.add_argument("--parse-only", action="store_true", help="parse and list turns; no model")
    p.add_argument("--json", action="store_true", help="with --parse-only: print JSON")

    p = sub.add_parser("replay", help="replay a transcript through the engine: ccm vs naive tokens per turn")
    _debug_option(p)
    p.add_argument("transcript", type=Path)
    p.add_argument("--efforts", type=Path, metavar="BOUNDARIES.yaml", help="effort boundaries (first_turn/last_turn)")
    _model_options(p)
    p.add_argument("--format", default="auto")
    p.add_argument("--json", action="store_true")
    p.add_argument("--plot", type=Path, metavar="FILE", help="write an SVG (or PNG) plot of naive vs ccm tokens")
    p.add_argument("--keep-session", type=Path, metavar="DIR",
                   help="keep the replayed session in DIR (new or empty) to open it with ccm-tui --session-dir")

    p = sub.add_parser("demo", help="offline scripted demo of the TUI (no key, no network)")
    _debug_option(p)

    p = sub.add_parser("repair", help="rebuild a broken manifest.yaml from the event log (keeps the broken file)")
    _session_options(p)
    _debug_option(p)
    return parser


# ----------------------------------------------------------------------------- helpers
def _retry_base() -> float:
    try:
        return max(0.0, float(os.environ.get("CCM_RETRY_BASE_SECONDS", "1")))
    except ValueError:
        return 1.0


# ----------------------------------------------------------------------------- send
class _SendPrinter:
    """Prints a turn's events for a human: streamed text, banners on their own lines."""

    def __init__(self) -> None:
        self.at_line_start = True

    def __call__(self, event) -> None:
        from .core import turn_events as te

        out = sys.stdout
        if isinstance(event, te.TextDelta):
            out.write(event.text)
            self.at_line_start = event.text.endswith("\n")
        elif isinstance(event, te.Banner):
            if not self.at_line_start:
                out.write("\n")
            out.write(event.text + "\n")
            self.at_line_start = True
        elif isinstance(event, te.Paused):
            import time

            wait = max(0, int(event.resume_at - time.time()))
            sys.stderr.write(f"SESSION PAUSED — {event.reason}; retrying in {wait} s (Ctrl+C to cancel)\n")
        elif isinstance(event, te.Resumed):
            sys.stderr.write("SESSION RESUMED\n")
        elif isinstance(event, te.RoundReset):
            if not self.at_line_start:
                out.write("\n")
            self.at_line_start = True
        out.flush()

    def finish(self) -> None:
        if not self.at_line_start:
            sys.stdout.write("\n")


def cmd_send(args: argparse.Namespace) -> int:
    from .core.engine import open_engine
    from .core.orchestrator import UserInputError
    from .core.recovery import recover, unanswered_turn

    message = args.message
    if args.retry_orphan and message:
        raise UsageError("give either a message or --retry-orphan, not both")
    if not args.retry_orphan and not message:
        raise UsageError("send needs a message (or '-' to read standard input)")
    if message == "-":
        message = sys.stdin.read()
    settings = load_settings_from(args)
    if not settings.model:
        raise CliError("no model configured: pass --model, set CCM_MODEL, or add model = \"...\" to "
                       f"{paths.config_file()} (see README: Configuration)")
    engine = open_engine(session_dir_from(args), settings, retry_base=_retry_base())
    try:
        report = recover(engine.session)
        if report.changed and not args.json:
            sys.stderr.write(report.one_line() + "\n")
        if args.retry_orphan:
            orphan = unanswered_turn(engine.session)
            if orphan is None:
                raise CliError("there is no unanswered message to retry")
            message = orphan.text
        printer = None if args.json else _SendPrinter()
        try:
            result = asyncio.run(engine.run_turn(message, printer))
        except UserInputError as exc:
            raise UsageError(str(exc)) from None
        except KeyboardInterrupt:
            raise CliError("cancelled; your message and the partial reply were logged") from None
        if printer is not None:
            printer.finish()
        if args.json:
            print_json(send_json(result, engine))
        if result.error:
            hint = " (your message is kept: ccm-tui send --retry-orphan)" if result.logged_to is None else ""
            raise CliError(f"{result.error}{hint}")
        return EXIT_OK
    finally:
        engine.close()


def send_json(result, engine) -> dict[str, Any]:
    active = engine.session.efforts.active
    data = {
        "turn": result.turn,
        "reply": result.reply,
        "banners": result.banners,
        "logged_to": result.logged_to,
        "active_effort": active.id if active else None,
        "tool_calls": result.tool_calls,
        "context": (result.context or engine.orchestrator.figures()).as_dict(),
        "request": result.request.as_dict() if result.request else None,
        "usage": engine.orchestrator.usage_total,
    }
    if result.error:
        data["error"] = result.error
    return data


# ----------------------------------------------------------------------------- status
def cmd_status(args: argparse.Namespace) -> int:
    from .config import load_settings
    from .core.engine import preview_context
    from .core.session import Session
    from .core.tokens import TokenCounter

    settings = load_settings()
    directory = session_dir_from(args)
    if not directory.is_dir():
        raise CliError(f"no session at {directory} (it is created by the first 'ccm-tui send' or the TUI)")
    session = Session.open(directory, readonly=True, ambient_window=settings.ambient_window,
                           counter=TokenCounter(settings.model))
    budget = settings.token_budget or session.state.budget or 16_000
    data = session.status_dict()
    data["context"] = preview_context(session, budget, settings.message_max_tokens)
    data["session_dir"] = str(directory)
    data["clean_shutdown"] = session.state.clean_shutdown
    data["compactions"] = session.state.compaction_count
    if args.json:
        print_json(data)
        return EXIT_OK
    print(render_status(data))
    return EXIT_OK


def render_status(data: dict[str, Any]) -> str:
    ctx = data["context"]
    lines = [f"session {data['session_dir']}  ·  turn {data['turn']}"]
    groups = {"open": [], "expanded": [], "concluded": [], "evicted": []}
    for e in data["efforts"]:
        if e["status"] == "open":
            groups["open"].append(f"  {'▶' if e['active'] else ' '} {e['id']}  ({e['raw_tokens']} tokens)")
        elif e["expanded"]:
            groups["expanded"].append(f"    {e['id']}  ({e['turns_since_reference']} turn(s) idle)")
        elif e["evicted"]:
            groups["evicted"].append(f"    {e['id']}: {(e['summary'] or '')[:90]}")
        else:
            groups["concluded"].append(f"    {e['id']}: {(e['summary'] or '')[:90]}")
    titles = {"open": "Open", "expanded": "Expanded", "concluded": "Concluded", "evicted": "Evicted (searchable)"}
    for key, rows in groups.items():
        if rows:
            lines.append(f"{titles[key]}:")
            lines.extend(rows)
    layers = ", ".join(f"{k} {v}" for k, v in ctx["layers"].items() if v)
    lines.append(
        f"context {ctx['total']:,} / {ctx['budget']:,} tokens (naive {ctx['naive']:,}, "
        f"saved {ctx['savings']:.0%})  [{layers}]"
    )
    return "\n".join(lines)


# ----------------------------------------------------------------------------- search
def cmd_search(args: argparse.Namespace) -> int:
    from .core.efforts import load_manifest
    from .core.search import EffortIndex, SearchIndexError
    from .core.session import SEARCH_DB

    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    directory = session_dir_from(args)
    if not directory.is_dir():
        raise CliError(f"no session at {directory}")
    efforts = load_manifest(directory / "manifest.yaml")
    try:
        with EffortIndex(directory / SEARCH_DB) as index:
            index.sync_session(directory, ((e.id, e.status, e.summary) for e in efforts))
            hits = index.search(args.query, limit=args.limit)
    except SearchIndexError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json({"results": [
            {"id": h.id, "status": h.status, "summary": h.summary, "score": round(h.score, 4), "snippet": h.snippet}
            for h in hits
        ]})
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


# ----------------------------------------------------------------------------- tui
def cmd_tui(args: argparse.Namespace, *, demo: bool = False) -> int:
    from .ui.app import run_app

    settings = None if demo else load_settings_from(args)
    directory = None if demo else session_dir_from(args)
    return run_app(settings=settings, session_dir=directory, demo=demo)


def cmd_restore(args: argparse.Namespace) -> int:
    from .restore.command import run_restore

    return run_restore(args)


def cmd_replay(args: argparse.Namespace) -> int:
    from .replay import run_replay

    return run_replay(args)


def cmd_repair(args: argparse.Namespace) -> int:
    from .core.repair import rebuild_manifest

    directory = session_dir_from(args)
    if not directory.is_dir():
        raise CliError(f"no session at {directory}")
    report = rebuild_manifest(directory)
    for line in report.lines():
        print(line)
    return EXIT_OK


COMMANDS = {
    "repair": cmd_repair,
    "send": cmd_send,
    "status": cmd_status,
    "search": cmd_search,
    "restore": cmd_restore,
    "replay": cmd_replay,
    "demo": lambda args: cmd_tui(args, demo=True),
}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    try:
        handler = COMMANDS.get(args.command) or cmd_tui
        return handler(args)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        sys.stderr.write(f"ccm-tui: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("ccm-tui: interrupted\n")
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place errors become exit codes
        if debug:
            raise
        from .core.eventlog import redact

        message = str(exc) if isinstance(exc, (CliError, OSError, ValueError)) or _is_ours(exc) else (
            f"{type(exc).__name__}: {exc}")
        from .core.efforts import ManifestError

        if isinstance(exc, ManifestError):
            where = getattr(args, "session_dir", None) or "<session dir>"
            message += f" — fix it by hand, or run 'ccm-tui repair --session-dir {where}' to rebuild it from the event log (nothing is lost)"
        sys.stderr.write(f"ccm-tui: {redact(' '.join(message.split()))}\n")
        return EXIT_RUNTIME


def _is_ours(exc: Exception) -> bool:
    return type(exc).__module__.startswith("ccm_tui")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
