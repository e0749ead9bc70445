"""A typed model id is checked before the app switches to it."""

from __future__ import annotations

import socket

from ccm_tui.core.api import check_model


def test_an_id_litellm_does_not_know_is_refused_saying_how_to_write_one():
    check = check_model("gpt-nonexistent")
    assert not check.ok and "provider/model" in check.reason and "gpt-nonexistent" in check.reason
    assert not check_model("nosuchprovider/some-model").ok
    assert not check_model("openai/gpt 4o").ok


def test_ids_in_litellms_model_map_are_taken_with_or_without_their_provider():
    assert check_model("gpt-4o-mini") == check_model("openai/gpt-4o-mini")
    assert check_model("gpt-4o-mini").ok and check_model("gpt-4o-mini").reason == ""


def test_an_unlisted_model_of_a_known_provider_is_taken_with_a_caution():
    check = check_model("ollama/my-own-finetune")
    assert check.ok and "not in litellm's model list" in check.reason


def test_a_server_given_by_api_base_answers_from_its_model_list(llm_server):
    llm_server.serve_models("qwen2.5-7b-instruct", "llama-3.1-8b")
    assert check_model("openai/qwen2.5-7b-instruct", llm_server.base_url).ok
    refused = check_model("openai/gpt-nonexistent", llm_server.base_url)
    assert not refused.ok and "qwen2.5-7b-instruct" in refused.reason and "gpt-nonexistent" in refused.reason


def test_a_server_that_cannot_be_reached_does_not_block_the_switch():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    check = check_model("openai/anything", f"http://127.0.0.1:{port}/v1")
    assert check.ok and "could not be asked" in check.reason
