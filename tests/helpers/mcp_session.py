"""A session built through the scripted provider, and the real ``ccm-tui mcp`` process driven by the SDK's
stdio client."""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ccm_tui.cli import main
from tests.helpers.openai_server import FakeLLMServer, call, text, tool_calls

# The SDK's client is imported where it is used: it is slow to import, and collection (every module, in
# every xdist worker) should not pay for it.
if TYPE_CHECKING:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
MODEL = "openai/fake-model"
DETAIL = "The axolotl middleware drops the refresh header."  # only in the effort's raw log, never its summary
SUMMARY = "Auth bug: 401s after one hour fixed by refreshing tokens in an axios interceptor."
LOCKER = "My locker code at the gym is 4729, remember it."  # ambient chat that leaves the window


def send(server: FakeLLMServer, session_dir: Path, message: str, *replies: Any) -> dict[str, Any]:
    """One ``ccm-tui send --json`` turn through the real CLI entry point, in-process."""
    server.push(*replies)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(
            [
                "send",
                "--session-dir",
                str(session_dir),
                "--model",
                MODEL,
                "--api-base",
                server.base_url,
                "--json",
                message,
            ]
        )
    assert rc == 0, out.getvalue()
    return json.loads(out.getvalue())


def build_session(server: FakeLLMServer, session_dir: Path) -> None:
    """Ambient chat, an effort opened, worked on and concluded by the model, then more ambient chat
    (so the first exchange leaves the ambient window)."""
    send(server, session_dir, LOCKER, text("Noted."))
    send(
        server,
        session_dir,
        "Let's work on the auth bug: users get 401 after an hour",
        tool_calls(call("open_effort", {"name": "auth bug"}), content="Let's dig into it."),
        text("Opened. What do the 401s look like?"),
    )
    send(server, session_dir, "Which middleware strips the header?", text(DETAIL))
    send(server, session_dir, "Right, I will patch it tomorrow", text("Then patch it."))
    send(
        server,
        session_dir,
        "The auth bug is done, thanks",
        tool_calls(call("close_effort", {})),
        text(SUMMARY),
        text("Great, concluded the auth bug."),
    )
    for i in range(11):
        send(server, session_dir, f"small talk number {i} about the weather", text(f"Reply {i} about the weather."))


# Built sessions by pytest's base temporary directory: the memory_server and core/engine conftests both
# import the fixture below, each as a fixture of its own, and the session is built once per run.
_BUILT: dict[Path, Path] = {}


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One built session, copied into each test's data directory (building takes seconds)."""
    built = _BUILT.get(tmp_path_factory.getbasetemp())
    if built is not None:
        return built
    base = tmp_path_factory.mktemp("mcp-template")
    with pytest.MonkeyPatch.context() as mp:
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "CCM_HOME"):
            (base / var).mkdir()
            mp.setenv(var, str(base / var))
        for var in ("CCM_MODEL", "CCM_API_BASE", "CCM_TOKEN_BUDGET", "CCM_SESSION_DIR"):
            mp.delenv(var, raising=False)
        mp.setenv("OPENAI_API_KEY", "sk-test-fake")
        mp.setenv("CCM_RETRY_BASE_SECONDS", "0")
        with FakeLLMServer() as server:
            build_session(server, base / "session")
    _BUILT[tmp_path_factory.getbasetemp()] = base / "session"
    return base / "session"


def sessions_root() -> Path:
    return Path(os.environ["CCM_HOME"]) / "sessions"


@pytest.fixture
def session_dir(template: Path) -> Path:
    """The built session as the default session of this test's data directory."""
    target = sessions_root() / "default"
    shutil.copytree(template, target)
    return target


def log_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass
class Answer:
    error: bool
    text: str


class Client:
    """The SDK's client session, with calls answered as (isError, text)."""

    def __init__(self, session: ClientSession, init: Any) -> None:
        self.session = session
        self.init = init

    async def call(self, name: str, **arguments: Any) -> Answer:
        result = await self.session.call_tool(name, arguments)
        texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
        return Answer(bool(result.is_error), "\n".join(texts))

    async def tools(self) -> dict[str, Any]:
        return {tool.name: tool for tool in (await self.session.list_tools()).tools}


def server_params(*args: str) -> StdioServerParameters:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable, args=["-m", "ccm_tui.cli", "mcp", *args], env=dict(os.environ), cwd=str(ROOT)
    )


@contextlib.asynccontextmanager
async def mcp_server(*args: str, errlog: Path | None = None) -> AsyncIterator[Client]:
    """The real ``ccm-tui mcp`` process (stderr to ``errlog``), initialized."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    errors = errlog or Path(os.environ["CCM_HOME"]) / "mcp-stderr.log"
    with open(errors, "w", encoding="utf-8") as err:
        async with (
            stdio_client(server_params(*args), errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            yield Client(session, init)


def first_hit_lines(answer: str) -> tuple[int, int]:
    """The line numbers of the first hit of a search answer ("… · lines 3-5 · …")."""
    for line in answer.splitlines():
        if " · lines " in line:
            first, last = line.split(" · lines ", 1)[1].split(" ", 1)[0].split("-")
            return int(first), int(last)
    raise AssertionError(f"no lines in: {answer}")


INITIALIZE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def read_answers(stdout: Any, ids: set[Any], timeout: float) -> tuple[list[dict[str, Any]], bytes]:
    """The JSON lines a server writes on ``stdout`` until each of ``ids`` is answered, the server ends or
    ``timeout`` seconds pass; and the start of a line not yet ended. Read from the pipe's descriptor, never
    through the buffered file: a ``readline`` takes in every line that has arrived, and ``poll`` then says
    nothing of the ones it keeps — two answers arriving together left the second unread until the deadline
    (which looked like a server that stopped answering)."""
    fd = stdout.fileno()
    poller = select.poll()  # (not select(): a test process may hold over 1,024 descriptors)
    poller.register(fd, select.POLLIN)
    out: list[dict[str, Any]] = []
    tail = b""
    deadline = time.monotonic() + timeout
    while ids - {m.get("id") for m in out} and (left := deadline - time.monotonic()) > 0:
        if not poller.poll(int(min(left, 1.0) * 1000) + 1):
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break  # the server ended
        *lines, tail = (tail + chunk).split(b"\n")
        out.extend(json.loads(line) for line in lines if line.strip())  # every line parses as JSON
    return out, tail


def raw_exchange(lines: list[Any], ids: set[Any], *args: str, client: str = "t") -> tuple[list[dict[str, Any]], str]:
    """Raw lines (a str as it is, anything else as JSON) into a real ``ccm-tui mcp`` over pipes, after the
    handshake (``client``: the name the client gives itself); every line it writes on stdout until each of
    ``ids`` is answered and stdin is closed (each must parse as JSON), and its stderr."""
    params = server_params(*args)
    proc = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=params.env,
        cwd=params.cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    hello = json.loads(json.dumps(INITIALIZE))
    hello[0]["params"]["clientInfo"]["name"] = client
    sent = [*hello, *lines]
    proc.stdin.write("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in sent))
    proc.stdin.flush()
    out, tail = read_answers(proc.stdout, {1} | ids, timeout=120)
    proc.stdin.close()
    rest, errors = tail.decode() + proc.stdout.read(), proc.stderr.read()
    assert proc.wait(timeout=60) == 0, errors
    return out + [json.loads(line) for line in rest.splitlines()], errors


def tool_call(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    """A raw JSON-RPC ``tools/call`` request, for :func:`raw_exchange`."""
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
