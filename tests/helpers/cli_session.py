"""One session directory driven through the real ``ccm-tui`` entry point, in-process, against the scripted
provider; the fixtures the flows and the fault tests share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ccm_tui.cli import main
from tests.helpers.openai_server import call, text, tool_calls

MODEL = "openai/fake-model"
SUMMARY_MARK = "You write the summary"  # the summarize prompt's opening words


def is_summary_request(body: dict[str, Any]) -> bool:
    """close_effort's summary call: no tools, the summarize prompt as system message."""
    messages = body.get("messages") or []
    return not body.get("tools") and bool(messages) and SUMMARY_MARK in str(messages[0].get("content"))


class CCM:
    """One session directory, driven through the real CLI entry point."""

    def __init__(self, server, session_dir: Path, capsys: pytest.CaptureFixture[str], model: str = MODEL) -> None:
        self.server = server
        self.dir = session_dir
        self.capsys = capsys
        self.model = model

    def run(self, *argv: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        rc = main(list(argv))
        out, err = self.capsys.readouterr()
        return rc, out, err

    def send_argv(self, message: str, *extra: str) -> list[str]:
        """``send`` of this session, model and server (add ``--json`` to ``extra`` for JSON)."""
        return [
            "send",
            "--session-dir",
            str(self.dir),
            "--model",
            self.model,
            "--api-base",
            self.server.base_url,
            *extra,
            message,
        ]

    def send(self, message: str, *extra: str, expect: int = 0) -> dict[str, Any]:
        rc, out, err = self.run(*self.send_argv(message, "--json", *extra))
        assert rc == expect, f"send exited {rc}: {err}\n{out}"
        return json.loads(out)

    def status(self) -> dict[str, Any]:
        rc, out, err = self.run("status", "--session-dir", str(self.dir), "--json")
        assert rc == 0, err
        return json.loads(out)

    def search(self, query: str, *extra: str) -> dict[str, Any]:
        rc, out, err = self.run("search", "--session-dir", str(self.dir), "--json", *extra, query)
        assert rc == 0, err
        return json.loads(out)

    # files ------------------------------------------------------------------
    def lines(self, relative: str) -> list[dict[str, Any]]:
        path = self.dir / relative
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def manifest(self) -> dict[str, Any]:
        return yaml.safe_load((self.dir / "manifest.yaml").read_text())

    def effort(self, effort_id: str) -> dict[str, Any]:
        return next(e for e in self.manifest()["efforts"] if e["id"] == effort_id)

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        records = self.lines("events.jsonl")
        return [r for r in records if name is None or r["event"] == name]

    # requests ---------------------------------------------------------------
    def is_summary(self, body: dict[str, Any]) -> bool:
        return is_summary_request(body)

    def chat_requests(self) -> list[dict[str, Any]]:
        return [b for b in self.server.chat_requests() if not self.is_summary(b)]

    def summary_requests(self) -> list[dict[str, Any]]:
        return [b for b in self.server.chat_requests() if self.is_summary(b)]

    def last_context_text(self) -> str:
        """All message contents of the last chat request, joined (what the model saw)."""
        return "\n".join(str(m.get("content") or "") for m in self.chat_requests()[-1]["messages"])


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch) -> None:
    """Backoff between retries scales with this; tests of the waits themselves override it."""
    monkeypatch.setenv("CCM_RETRY_BASE_SECONDS", "0")


@pytest.fixture
def ccm(llm_server, tmp_path, capsys) -> CCM:
    return CCM(llm_server, tmp_path / "session", capsys)


def open_auth_bug(ccm) -> dict:
    """The model opens the "auth bug" effort on the user's first message about it."""
    ccm.server.push(
        tool_calls(call("open_effort", {"name": "auth bug"}), content="Let's dig into it."),
        text("Opened. What do the 401s look like?"),
    )
    return ccm.send("Let's work on the auth bug: users get 401 after an hour")


def conclude_auth_bug(
    ccm, summary: str = "Auth bug: 401s after one hour fixed by refreshing tokens in an axios interceptor."
) -> dict:
    """The model concludes the auth bug (the summary call answered with ``summary``)."""
    ccm.server.push(tool_calls(call("close_effort", {})), text(summary), text("Great, concluded the auth bug."))
    return ccm.send("The auth bug is done, thanks")
