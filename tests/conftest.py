"""Shared test setup: offline litellm, isolated config/data dirs, a fake LLM server."""

from __future__ import annotations

import gc
import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# litellm must never hit the network at import (model cost map) or for tokenizers.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
if "TIKTOKEN_CACHE_DIR" not in os.environ:
    _spec = importlib.util.find_spec("litellm")  # locate without importing litellm
    if _spec is not None and _spec.submodule_search_locations:
        os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(
            list(_spec.submodule_search_locations)[0], "litellm_core_utils", "tokenizers"
        )

# The helpers hold asserts of their own (the flows' CLI driver, the MCP session): rewrite them as pytest
# rewrites a conftest, so that a failing one says what it compared.
pytest.register_assert_rewrite("tests.helpers")

from tests.helpers.openai_server import FakeLLMServer  # noqa: E402


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> object:
    """No cyclic garbage collection while the test modules are collected. pytest rewrites the asserts of every
    test module it imports, which allocates millions of short-lived syntax-tree nodes (freed by reference
    counting, not cyclic); with the collector on, each of its full passes walks every module loaded so far,
    which cost about a fifth of the collection's time (in every xdist worker). It runs again as usual before
    the first test."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return (yield)
    finally:
        if enabled:
            gc.enable()


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home: Path = tmp_path_factory.mktemp("ccm-env")
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("CCM_HOME", "ccm")):
        (home / sub).mkdir()
        monkeypatch.setenv(var, str(home / sub))
    for var in ("CCM_MODEL", "CCM_API_BASE", "CCM_TOKEN_BUDGET"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fake")


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server
