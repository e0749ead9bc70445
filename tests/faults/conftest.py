"""The fault tests drive ``ccm-tui`` commands as the flows do (``tests/helpers/cli_session.py``)."""

from tests.helpers.cli_session import _fast_retries, ccm  # noqa: F401  (fixtures)
