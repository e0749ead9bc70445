"""The fake OpenAI server, exercised through real litellm (1.106) over HTTP.

Facts about litellm 1.106 established by these tests (``openai/`` provider):

* Retries.  Two layers retry by default: the OpenAI SDK client inside litellm
  (``max_retries``, default 2, i.e. 3 requests for a 429/500/connection error)
  and litellm's own wrapper (``num_retries``, default ``litellm.num_retries`` =
  None).  ``num_retries=0`` disables both: litellm copies ``num_retries`` into the
  SDK's ``max_retries``, and a falsy ``num_retries`` skips the wrapper retry.
  ``max_retries=0`` alone also gives a single request unless ``litellm.num_retries``
  is set globally.  Pass ``num_retries=0`` (passing both is harmless).
* Exceptions: 429 -> ``litellm.RateLimitError``; 500 -> ``litellm.InternalServerError``
  (a subclass of ``openai.APIError``, via ``openai.InternalServerError``);
  401 -> ``litellm.AuthenticationError``; 404 -> ``litellm.NotFoundError``;
  503 -> ``litellm.ServiceUnavailableError``; client timeout ->
  ``litellm.Timeout`` (status_code 408, subclass of ``openai.APITimeoutError``);
  connection reset on a non-stream request -> ``litellm.InternalServerError``
  ("Connection error.", *not* ``APIConnectionError``); a stream cut mid-way
  -> the async iteration yields the partial chunks then raises
  ``MidStreamFallbackError`` (a ``ServiceUnavailableError``; it has
  ``.generated_content`` and ``.original_exception``, an ``APIConnectionError``).
* Retry-After: ``exc.litellm_response_headers`` (an ``httpx.Headers``, so
  case-insensitive: ``exc.litellm_response_headers["retry-after"]``).
  ``exc.response.headers`` is empty: litellm builds a synthetic response.
* ``stream_options={"include_usage": True}`` works: the last chunk yielded by
  litellm carries ``.usage`` with the server's numbers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.helpers.openai_server import (
    NO_REPLY_MESSAGE,
    FakeLLMServer,
    call,
    fault,
    hang,
    stream_cut,
    text,
    tool_calls,
)

if TYPE_CHECKING:  # bound by _litellm below
    import litellm
    import openai
    from litellm.exceptions import MidStreamFallbackError


@pytest.fixture(autouse=True, scope="module")
def _litellm() -> None:
    """litellm and openai, imported when this module's first test runs, not when pytest collects it: they take
    seconds to import, and every run (every xdist worker) collects every module."""
    global litellm, openai, MidStreamFallbackError
    import litellm
    import openai
    from litellm.exceptions import MidStreamFallbackError

    litellm.suppress_debug_info = True


MODEL = "openai/fake-model"
MESSAGES = [{"role": "user", "content": "hi"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "grep",
            "description": "Search",
            "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}},
        },
    },
]


async def complete(server: FakeLLMServer, **kw):
    args = dict(
        model=MODEL,
        api_base=server.base_url,
        api_key="sk-test-fake",
        messages=MESSAGES,
        num_retries=0,
        max_retries=0,
    )
    args.update(kw)
    return await litellm.acompletion(**args)


async def collect(server: FakeLLMServer, **kw) -> list:
    stream = await complete(server, stream=True, **kw)
    return [chunk async for chunk in stream]


def content_of(chunks: list) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


# --------------------------------------------------------------------------- happy paths


async def test_non_stream_text(llm_server: FakeLLMServer) -> None:
    llm_server.push(text("Hello, world!"))
    resp = await complete(llm_server)
    assert resp.choices[0].message.content == "Hello, world!"
    assert resp.choices[0].finish_reason == "stop"
    assert resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens
    assert llm_server.last_request["messages"] == MESSAGES
    assert llm_server.last_request["model"] == "fake-model"


async def test_non_stream_given_usage(llm_server: FakeLLMServer) -> None:
    llm_server.push(text("ok", usage={"prompt_tokens": 123, "completion_tokens": 4}))
    resp = await complete(llm_server)
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens, resp.usage.total_tokens) == (123, 4, 127)


async def test_stream_text(llm_server: FakeLLMServer) -> None:
    content = "The quick brown fox jumps over the lazy dog."
    llm_server.push(text(content))
    chunks = await collect(llm_server)
    assert content_of(chunks) == content
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) >= 10  # really split
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert llm_server.last_request["stream"] is True


async def test_stream_include_usage(llm_server: FakeLLMServer) -> None:
    llm_server.push(text("abc def", usage={"prompt_tokens": 42, "completion_tokens": 3}))
    chunks = await collect(llm_server, stream_options={"include_usage": True})
    assert content_of(chunks) == "abc def"
    usage = getattr(chunks[-1], "usage", None)
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (42, 3, 45)
    assert llm_server.last_request["stream_options"] == {"include_usage": True}


async def test_stream_two_parallel_tool_calls(llm_server: FakeLLMServer) -> None:
    args_a = {"path": "src/some/long/path/main.py"}
    args_b = {"pattern": "def \\w+\\(", "max": 10}
    llm_server.push(tool_calls(call("read_file", args_a, id="call_a"), call("grep", args_b), content="Let me look."))
    chunks = await collect(llm_server, tools=TOOLS)

    assembled: dict[int, dict] = {}
    fragments: dict[int, int] = {}
    for c in chunks:
        if not c.choices:
            continue
        for tc in c.choices[0].delta.tool_calls or []:
            slot = assembled.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
            if tc.id:
                slot["id"] = tc.id
            if tc.function.name:
                slot["name"] += tc.function.name
            if tc.function.arguments:
                slot["arguments"] += tc.function.arguments
                fragments[tc.index] = fragments.get(tc.index, 0) + 1

    assert content_of(chunks) == "Let me look."
    assert sorted(assembled) == [0, 1]
    assert assembled[0]["id"] == "call_a" and assembled[0]["name"] == "read_file"
    assert json.loads(assembled[0]["arguments"]) == args_a
    assert assembled[1]["id"] and assembled[1]["name"] == "grep"
    assert json.loads(assembled[1]["arguments"]) == args_b
    assert fragments[0] >= 3 and fragments[1] >= 3  # arguments really arrived in pieces
    assert chunks[-1].choices[0].finish_reason == "tool_calls"

    # litellm's own reassembly agrees.
    rebuilt = litellm.stream_chunk_builder(chunks, messages=MESSAGES)
    calls = rebuilt.choices[0].message.tool_calls
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("read_file", args_a),
        ("grep", args_b),
    ]


async def test_non_stream_tool_calls_and_verbatim_arguments(llm_server: FakeLLMServer) -> None:
    llm_server.push(tool_calls(call("read_file", {"path": "a.txt"}, id="c1"), call("grep", '{"pattern": "x"')))
    resp = await complete(llm_server, tools=TOOLS)
    msg = resp.choices[0].message
    assert resp.choices[0].finish_reason == "tool_calls"
    assert [(c.id, c.function.name) for c in msg.tool_calls][0] == ("c1", "read_file")
    assert json.loads(msg.tool_calls[0].function.arguments) == {"path": "a.txt"}
    assert msg.tool_calls[1].function.arguments == '{"pattern": "x"'  # malformed JSON sent verbatim


async def test_requests_recorded_with_messages_and_tools(llm_server: FakeLLMServer) -> None:
    llm_server.push(text("one"), text("two"))
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "q1"}]
    await complete(llm_server, messages=messages, tools=TOOLS)
    await complete(llm_server, messages=messages + [{"role": "assistant", "content": "one"}])
    reqs = llm_server.chat_requests()
    assert len(reqs) == 2 and reqs == llm_server.requests
    assert reqs[0]["messages"] == messages
    assert [t["function"]["name"] for t in reqs[0]["tools"]] == ["read_file", "grep"]
    assert "tools" not in reqs[1]
    assert llm_server.last_request is reqs[1] or llm_server.last_request == reqs[1]
    assert llm_server.pending == 0

    models = httpx.get(llm_server.base_url + "/models").json()
    assert [m["id"] for m in models["data"]] == ["fake-model"]


async def test_sequential_requests_mixing_stream_and_non_stream(llm_server: FakeLLMServer) -> None:
    for i in range(3):
        llm_server.push(text(f"plain {i}"), text(f"streamed {i}"))
    for i in range(3):
        assert (await complete(llm_server)).choices[0].message.content == f"plain {i}"
        assert content_of(await collect(llm_server)) == f"streamed {i}"
    assert len(llm_server.chat_requests()) == 6


def test_keep_alive_one_connection_many_requests(llm_server: FakeLLMServer) -> None:
    """Framing check at the HTTP level: one httpx connection serves all requests."""
    llm_server.push(text("a"), text("bb"), text("ccc"), text("dddd"))
    url = llm_server.base_url + "/chat/completions"
    with httpx.Client(limits=httpx.Limits(max_connections=1)) as client:
        for i, expected in enumerate(["a", "bb", "ccc", "dddd"]):
            body = {"model": "m", "messages": MESSAGES, "stream": i % 2 == 1}
            if body["stream"]:
                with client.stream("POST", url, json=body) as r:
                    assert r.headers["content-type"].startswith("text/event-stream")
                    lines = [ln for ln in r.iter_lines() if ln.startswith("data: ")]
                assert lines[-1] == "data: [DONE]"
                got = "".join(json.loads(ln[6:])["choices"][0]["delta"].get("content") or "" for ln in lines[:-1])
            else:
                r = client.post(url, json=body)
                assert r.status_code == 200 and "content-length" in r.headers
                got = r.json()["choices"][0]["message"]["content"]
            assert got == expected
    ports = {rec.client_address[1] for rec in llm_server.records}
    assert len(ports) == 1


# --------------------------------------------------------------------------- faults


async def test_429_rate_limit_with_retry_after(llm_server: FakeLLMServer) -> None:
    llm_server.push(
        fault(
            429,
            {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}},
            headers={"Retry-After": "2"},
        )
    )
    with pytest.raises(litellm.RateLimitError) as info:
        await complete(llm_server)
    exc = info.value
    assert exc.status_code == 429
    assert "Rate limit reached" in str(exc)
    assert exc.litellm_response_headers["retry-after"] == "2"
    assert len(llm_server.requests) == 1  # no silent retry


async def test_429_while_streaming_also_raises_at_call(llm_server: FakeLLMServer) -> None:
    llm_server.push(fault(429, headers={"Retry-After": "7"}))
    with pytest.raises(litellm.RateLimitError) as info:
        await collect(llm_server)
    assert info.value.litellm_response_headers["retry-after"] == "7"


@pytest.mark.parametrize("kw", [{"num_retries": 0}, {"max_retries": 0}], ids=["num_retries", "max_retries"])
async def test_either_retry_parameter_disables_retries(llm_server: FakeLLMServer, kw: dict) -> None:
    llm_server.push(*[fault(500)] * 3)
    args = {"model": MODEL, "api_base": llm_server.base_url, "api_key": "sk-test-fake", "messages": MESSAGES}
    with pytest.raises(litellm.InternalServerError):
        await litellm.acompletion(**args, **kw)
    assert len(llm_server.requests) == 1


async def test_default_retries_are_silent(llm_server: FakeLLMServer) -> None:
    """Without num_retries/max_retries the OpenAI SDK retries twice (3 requests)."""
    llm_server.push(*[fault(429, headers={"retry-after-ms": "5"})] * 2, text("finally"))
    args = {"model": MODEL, "api_base": llm_server.base_url, "api_key": "sk-test-fake", "messages": MESSAGES}
    resp = await litellm.acompletion(**args)
    assert resp.choices[0].message.content == "finally"
    assert len(llm_server.requests) == 3


@pytest.mark.parametrize(
    ("status", "exc_type"),
    [
        (500, "InternalServerError"),  # names: litellm is not imported at collection
        (401, "AuthenticationError"),
        (404, "NotFoundError"),
        (503, "ServiceUnavailableError"),
    ],
)
async def test_status_faults_map_to_litellm_exceptions(llm_server: FakeLLMServer, status: int, exc_type: str) -> None:
    llm_server.push(fault(status))
    with pytest.raises(getattr(litellm, exc_type)) as info:
        await complete(llm_server)
    assert info.value.status_code == status
    assert isinstance(info.value, openai.APIError)


async def test_500_is_an_api_error(llm_server: FakeLLMServer) -> None:
    llm_server.push(fault(500))
    with pytest.raises(litellm.InternalServerError) as info:
        await complete(llm_server)
    assert isinstance(info.value, openai.APIError)


async def test_empty_queue_answers_loud_500(llm_server: FakeLLMServer) -> None:
    with pytest.raises(litellm.InternalServerError, match=NO_REPLY_MESSAGE):
        await complete(llm_server)


async def test_responder_used_when_queue_empty(llm_server: FakeLLMServer) -> None:
    seen = []

    def responder(body):
        seen.append(body["messages"][-1]["content"])
        return text("from responder") if body["messages"][-1]["content"] == "hi" else None

    llm_server.responder = responder
    llm_server.push(text("queued first"))
    assert (await complete(llm_server)).choices[0].message.content == "queued first"
    assert (await complete(llm_server)).choices[0].message.content == "from responder"
    with pytest.raises(litellm.InternalServerError, match=NO_REPLY_MESSAGE):
        await complete(llm_server, messages=[{"role": "user", "content": "other"}])
    assert seen == ["hi", "other"]


async def test_timeout_on_hang(llm_server: FakeLLMServer) -> None:
    llm_server.push(hang(5))
    t0 = time.monotonic()
    with pytest.raises(litellm.Timeout):
        await complete(llm_server, timeout=0.3)
    assert time.monotonic() - t0 < 2


async def test_hang_then_reply(llm_server: FakeLLMServer) -> None:
    llm_server.push(hang(0.05, then=text("late")))
    assert (await complete(llm_server)).choices[0].message.content == "late"


def test_stop_interrupts_hang() -> None:
    server = FakeLLMServer().start()
    server.push(hang(30))
    result = {}

    def worker():
        try:
            httpx.post(server.base_url + "/chat/completions", json={"model": "m", "messages": MESSAGES}, timeout=10)
        except httpx.HTTPError as exc:
            result["exc"] = exc

    t = threading.Thread(target=worker)
    t.start()
    while not server.requests:
        time.sleep(0.01)
    t0 = time.monotonic()
    server.stop()
    t.join(5)
    assert time.monotonic() - t0 < 2
    assert isinstance(result.get("exc"), httpx.HTTPError)


async def test_stream_cut_raises_after_partial_content(llm_server: FakeLLMServer) -> None:
    llm_server.push(stream_cut("hello world, this never ends", after_chars=11))
    stream = await complete(llm_server, stream=True)
    got = []
    with pytest.raises(MidStreamFallbackError) as info:
        async for chunk in stream:
            got.append(chunk)
    assert content_of(got) == "hello world"
    assert isinstance(info.value, litellm.ServiceUnavailableError)
    assert isinstance(info.value.original_exception, litellm.APIConnectionError)
    assert len(llm_server.requests) == 1


async def test_stream_cut_on_non_stream_request_is_connection_error(llm_server: FakeLLMServer) -> None:
    llm_server.push(stream_cut("whatever", after_chars=3), text("next one works"))
    with pytest.raises(litellm.InternalServerError, match="Connection error"):
        await complete(llm_server)
    assert (await complete(llm_server)).choices[0].message.content == "next one works"


# --------------------------------------------------------------------------- script mode


def test_script_mode_subprocess(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "replies": [
                    {"type": "text", "content": "scripted hello"},
                    {"type": "tool_calls", "calls": [{"name": "grep", "arguments": {"pattern": "x"}}]},
                ],
                "fallback": {"type": "fault", "status": 429, "headers": {"Retry-After": "1"}},
            }
        )
    )
    record = tmp_path / "requests.jsonl"
    repo_root = Path(__file__).resolve().parents[3]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.helpers.openai_server",
            "--port",
            "0",
            "--script",
            str(script),
            "--slow-stream",
            "0.001",
            "--record",
            str(record),
        ],
        cwd=repo_root,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        url = base_url + "/chat/completions"
        with httpx.Client() as client:
            r1 = client.post(url, json={"model": "m", "messages": MESSAGES})
            assert r1.json()["choices"][0]["message"]["content"] == "scripted hello"
            with client.stream("POST", url, json={"model": "m", "messages": MESSAGES, "stream": True}) as r2:
                body = r2.read().decode()
            assert '"name": "grep"' in body and body.rstrip().endswith("data: [DONE]")
            r3 = client.post(url, json={"model": "m", "messages": MESSAGES})
            assert r3.status_code == 429 and r3.headers["retry-after"] == "1"
    finally:
        proc.terminate()
        assert proc.wait(5) == 0
    lines = [json.loads(ln) for ln in record.read_text().splitlines()]
    assert [ln["body"]["messages"] for ln in lines] == [MESSAGES] * 3
