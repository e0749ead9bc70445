"""The reader and the notes are tested on the session the MCP tests build (``tests/helpers/mcp_session.py``)."""

from tests.helpers.mcp_session import session_dir, template  # noqa: F401  (fixtures)
