"""``ccm-tui repair``: rebuild a broken ``manifest.yaml`` from the event log (the broken file is kept)."""

from __future__ import annotations

import argparse
from typing import Any

from .common import (
    EXIT_OK,
    debug_option,
    require_session,
    session_dir_from,
    session_options,
)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("repair", help="rebuild a broken manifest.yaml from the event log (keeps the broken file)")
    session_options(p)
    debug_option(p)


def run(args: argparse.Namespace) -> int:
    from ..core.engine import rebuild_manifest

    directory = session_dir_from(args)
    require_session(directory)
    report = rebuild_manifest(directory)
    for line in report.lines():
        print(line)
    return EXIT_OK
