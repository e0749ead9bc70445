"""Model facts without litellm: windows and tool support from the bundled map, what this machine learned."""

from __future__ import annotations

import json

from ccm_tui.config import model_facts_file
from ccm_tui.core.models.capabilities import (
    input_window,
    known_without_tools,
    learned_without_tools,
    model_info,
    remember_without_tools,
)


def test_windows_and_tool_support_come_from_the_bundled_map():
    assert input_window("gpt-4o-mini") == input_window("openai/gpt-4o-mini") == 128_000
    assert input_window("ollama/llama2") == 4096
    assert input_window("local/unknown-model") is None and model_info(None) == {}
    assert known_without_tools("ollama/codegeex4") is True
    assert known_without_tools("ollama/llama3.1") is False
    assert known_without_tools("ollama/llama2") is False  # unknown to the map: ask the server
    assert known_without_tools("openai/my-local-model") is False


def test_learned_models_are_remembered_and_a_damaged_file_is_not_fatal():
    assert learned_without_tools("ollama_chat/gemma") is False
    remember_without_tools("ollama_chat/gemma", "gemma does not support tools")
    remember_without_tools("openai/tiny", "no tools")
    assert learned_without_tools("ollama_chat/gemma") and learned_without_tools("openai/tiny")
    assert learned_without_tools("openai/other") is False
    data = json.loads(model_facts_file().read_text())
    assert data["no_tools"]["ollama_chat/gemma"]["reason"] == "gemma does not support tools"
    model_facts_file().write_text("{ not json")
    assert learned_without_tools("ollama_chat/gemma") is False
    remember_without_tools("ollama_chat/gemma", "again")  # rewrites the damaged file
    assert learned_without_tools("ollama_chat/gemma")


def test_a_bare_map_name_speaks_only_for_its_own_provider():
    """DeepSeek's deepseek-reasoner has no tools in the map; a local server's model of that name may."""
    assert known_without_tools("deepseek-reasoner") is True
    assert known_without_tools("openai/deepseek-reasoner") is False
    assert known_without_tools("ollama_chat/codegeex4") is True  # Ollama's entry, listed as ollama/…


def test_a_verdict_taken_from_the_map_is_asked_of_the_map_again():
    """Remembered so the notice comes once; but a litellm whose map says otherwise brings tools back."""
    from ccm_tui.core.models.capabilities import FROM_MODEL_MAP

    remember_without_tools("ollama/codegeex4", "the map says so", source=FROM_MODEL_MAP)
    remember_without_tools("openai/some-model", "the map said so once", source=FROM_MODEL_MAP)
    assert learned_without_tools("ollama/codegeex4") is True
    assert learned_without_tools("openai/some-model") is False  # the map (now) knows nothing against it


def test_a_server_s_refusal_is_remembered_for_that_server_only():
    remember_without_tools("openai/qwen", "does not support tools", api_base="http://127.0.0.1:8080/v1")
    assert learned_without_tools("openai/qwen", "http://127.0.0.1:8080/v1") is True
    assert learned_without_tools("openai/qwen", "http://127.0.0.1:11434/v1") is False  # another server: ask it
