"""The ``ccm-tui`` entry point (the commands live in :mod:`ccm_tui.commands`)."""

from __future__ import annotations

import os
import sys

from .commands import main

__all__ = ["main", "entry"]


#: What a shell reports for a command ended by SIGPIPE (128 + 13): ``ccm-tui search … | head -1``.
EXIT_CLOSED_STDOUT = 141


def entry() -> None:
    """The console script: run, flush, and leave without tearing down litellm's module graph
    (about 1.5 s of interpreter shutdown after the work is done and on disk).

    A reader that stops early (``| head -1``) closes stdout under us: that is no error, so the
    command ends quietly, as the Python docs recommend (stdout pointed at devnull so that the
    interpreter's last flush cannot complain either)."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        code = _stdout_closed()
    sys.stderr.flush()
    if "litellm" in sys.modules:
        os._exit(code)
    sys.exit(code)


def _stdout_closed() -> int:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_CLOSED_STDOUT


if __name__ == "__main__":  # pragma: no cover
    entry()
