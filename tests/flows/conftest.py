"""The flows drive ``ccm-tui`` commands in-process against the scripted provider (``tests/helpers/cli_session.py``)."""

from tests.helpers.cli_session import _fast_retries, ccm  # noqa: F401  (fixtures)
