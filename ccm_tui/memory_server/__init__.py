"""``ccm-tui mcp``: the user's efforts as memory for every agent, over the Model Context Protocol on stdio.

Other agents (Claude Code, Codex CLI, opencode, Cursor …) search the user's efforts and
ambient chat, read their logs around a hit, list and inspect them — without ever taking
the session's writer lock, so it answers while ccm-tui is mid-turn — and, when the user
allows writes, leave notes and reopen efforts through the session controller.

It sits beside the UI: it reaches the core only through ``ccm_tui.core.api`` (its
``SessionReader`` for reads, a session controller for writes) and never imports textual or litellm.
"""

from __future__ import annotations

from .scope import Scope
from .server import ServerOptions, build_server, serve
from .writes import WRITE_WAIT

__all__ = ["WRITE_WAIT", "Scope", "ServerOptions", "build_server", "serve"]
