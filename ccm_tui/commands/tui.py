"""The TUI (no subcommand) and ``ccm-tui demo`` (the offline scripted demo)."""

from __future__ import annotations

import argparse
from typing import Any

from .common import debug_option, load_settings_from, session_dir_from


def add_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="offline scripted demo of the TUI (no key, no network)")
    debug_option(p)


def run(args: argparse.Namespace, *, demo: bool = False) -> int:
    from ..ui.app import run_app

    settings = None if demo else load_settings_from(args)
    directory = None if demo else session_dir_from(args)
    return run_app(settings=settings, session_dir=directory, demo=demo)


def run_demo(args: argparse.Namespace) -> int:
    return run(args, demo=True)
