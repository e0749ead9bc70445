from tests.flows.conftest import CCM, _fast_retries, ccm  # noqa: F401  (shared fixtures)
