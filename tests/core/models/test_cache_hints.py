"""Prompt-cache hints and cached-token accounting (issue 39): which routes take ``cache_control``,
where the hints go, and how a provider's cached tokens are read, priced and said."""

from __future__ import annotations

from ccm_tui.core.efforts.working_context import (
    ACTIVE_HEAD,
    AMBIENT_HEAD,
    NOTE_HEAD,
    SUMMARIES_HEAD,
    cache_breakpoints,
)
from ccm_tui.core.models.litellm_client import _usage_dict, takes_cache_hints, usage_cost, with_cache_hints
from ccm_tui.core.turn.events import cache_words

SYSTEM = {"role": "system", "content": "You are ccm.\n\n## Effort state\n- no open effort"}
NOTE = {"role": "user", "content": NOTE_HEAD + "\n- budget: ..."}


def test_only_the_routes_that_cache_by_hint_take_hints():
    for model in ("anthropic/claude-3-5-sonnet-20240620", "claude-3-haiku-20240307",
                  "bedrock/anthropic.claude-3-sonnet-20240229-v1:0", "vertex_ai/claude-3-5-sonnet@20240620",
                  "openrouter/anthropic/claude-3.5-sonnet"):  # fmt: skip
        assert takes_cache_hints(model), model
    for model in ("openai/gpt-4o", "gpt-4o-mini", "gemini/gemini-1.5-pro", "ollama_chat/llama3.1",
                  "deepseek/deepseek-chat", "bedrock/meta.llama3-70b-instruct-v1:0", None):  # fmt: skip
        assert not takes_cache_hints(model), model


def test_the_breakpoints_are_the_system_message_the_ends_of_the_stable_layers_and_the_history_before_the_note():
    history = [SYSTEM, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    turn = [NOTE, {"role": "user", "content": "next"}]
    assert cache_breakpoints([*history, *turn]) == [0, 2]
    rounds = [
        *turn,
        {"role": "assistant", "content": "", "tool_calls": [{"id": "1"}]},
        {"role": "tool", "content": "{}"},
    ]
    assert cache_breakpoints([*history, *rounds]) == [0, 2, 6]  # the next round reads the tool result back
    # the message before each layer head a change of effort state rewrites from
    layered = [SYSTEM, {"role": "user", "content": SUMMARIES_HEAD + "\n- a: A."}, {"role": "user", "content": AMBIENT_HEAD},
               *history[1:], {"role": "user", "content": ACTIVE_HEAD + "x' — its conversation so far]"},
               {"role": "user", "content": "q"}, {"role": "assistant", "content": "r"}, *turn]  # fmt: skip
    assert cache_breakpoints(layered) == [0, 1, 4, 7]
    # at most four; a system message after the first is never marked (providers hoist it)
    assert cache_breakpoints(
        [SYSTEM, {"role": "system", "content": "x"}, {"role": "user", "content": AMBIENT_HEAD}, *turn]
    ) == [0, 2]


def test_hints_split_the_system_message_at_its_stable_head_and_leave_the_messages_given_alone():
    messages = [SYSTEM, {"role": "user", "content": "hi"}, NOTE]
    hinted = with_cache_hints(messages, [0, 1], len("You are ccm.\n\n"))
    head, rest = hinted[0]["content"]
    assert head == {"type": "text", "text": "You are ccm.\n\n", "cache_control": {"type": "ephemeral"}}
    assert rest == {"type": "text", "text": "## Effort state\n- no open effort"}
    assert hinted[1]["cache_control"] == {"type": "ephemeral"} and "cache_control" not in hinted[2]
    assert messages[0] is SYSTEM and "cache_control" not in messages[1]  # unchanged
    assert len(with_cache_hints([{"role": "user", "content": "x"}] * 9, list(range(9)))) == 9
    assert (
        sum("cache_control" in m for m in with_cache_hints([{"role": "user", "content": "x"}] * 9, list(range(9)))) == 4
    )


def test_cached_tokens_are_read_from_either_providers_usage():
    openai = {"prompt_tokens": 2000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1536}}
    assert _usage_dict(openai)["cached_tokens"] == 1536
    anthropic = {"prompt_tokens": 3000, "completion_tokens": 5, "cache_read_input_tokens": 2500,
                 "cache_creation_input_tokens": 400}  # fmt: skip
    assert _usage_dict(anthropic) == {"prompt_tokens": 3000, "completion_tokens": 5, "cached_tokens": 2500,
                                      "cache_write_tokens": 400}  # fmt: skip
    assert "cached_tokens" not in _usage_dict({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 0}})


def test_the_cost_prices_cache_reads_and_writes_as_the_model_map_does():
    model = "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0"  # the bundled map has its cache prices
    plain = usage_cost(model, {"prompt_tokens": 10_000, "completion_tokens": 0})
    read = usage_cost(model, {"prompt_tokens": 10_000, "completion_tokens": 0, "cached_tokens": 10_000})
    written = usage_cost(model, {"prompt_tokens": 10_000, "completion_tokens": 0, "cache_write_tokens": 10_000})
    assert plain and read and written
    assert abs(read / plain - 0.1) < 0.01 and abs(written / plain - 1.25) < 0.01


def test_the_tokens_line_says_what_the_cache_served_or_that_it_is_an_estimate():
    assert cache_words({"prompt_tokens": 11_000, "cached_tokens": 9_800}) == "(9,800 cached · 1,200 uncached)"
    words = cache_words({"prompt_tokens": 3000, "cached_tokens": 2500, "cache_write_tokens": 400})
    assert words == "(2,500 cached · 400 written to the cache · 100 uncached)"
    assert cache_words({"prompt_tokens": 5000, "cached_estimate": 4200}) == "(≈4,200 a repeated prefix, estimate)"
    assert cache_words({"prompt_tokens": 5000}) == ""
