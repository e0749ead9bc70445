"""``ccm-tui status``: efforts and context figures, read-only (never imports litellm)."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import load_settings
from .common import (
    EXIT_OK,
    debug_option,
    print_json,
    require_session,
    session_dir_from,
    session_options,
)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("status", help="show efforts and context figures")
    session_options(p)
    debug_option(p)
    p.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from ..core.api import read_status, status_text

    settings = load_settings()
    directory = session_dir_from(args)
    require_session(directory, " (it is created by the first 'ccm-tui send' or the TUI)")
    status, data = read_status(directory, settings, every_effort=args.json)
    if args.json:
        print_json(data)
    else:
        print(status_text(status, data))
    return EXIT_OK
