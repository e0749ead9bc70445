"""An open session: the :class:`~.engine.Engine` that runs a turn or an action to its outcome and
answers questions, the one door that opens a session (lock, schema, recovery, budget), crash
recovery, ``repair``, notes other agents leave, and the read-only reader the MCP server keeps.
Imports :mod:`..views` and below.
"""
