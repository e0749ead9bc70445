"""The model picker's lists: a server's /models, litellm's bundled map for the providers whose key
is set (chat models only), and how typed text narrows them. litellm itself is never imported."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from ccm_tui.config import PROVIDER_KEYS, configured_providers
from ccm_tui.core.api import CatalogEntry, ModelGroup, check_model, match_models, provider_groups, server_group
from ccm_tui.core.models.capabilities import model_map
from tests.helpers.ollama_server import FakeOllamaServer


@pytest.fixture
def keys(monkeypatch):
    """No provider key set (the suite sets OPENAI_API_KEY); ``keys(NAME, …)`` sets some."""
    for names in PROVIDER_KEYS.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)

    def set_keys(*names: str) -> dict[str, str]:
        for name in names:
            monkeypatch.setenv(name, "sk-test-value")
        return configured_providers()

    return set_keys


def test_configured_providers_are_the_ones_whose_key_is_set(keys):
    assert keys() == {}
    assert keys("ANTHROPIC_API_KEY", "GOOGLE_API_KEY") == {"anthropic": "ANTHROPIC_API_KEY", "gemini": "GOOGLE_API_KEY"}
    assert keys("GEMINI_API_KEY")["gemini"] == "GEMINI_API_KEY"  # litellm's own name is preferred


def test_only_the_configured_providers_chat_models_are_listed(keys):
    keys("ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY")
    groups = provider_groups()
    assert [g.source for g in groups] == ["anthropic", "deepseek"]
    table = model_map()
    for group in groups:
        assert group.entries, f"litellm's map lists no {group.source} chat model"
        for entry in group.entries:
            assert entry.source == group.source and entry.id.startswith(group.source + "/")
            record = table.get(entry.id) or table[entry.name]
            assert record["mode"] == "chat" and record["litellm_provider"] == group.source
    ids = [e.id for g in groups for e in g.entries]
    assert len(ids) == len(set(ids))  # deepseek-chat and deepseek/deepseek-chat are one model
    assert not any(i.startswith("openai/") for i in ids)


def test_embeddings_images_and_fine_tune_templates_are_not_offered(keys):
    keys("OPENAI_API_KEY")
    ids = {e.id for e in provider_groups()[0].entries}
    assert "openai/gpt-4o-mini" in ids
    table = model_map()
    not_chat = [k for k, v in table.items() if v.get("litellm_provider") == "openai" and v.get("mode") != "chat"]
    assert not_chat and not ids & {f"openai/{k}" for k in not_chat}
    assert not any(i.startswith("openai/ft:") for i in ids)


def test_windows_and_tool_support_come_with_each_entry(keys):
    keys("OPENAI_API_KEY", "DEEPSEEK_API_KEY")
    entries = {e.id: e for g in provider_groups() for e in g.entries}
    assert entries["openai/gpt-4o-mini"].window == 128_000 and entries["openai/gpt-4o-mini"].tools is True
    assert entries["deepseek/deepseek-reasoner"].tools is False


def test_every_listed_model_passes_the_switch_check(keys):
    keys(*(names[0] for names in PROVIDER_KEYS.values()))
    entries = [e for g in provider_groups() for e in g.entries]
    assert len(entries) > 500
    refused = [e.id for e in entries if not check_model(e.id).ok]
    assert refused == []


def test_without_any_key_the_map_part_says_so(keys):
    (group,) = provider_groups()
    assert not group.entries and "no provider key is set" in group.note and "OPENAI_API_KEY" in group.note


def test_a_provider_the_map_lists_nothing_for_says_how_to_type_one(keys):
    (group,) = provider_groups({"nosuchprovider": "NOSUCH_API_KEY"})
    assert not group.entries and "nosuchprovider/<model>" in group.note


def test_the_servers_models_come_with_the_current_models_provider_and_stated_windows(llm_server):
    llm_server.serve_models("qwen2.5-7b-instruct", max_model_len=32_768)
    llm_server.serve_models("gpt-4o-mini")  # no window stated: the map's, by name
    group = server_group(llm_server.base_url, "hosted_vllm/qwen2.5-7b-instruct")
    assert group.served and not group.note
    assert [(e.id, e.window) for e in group.entries] == [
        ("hosted_vllm/qwen2.5-7b-instruct", 32_768),
        ("hosted_vllm/gpt-4o-mini", 128_000),
    ]
    assert server_group(llm_server.base_url, None).entries[0].id == "openai/qwen2.5-7b-instruct"


def test_ollamas_models_are_found_at_v1_models_under_its_bare_host():
    with FakeOllamaServer() as ollama:
        ollama.serve_models("llama3.1:latest")
        group = server_group(ollama.base_url, "ollama_chat/qwen2")
        assert [e.id for e in group.entries] == ["ollama_chat/llama3.1:latest"]
        assert check_model("ollama_chat/llama3.1", ollama.base_url).ok  # Ollama's ":latest" is implied
        assert not check_model("ollama_chat/mistral", ollama.base_url).ok


def test_a_server_that_does_not_answer_is_said_inline():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    group = server_group(f"http://127.0.0.1:{port}/v1", "openai/x", timeout=1.0)
    assert not group.entries and group.note.startswith("server not answering")


def _group(source: str, *ids: str) -> ModelGroup:
    return ModelGroup(source, source, tuple(CatalogEntry(i, source) for i in ids))


def test_typing_keeps_the_entries_holding_every_word_best_first():
    groups = [
        _group("server", "openai/my-gpt-4o-mini-finetune"),
        _group("openai", "openai/gpt-4o", "openai/gpt-4o-mini-2024-07-18", "openai/gpt-4o-mini", "openai/o3-mini"),
        _group("anthropic", "anthropic/claude-sonnet-4-5"),
    ]
    found = match_models(groups, "4o MINI")
    assert [[e.id for e in g.entries] for g in found.groups] == [
        ["openai/my-gpt-4o-mini-finetune"],
        ["openai/gpt-4o-mini-2024-07-18", "openai/gpt-4o-mini"],
    ]
    assert found.exact is None and found.count == 3
    exact = match_models(groups, "gpt-4o-mini")
    assert exact.exact == CatalogEntry("openai/gpt-4o-mini", "openai")
    assert exact.groups[1].entries[0] == exact.exact  # named exactly: first
    assert match_models(groups, "openai/gpt-4o").exact == CatalogEntry("openai/gpt-4o", "openai")
    assert match_models(groups, "nothing-like-it").groups == ()


def test_each_group_shows_a_limited_number_and_counts_the_rest():
    many = _group("fireworks_ai", *(f"fireworks_ai/model-{i:04}" for i in range(3_000)))
    found = match_models([many], "model", limit=50)
    assert len(found.groups[0].entries) == 50 and found.groups[0].hidden == 2_950 and found.count == 3_000


def test_the_servers_note_stays_whatever_is_typed_a_providers_only_unfiltered():
    silent = ModelGroup("server", "served at --api-base", note="server not answering (http://x)")
    noted = ModelGroup("openai", "openai", (CatalogEntry("openai/gpt-4o", "openai"),), note="through --api-base")
    assert [g.group for g in match_models([silent, noted], "claude").groups] == [silent]
    assert [g.group for g in match_models([silent, noted], "").groups] == [silent, noted]


def test_reading_the_catalog_does_not_import_litellm():
    code = (
        "import sys; from ccm_tui.core.api import provider_groups; "
        "provider_groups({'openai': 'OPENAI_API_KEY'}); print('litellm' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(result.stdout.strip().lower()) is False
