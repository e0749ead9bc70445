"""The budget against a local model's real window (issue 38: it stayed at 16,000 against a server whose
window is 8,192): the server is asked where it can say, and a context-length error lowers the budget."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ccm_tui.config import Settings
from ccm_tui.core.models.client_setup import budget_after_overflow, resolve_budget, served_window, window_in_error

ANSWERS: dict[str, Any] = {}


class _Handler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        body = ANSWERS.get(self.path)
        payload = json.dumps(body).encode() if body is not None else b"{}"
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[str]:
    ANSWERS.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_llama_cpp_says_its_window_at_props_and_the_budget_follows(local_server: str) -> None:
    ANSWERS["/props"] = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}
    assert served_window("openai/local-model", local_server + "/v1") == 8192
    settings = Settings().with_overrides("test", model="openai/local-model", api_base=local_server + "/v1")
    assert resolve_budget(settings, ask_server=True) == 6144  # 75% of the window, not the default 16,000
    assert resolve_budget(settings) == 16_000  # (not asked: startup does not wait for the network)


def test_a_models_list_entry_states_the_window(llm_server) -> None:
    llm_server.serve_models("qwen2.5-7b", meta={"n_ctx_train": 8192})
    assert served_window("openai/qwen2.5-7b", llm_server.base_url) == 8192
    assert served_window("openai/other-model", llm_server.base_url) is None


def test_ollama_says_the_context_it_runs_with(local_server: str) -> None:
    ANSWERS["/api/show"] = {"parameters": "stop <|eot|>\nnum_ctx 8192", "model_info": {"llama.context_length": 131072}}
    assert served_window("ollama_chat/llama3.1", local_server) == 8192
    ANSWERS["/api/show"] = {"model_info": {"qwen2.context_length": 32768}}
    assert served_window("ollama/qwen2.5", local_server) == 32768


def test_a_server_that_does_not_say_leaves_the_window_unknown(local_server: str) -> None:
    assert served_window("openai/local-model", local_server) is None
    assert served_window("openai/gpt-4o-mini", None) is None  # a hosted provider is not asked


@pytest.mark.parametrize(
    ("error", "window"),
    [
        ("This model's maximum context length is 8192 tokens. However, you requested 9000 tokens", 8192),
        ("the request exceeds the available context size (8192 tokens), try increasing it", 8192),
        ("requested tokens (9100) exceed context window of 8,192", 8192),
        ("prompt is too long", None),
    ],
)
def test_the_window_a_context_length_error_states(error: str, window: int | None) -> None:
    assert window_in_error(error) == window


def test_the_budget_after_an_overflow_is_lower_or_the_failure_stands() -> None:
    assert budget_after_overflow(16_000, 15_500, "maximum context length is 8192 tokens") == 6144
    assert budget_after_overflow(16_000, 12_000, "prompt is too long") == 9000  # 75% of what was sent
    assert budget_after_overflow(6000, 5900, "maximum context length is 8192 tokens") is None  # no lower


def test_a_window_learned_from_an_error_caps_the_next_runs_budget() -> None:
    from ccm_tui.core.models.capabilities import learned_window, remember_window

    settings = Settings().with_overrides("test", model="openai/local-model", api_base="http://127.0.0.1:9/v1")
    assert resolve_budget(settings) == 16_000
    remember_window("openai/local-model", 8192, "http://127.0.0.1:9/v1")
    assert learned_window("openai/local-model", "http://127.0.0.1:9/v1") == 8192
    assert learned_window("openai/local-model", "http://elsewhere:8080/v1") is None  # another server: asked again
    assert resolve_budget(settings) == 6144
    assert resolve_budget(settings.with_overrides("test", token_budget=12_000)) == 6144  # even a configured one
