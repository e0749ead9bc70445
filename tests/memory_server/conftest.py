"""The built session the MCP tests share (``tests/helpers/mcp_session.py``)."""

from tests.helpers.mcp_session import session_dir, template  # noqa: F401  (fixtures)
