"""The session controller: the one object the TUI, ``send``, slash commands and the MCP server drive a
session through; its run state, intents and events (:mod:`.run_state`), its session thread, and
the slash commands. Imports :mod:`..engine` and below.
"""
