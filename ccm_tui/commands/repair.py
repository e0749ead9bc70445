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
    p.add_argument(
        "--force",
        action="store_true",
        help="rebuild even a valid manifest (its entries are kept; the event log adds what it lacks)",
    )


def run(args: argparse.Namespace) -> int:
    from ..core.api import rebuild_manifest

    directory = session_dir_from(args)
    require_session(directory)
    for line in rebuild_manifest(directory, force=args.force).lines():
        print(line)
    return EXIT_OK
