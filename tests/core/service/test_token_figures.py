"""One count of an effort's tokens everywhere (issue 30: the sidebar, /status and ccm-tui status said
368, 373 and 387 for one effort). The sidebar showed what the effort takes in the context, /status the
raw log's count, and ``ccm-tui status`` — started without the TUI's --model — counted with another
tokenizer. Now every view gives the context's count, and a reader counts with the encoding the
session's writer counts with."""

from __future__ import annotations

import json
import re

import pytest

from ccm_tui.cli import main
from ccm_tui.config import Settings
from ccm_tui.core.engine.opening import OpenOptions
from ccm_tui.core.service.controller import SessionController
from ccm_tui.core.service.run_state import SendMessage, SlashCommand
from ccm_tui.core.text.tokens import TokenCounter
from tests.helpers.openai_server import text

LONG = "The pool runs out under load; pgbouncer pool_size 20, max_client_conn 400. " * 12


@pytest.fixture
async def controller(tmp_path, llm_server):
    settings = Settings(model="openai/gpt-4o", api_base=llm_server.base_url, token_budget=6_000)  # o200k
    made = SessionController(tmp_path / "s", settings, options=OpenOptions(retry_base=0))
    await made.open()
    yield made
    await made.close()


async def test_the_sidebar_status_and_ccm_tui_status_give_one_figure(controller, llm_server, capsys):
    await controller.command(SlashCommand("open", "postgres pool"))
    for i in range(3):
        llm_server.push(text(f"Reply {i}: " + LONG))
        await controller.run(SendMessage(f"question {i}: " + LONG))
    figures = (await controller.command(SlashCommand("status"))).result  # /status: status --json's data
    engine_view = controller.snapshot.status.get("postgres-pool")
    assert engine_view.context_tokens and engine_view.context_tokens != engine_view.raw_tokens  # (a head line)
    assert controller.snapshot.figures.efforts["postgres-pool"] == engine_view.context_tokens  # the sidebar's
    slash = (await controller.command(SlashCommand("status"))).reply
    assert f"postgres-pool — postgres pool  ({engine_view.context_tokens:,} tokens in context)" in slash
    capsys.readouterr()
    assert main(["status", "--session-dir", str(controller.session_dir)]) == 0  # no --model: another terminal
    printed = capsys.readouterr().out
    assert f"({engine_view.context_tokens:,} tokens in context)" in printed
    assert main(["status", "--session-dir", str(controller.session_dir), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = data["efforts"]
    assert row["context_tokens"] == engine_view.context_tokens and row["raw_tokens"] == engine_view.raw_tokens
    assert data["context"]["layers"] == figures["context"]["layers"]  # every layer, the same count
    layers = re.search(r"\[(.*)\]", printed.splitlines()[-1]).group(1)
    assert all(re.fullmatch(r"[a-z]+ \d{1,3}(,\d{3})*", part) for part in layers.split(", "))


def test_a_counter_takes_the_encoding_it_is_given():
    assert TokenCounter("openai/gpt-4o").encoding_name == "o200k_base"
    assert TokenCounter(encoding="o200k_base").encoding_name == "o200k_base"
    assert TokenCounter("openai/gpt-4o", encoding="nonsense").encoding_name == "o200k_base"
