"""The ``ccm-tui`` entry point (the commands live in :mod:`ccm_tui.commands`)."""

from __future__ import annotations

import os
import sys

from .commands import main

__all__ = ["main", "entry"]


def entry() -> None:
    """The console script: run, flush, and leave without tearing down litellm's module graph
    (about 1.5 s of interpreter shutdown after the work is done and on disk)."""
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    if "litellm" in sys.modules:
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
