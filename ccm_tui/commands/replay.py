"""``ccm-tui replay TRANSCRIPT``: naive vs ccm tokens per turn, as a table, JSON or a plot."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from .common import EXIT_OK, CliError, UsageError, debug_option, model_options


def add_parser(sub: Any) -> None:
    p = sub.add_parser("replay", help="replay a transcript through the engine: ccm vs naive tokens per turn")
    debug_option(p)
    p.add_argument("transcript", type=Path)
    p.add_argument("--efforts", type=Path, metavar="BOUNDARIES.yaml", help="effort boundaries (first_turn/last_turn)")
    model_options(p)
    p.add_argument("--format", default="auto")
    p.add_argument("--json", action="store_true")
    p.add_argument("--plot", type=Path, metavar="FILE", help="write an SVG (or PNG) plot of naive vs ccm tokens")
    p.add_argument(
        "--keep-session",
        type=Path,
        metavar="DIR",
        help="keep the replayed session in DIR (new or empty) to open it with ccm-tui --session-dir",
    )


class _Progress:
    """Turn progress on stderr: a live line on a terminal, otherwise a line every few seconds."""

    def __init__(self, every: float = 5.0) -> None:
        self.tty = sys.stderr.isatty()
        self.every = every
        self.started = time.monotonic()
        self.last = self.started
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self.tty:
            if now - self.last >= 0.2 or done == total:
                sys.stderr.write(f"\rreplaying: turn {done}/{total}")
                sys.stderr.flush()
                self.last = now
                self.shown = True
        elif now - self.last >= self.every:
            sys.stderr.write(f"replaying: turn {done}/{total} ({now - self.started:.0f} s)\n")
            sys.stderr.flush()
            self.last = now
            self.shown = True

    def finish(self) -> None:
        if self.tty and self.shown:
            sys.stderr.write("\r" + " " * 40 + "\r")
            sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    from ..config import load_settings, prepare_offline_libraries
    from ..replay import replay_file
    from ..replay.plot import write_plot
    from ..replay.report import render_text, to_json

    transcript = Path(args.transcript)
    plot = getattr(args, "plot", None)
    if plot is not None and Path(plot).suffix.lower() not in (".svg", ".png"):
        raise UsageError(f"--plot {plot}: use a .svg (or .png) file name")
    if not transcript.is_file():
        raise CliError(f"{transcript}: no such file")
    efforts = getattr(args, "efforts", None)
    if efforts is not None and not Path(efforts).is_file():
        raise CliError(f"{efforts}: no such file")
    keep = getattr(args, "keep_session", None)
    if keep is not None and Path(keep).exists() and any(Path(keep).iterdir()):
        raise UsageError(f"--keep-session {keep}: the directory must be new or empty")
    settings = load_settings(model=getattr(args, "model", None), api_base=getattr(args, "api_base", None))
    prepare_offline_libraries()
    progress = _Progress()
    try:
        result = asyncio.run(
            replay_file(
                transcript,
                efforts=efforts,
                settings=settings,
                fmt=getattr(args, "format", "auto") or "auto",
                session_dir=keep,
                progress=progress,
            )
        )
    finally:
        progress.finish()
    if plot is not None:
        try:
            write_plot(result, Path(plot))
        except OSError as exc:
            raise CliError(f"cannot write {plot}: {exc.strerror or exc}") from None
    if getattr(args, "json", False):
        print(json.dumps(to_json(result), ensure_ascii=False))
    else:
        print(render_text(result))
        if plot is not None:
            print(f"plot: {plot}")
    return EXIT_OK
