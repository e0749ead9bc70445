"""A real terminal: the installed ``ccm-tui`` in tmux at 150x45 against the fake server.

Starts the app, sends a message with send-keys, waits (polling capture-pane against a
deadline) for the reply on screen, types a two-line message with Alt+Enter, opens an
effort, and quits with Ctrl+Q.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _ccm_tui() -> str | None:
    beside = Path(sys.executable).with_name("ccm-tui")
    return str(beside) if beside.exists() else shutil.which("ccm-tui")


@pytest.fixture
def tmux(tmp_path):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    socket = f"ccm-smoke-{os.getpid()}-{tmp_path.name}"  # (one tmux server per test: a killed one may linger)

    def run(*args: str, check: bool = True) -> str:
        result = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=check)
        return result.stdout

    yield run
    run("kill-server", check=False)


def _screen(tmux) -> str:
    return tmux("capture-pane", "-p", "-t", "smoke")


def _wait_for(tmux, text: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _screen(tmux)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} did not appear on screen within {timeout} s; the screen was:\n{screen}")


def _session_alive(tmux) -> bool:
    return "smoke" in tmux("ls", check=False)


def _app_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "OPENAI_API_KEY": "sk-test-fake",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": str(ROOT),
    }


@contextlib.contextmanager
def _app_in_tmux(tmp_path: Path, tmux, session: Path, script: object, *server_args: str) -> Iterator[str]:
    """The installed ccm-tui on ``session`` in tmux (the "smoke" window, 150x45), against the fake server
    run as a process with ``script`` (and ``server_args``); yields once the app is ready (its program,
    for later commands). The server stops on the way out."""
    program = _ccm_tui()
    if program is None:
        pytest.skip("ccm-tui is not installed")
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script))
    env = _app_env(tmp_path)
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.openai_server", "--port", "0", "--script", str(script_file)]
        + list(server_args),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        assert base_url.startswith("http://")
        command = f"{program} --session-dir {session} --model openai/fake-model --api-base {base_url}"
        exports = " ".join(
            f"{k}={v}"
            for k, v in env.items()
            if k in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "OPENAI_API_KEY", "LITELLM_LOCAL_MODEL_COST_MAP")
        )
        tmux(
            "new-session", "-d", "-s", "smoke", "-x", "150", "-y", "45", f"env -u COLUMNS -u LINES {exports} {command}"
        )
        _wait_for(tmux, "of budget")  # the session is open and measured
        yield program
    finally:
        server.terminate()
        server.wait(timeout=10)


def _app_streaming(
    tmp_path: Path, tmux, session: Path, reply: str, *, slow: float
) -> contextlib.AbstractContextManager[str]:
    """:func:`_app_in_tmux` with a server that answers every message with ``reply``, streamed ``slow``
    seconds a chunk."""
    script = {"replies": [], "fallback": {"type": "text", "content": reply}}
    return _app_in_tmux(tmp_path, tmux, session, script, "--slow-stream", str(slow))


def test_chat_in_a_real_terminal(tmp_path, tmux):
    script = [
        {"type": "text", "content": "Hello from the fake server!"},
        {"type": "tool_calls", "calls": [{"name": "open_effort", "arguments": {"name": "smoke test"}}]},
        {"type": "text", "content": "Effort opened, let's go."},
    ]
    with _app_in_tmux(tmp_path, tmux, tmp_path / "session", script):
        _wait_for(tmux, "model  openai/fake-model")

        tmux("send-keys", "-t", "smoke", "-l", "hello there")
        tmux("send-keys", "-t", "smoke", "Enter")
        screen = _wait_for(tmux, "Hello from the fake server!")
        assert "hello there" in screen

        # Alt+Enter (ESC + CR, as tmux sends it) starts a new line; it does not send
        tmux("send-keys", "-t", "smoke", "-l", "let's run")
        tmux("send-keys", "-t", "smoke", "M-Enter")
        tmux("send-keys", "-t", "smoke", "-l", "a smoke test")
        screen = _wait_for(tmux, "a smoke test")
        assert not any("let's run" in line and "a smoke test" in line for line in screen.splitlines())
        tmux("send-keys", "-t", "smoke", "Enter")
        screen = _wait_for(tmux, "--- Opened effort: smoke-test ---")
        _wait_for(tmux, "Effort opened, let's go.")
        assert "OPEN  1" in _screen(tmux)

        tmux("send-keys", "-t", "smoke", "C-q")
        deadline = time.monotonic() + 15
        while _session_alive(tmux) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _session_alive(tmux), "ccm-tui did not quit on Ctrl+Q"
        events = (tmp_path / "session" / "events.jsonl").read_text().splitlines()
        assert json.loads(events[-1])["event"] == "session_end"


def test_bursts_of_typing_in_a_real_terminal_are_sent_once_each(tmp_path, tmux):
    """Messages typed with no pause while a reply streams and right after a resize: each logged once, in
    order, never joined (tmux delivers each burst to the app in one write)."""
    session = tmp_path / "session"
    with _app_streaming(tmp_path, tmux, session, "Noted. " * 30, slow=0.03):
        tmux("send-keys", "-t", "smoke", "-l", "tell me a long story")
        tmux("send-keys", "-t", "smoke", "Enter")
        _wait_for(tmux, "Noted.")  # the reply is streaming
        tmux("send-keys", "-t", "smoke", "capital of Peru?", "Enter", "conclude [it] please", "Enter")
        tmux("resize-window", "-t", "smoke", "-x", "100", "-y", "30")
        tmux("send-keys", "-t", "smoke", "after the resize", "Enter", "and again", "Enter")
        expected = ["tell me a long story", "capital of Peru?", "conclude [it] please", "after the resize", "and again"]
        deadline = time.monotonic() + 60
        logged: list[str] = []
        while time.monotonic() < deadline:
            raw = session / "raw.jsonl"
            lines = raw.read_text().splitlines() if raw.exists() else []
            logged = [r["content"] for r in map(json.loads, lines) if r.get("role") == "user"]
            if len(logged) >= len(expected):
                break
            time.sleep(0.2)
        assert logged == expected
        tmux("send-keys", "-t", "smoke", "C-q")


def test_closing_the_terminal_is_a_clean_quit(tmp_path, tmux):
    """SIGHUP (the terminal window closed) ends the session as Ctrl+Q does: the next start recovers nothing."""
    program = _ccm_tui()
    if program is None:
        pytest.skip("ccm-tui is not installed")
    session = tmp_path / "session"
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "OPENAI_API_KEY": "sk-test-fake",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    command = f"{program} --session-dir {session} --model openai/fake-model --api-base http://127.0.0.1:9/v1"
    tmux("new-session", "-d", "-s", "smoke", "-x", "150", "-y", "45", f"env -u COLUMNS -u LINES {exports} {command}")
    _wait_for(tmux, "of budget")
    tmux("kill-server")  # the terminal goes away: SIGHUP to the app
    deadline = time.monotonic() + 15
    last: dict = {}
    while time.monotonic() < deadline:
        lines = (session / "events.jsonl").read_text().splitlines()
        last = json.loads(lines[-1])
        if last["event"] == "session_end":
            break
        time.sleep(0.1)
    assert last["event"] == "session_end"
    result = subprocess.run(
        [program, "status", "--session-dir", str(session)], capture_output=True, text=True, env={**os.environ, **env}
    )
    assert result.returncode == 0 and "RECOVERY" not in result.stderr + result.stdout


def _exited(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_closing_the_terminal_while_a_reply_streams_ends_the_process(tmp_path, tmux):
    """The terminal closed while the screen was busy: Textual's writer thread dies on its first write to the
    gone terminal, its queue fills within a few frames, and the UI loop blocked in a write for good — the
    quit that SIGHUP asked for never ran, and the process stayed, spinning a core with the session open
    (found as leftover processes after bench_startup). It must end, the reply so far written."""
    session = tmp_path / "session"
    with _app_streaming(tmp_path, tmux, session, "Streaming on. " * 400, slow=0.02) as program:
        pid = int(tmux("display-message", "-p", "-t", "smoke", "#{pane_pid}").strip())
        tmux("send-keys", "-t", "smoke", "tell me a long story", "Enter")
        _wait_for(tmux, "Streaming on. Streaming on.")
        tmux("kill-server")  # the terminal goes away mid-stream: SIGHUP, and every write fails
        assert _exited(pid, 30), "ccm-tui kept running after its terminal closed"
    events = [json.loads(line) for line in (session / "events.jsonl").read_text().splitlines()]
    assert events[-1]["event"] == "session_end"
    raw = (session / "raw.jsonl").read_text()
    assert "tell me a long story" in raw and "Streaming on." in raw  # the reply so far, written
    result = subprocess.run(
        [program, "status", "--session-dir", str(session)],
        capture_output=True,
        text=True,
        env=_app_env(tmp_path),
        timeout=60,
    )
    assert result.returncode == 0 and "RECOVERY" not in result.stderr + result.stdout


def test_effort_list_keys_in_a_real_terminal_never_reach_the_input(tmp_path, tmux):
    """Ctrl+G, Down to a concluded effort, ``e`` then ``c`` 0.3 s later, then Up, Up (issue 38, item 2): the
    expansion runs, and the input stays empty (neither ``ec`` typed nor a previous message recalled)."""
    from tests.helpers.tui import build_session

    session = build_session(tmp_path / "session", 11)
    script = {"replies": [], "fallback": {"type": "text", "content": "ok"}}
    with _app_in_tmux(tmp_path, tmux, session, script):
        assert "Message the model" in _wait_for(tmux, "flaky-login-test")
        for keys, pause in (("C-g", 0.3), ("Down", 0.3), ("e", 0.3), ("c", 0.3), ("Up", 0.1), ("Up", 0.5)):
            tmux("send-keys", "-t", "smoke", keys)
            time.sleep(pause)
        _wait_for(tmux, "Expanded effort: flaky-login-test")
        time.sleep(0.5)
        screen = _screen(tmux)
        assert "Message the model" in screen, f"the input is not empty:\n{screen}"
        assert "Back to input" in screen  # the footer names the list's keys: the focus is still there
        tmux("send-keys", "-t", "smoke", "C-q")
