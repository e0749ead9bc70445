"""An open session: the :class:`~.engine.Engine` that runs a turn or an action to its outcome and
answers questions, the one door that opens a session (lock, schema, recovery, budget), crash
recovery, ``repair``, notes other agents leave, ``forget`` (a text, an effort or lines taken out of
every file of a session, crash-safe; the file work in ``_scrub``), :class:`~.reader.SessionReader`, the
one read path for a session on disk (``status``, ``search``, the MCP server's reads, the engine's own),
and one search over every session of the data directory (``all_sessions``: ``search --all-sessions``).
Imports :mod:`..views` and below.
"""
